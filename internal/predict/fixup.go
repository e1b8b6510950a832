package predict

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/ciliumcore"
	"github.com/btfembed/btfembed/internal/coremin"
)

// relocated is a program after cilium/ebpf's CO-RE fixups.
type relocated struct {
	insns asm.Instructions
	// poison describes, by instruction index, each poisoned instruction
	// by its relocation ("byte_off task_struct.mm_cid").
	poison map[int]string
	// ids is the kernel type ID each target_type_id relocation wrote, by
	// instruction index.
	ids map[int]uint64
	// byteOff marks, by instruction index, the instructions a byte_off
	// relocation fixed up; nil without any. A slice, not a map: a big
	// object fixes up thousands per program and kernel.
	byteOff []bool
}

// relocate applies the fixups cilium/ebpf computes for targets to a copy
// of the program's instructions, as its loader does (linker.go,
// applyRelocations): one btf.CORERelocate call for all the program's
// relocations, then COREFixup.Apply on each instruction. sites are the
// program's relocated instructions (coremin.Object.ProgramRelocations),
// whose kind, type and access cilium/ebpf keeps unexported. typeIDs, if
// not nil, replaces the target_type_id IDs (see Options.KernelTypeIDs).
// An error is what cilium/ebpf's loader would fail with; refused says it
// is CORERelocate's, which depends on the relocations and the targets
// only, not an instruction's. given, if not nil, gives the fixups or that
// error (see Options.Fixups). The copy is made in *scratch, which keeps
// its memory for the next program: the relocated instructions are valid
// until the next relocate with the same scratch. A fresh copy per
// program and kernel was a twentieth of a generate run with the big test
// object.
func relocate(prog *ebpf.ProgramSpec, obj *coremin.Object, sites []coremin.ProgramRelocation, targets []*btf.Spec, typeIDs map[int]uint64, given func() ([]btf.COREFixup, error), scratch *asm.Instructions) (_ relocated, refused bool, _ error) {
	*scratch = append((*scratch)[:0], prog.Instructions...)
	r := relocated{insns: *scratch, poison: map[int]string{}}
	if len(sites) == 0 {
		return r, false, nil
	}
	var (
		fixups []btf.COREFixup
		err    error
	)
	if given != nil {
		fixups, err = given()
	} else if fixups, err = ciliumcore.Relocate(prog, coreOf(sites), targets); err != nil {
		err = relocationErrors(prog, sites, targets, err)
	}
	if err != nil {
		return relocated{}, true, err
	}
	if len(fixups) != len(sites) {
		return relocated{}, false, fmt.Errorf("%d fixups for %d CO-RE relocations", len(fixups), len(sites))
	}
	for i, f := range fixups {
		site := sites[i]
		ins := &r.insns[site.Index]
		if err := f.Apply(ins); err != nil {
			return relocated{}, false, fmt.Errorf("fixup for %s: %w", obj.Describe(site.Relocation), err)
		}
		switch {
		case isPoison(ins):
			r.poison[site.Index] = obj.Describe(site.Relocation)
		case site.Kind == coremin.TypeIDTarget:
			if id, ok := typeIDs[site.Index]; ok {
				ins.Constant = int64(id)
			}
			if r.ids == nil {
				r.ids = map[int]uint64{}
			}
			r.ids[site.Index] = uint64(ins.Constant)
		case site.Kind == coremin.FieldByteOffset:
			if r.byteOff == nil {
				r.byteOff = make([]bool, len(r.insns))
			}
			r.byteOff[site.Index] = true
		}
	}
	return r, false, nil
}

// coreOf is cilium/ebpf's relocation of each site.
func coreOf(sites []coremin.ProgramRelocation) []*btf.CORERelocation {
	relos := make([]*btf.CORERelocation, len(sites))
	for i, s := range sites {
		relos[i] = s.CORE
	}
	return relos
}

// relocationErrors names every local type whose relocations cilium/ebpf
// refuses. CORERelocate stops at the first, and which one is first
// depends on map order (it relocates per local type); relocating each
// local type's relocations alone, in type ID order, gives every error,
// in the same order on every run.
func relocationErrors(prog *ebpf.ProgramSpec, sites []coremin.ProgramRelocation, targets []*btf.Spec, first error) error {
	byType := map[btf.TypeID][]*btf.CORERelocation{}
	for _, s := range sites {
		byType[s.TypeID] = append(byType[s.TypeID], s.CORE)
	}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(byType)) {
		if _, err := ciliumcore.Relocate(prog, byType[id], targets); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return first
	}
	return errors.Join(errs...)
}

// isPoison recognizes the two instructions COREFixup.Apply writes in
// place of one it cannot relocate.
func isPoison(ins *asm.Instruction) bool {
	if ins.Constant != btf.COREBadRelocationSentinel {
		return false
	}
	if ins.OpCode.IsDWordLoad() {
		return ins.Dst == asm.R10 && ins.Src == asm.R0
	}
	return ins.IsBuiltinCall()
}
