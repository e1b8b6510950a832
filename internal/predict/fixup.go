package predict

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/internal/ciliumcore"
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
// relocations, then COREFixup.Apply on each instruction. sites gives,
// by instruction index, the relocation obj (corereloc) read from .BTF.ext for
// it, which says its kind, type and access (cilium/ebpf keeps them
// unexported). typeIDs, if not nil, replaces the target_type_id IDs (see
// Options.KernelTypeIDs). An error is what cilium/ebpf's loader would
// fail with; refused says it is CORERelocate's, which depends on the
// relocations and the targets only, not an instruction's. given, if not
// nil, gives the fixups or that error (see Options.Fixups).
func relocate(prog *ebpf.ProgramSpec, obj *corereloc.Object, sites map[int]*corereloc.Relocation, targets []*btf.Spec, typeIDs map[int]uint64, given func() ([]btf.COREFixup, error)) (_ relocated, refused bool, _ error) {
	r := relocated{insns: prog.Copy().Instructions, poison: map[int]string{}}
	relos, at := ciliumcore.Relocations(r.insns)
	if len(relos) == 0 {
		return r, false, nil
	}
	var (
		fixups []btf.COREFixup
		err    error
	)
	if given != nil {
		fixups, err = given()
	} else if fixups, err = ciliumcore.Relocate(prog, relos, targets); err != nil {
		err = relocationErrors(prog, relos, at, sites, targets, err)
	}
	if err != nil {
		return relocated{}, true, err
	}
	if len(fixups) != len(relos) {
		return relocated{}, false, fmt.Errorf("%d fixups for %d CO-RE relocations", len(fixups), len(relos))
	}
	for i, f := range fixups {
		ins := &r.insns[at[i]]
		relo := sites[at[i]]
		if err := f.Apply(ins); err != nil {
			return relocated{}, false, fmt.Errorf("fixup for %s: %w", obj.Describe(relo), err)
		}
		switch {
		case isPoison(ins):
			r.poison[at[i]] = obj.Describe(relo)
		case relo.Kind == corereloc.TypeIDTarget:
			if id, ok := typeIDs[at[i]]; ok {
				ins.Constant = int64(id)
			}
			if r.ids == nil {
				r.ids = map[int]uint64{}
			}
			r.ids[at[i]] = uint64(ins.Constant)
		case relo.Kind == corereloc.FieldByteOffset:
			if r.byteOff == nil {
				r.byteOff = make([]bool, len(r.insns))
			}
			r.byteOff[at[i]] = true
		}
	}
	return r, false, nil
}

// relocationErrors names every local type whose relocations cilium/ebpf
// refuses. CORERelocate stops at the first, and which one is first
// depends on map order (it relocates per local type); relocating each
// local type's relocations alone, in type ID order, gives every error,
// in the same order on every run.
func relocationErrors(prog *ebpf.ProgramSpec, relos []*btf.CORERelocation, at []int, sites map[int]*corereloc.Relocation, targets []*btf.Spec, first error) error {
	byType := map[btf.TypeID][]*btf.CORERelocation{}
	for i, r := range relos {
		id := sites[at[i]].TypeID
		byType[id] = append(byType[id], r)
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
