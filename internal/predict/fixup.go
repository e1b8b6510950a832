package predict

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/ciliumcore"
)

// relocate applies the fixups cilium/ebpf computes for targets to a copy
// of the program's instructions, as its loader does (linker.go,
// applyRelocations): one btf.CORERelocate call for all the program's
// relocations, then COREFixup.Apply on each instruction. It returns the
// relocated instructions, for each poisoned instruction its relocation
// described by name, and the kernel type ID every target_type_id
// relocation wrote, by instruction index. typeIDs, if not nil, replaces
// those IDs (see Options.KernelTypeIDs). An error is what cilium/ebpf's
// loader would fail with; refused says it is CORERelocate's, which
// depends on the relocations and the targets only, not an instruction's.
// given, if not nil, gives the fixups (see Options.Fixups).
func relocate(prog *ebpf.ProgramSpec, local *btf.Spec, targets []*btf.Spec, typeIDs map[int]uint64, given func() ([]btf.COREFixup, error)) (_ asm.Instructions, _ map[int]string, _ map[int]uint64, refused bool, _ error) {
	insns := prog.Copy().Instructions
	relos, at := ciliumcore.Relocations(insns)
	poisoned := map[int]string{}
	if len(relos) == 0 {
		return insns, poisoned, nil, false, nil
	}
	var (
		fixups []btf.COREFixup
		err    error
	)
	if given != nil {
		fixups, err = given()
	} else if fixups, err = ciliumcore.Relocate(prog, relos, targets); err != nil {
		err = relocationErrors(prog, relos, targets, err)
	}
	if err != nil {
		return nil, nil, nil, true, err
	}
	if len(fixups) != len(relos) {
		return nil, nil, nil, false, fmt.Errorf("%d fixups for %d CO-RE relocations", len(fixups), len(relos))
	}
	var ids map[int]uint64
	for i, f := range fixups {
		ins := &insns[at[i]]
		if err := f.Apply(ins); err != nil {
			return nil, nil, nil, false, fmt.Errorf("fixup for %s: %w", describe(relos[i], local), err)
		}
		switch {
		case isPoison(ins):
			poisoned[at[i]] = describe(relos[i], local)
		case reloKind(relos[i]) == "target_type_id":
			if id, ok := typeIDs[at[i]]; ok {
				ins.Constant = int64(id)
			}
			if ids == nil {
				ids = map[int]uint64{}
			}
			ids[at[i]] = uint64(ins.Constant)
		}
	}
	return insns, poisoned, ids, false, nil
}

// reloKind is a relocation's kind as cilium/ebpf spells it
// ("target_type_id"), "" if its String has another form.
func reloKind(relo *btf.CORERelocation) string {
	if m := reloString.FindStringSubmatch(relo.String()); m != nil {
		return m[1]
	}
	return ""
}

// relocationErrors names every local type whose relocations cilium/ebpf
// refuses. CORERelocate stops at the first, and which one is first
// depends on map order (it relocates per local type); relocating each
// local type's relocations alone, in type ID order, gives every error,
// in the same order on every run.
func relocationErrors(prog *ebpf.ProgramSpec, relos []*btf.CORERelocation, targets []*btf.Spec, first error) error {
	byType := map[uint64][]*btf.CORERelocation{}
	for _, r := range relos {
		id := uint64(0)
		if m := reloString.FindStringSubmatch(r.String()); m != nil {
			id, _ = strconv.ParseUint(m[3], 10, 32)
		}
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
