package corereloc

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// program is a program as cilium/ebpf loads it (subprograms linked in),
// with each of its CO-RE relocations tied to the object's Relocations:
// their kind, local type and access come from Load's parse of .BTF.ext,
// never from cilium/ebpf's String of a relocation.
type program struct {
	name  string
	spec  *ebpf.ProgramSpec
	relos []*btf.CORERelocation // in instruction order
	insns []int                 // the instruction index of each
	which []int32               // the index in Object.Relocations of each
	// local says a relocation is local_type_id: cilium/ebpf answers it
	// by numbering local types in program order, so it is only asked
	// with the whole program.
	local bool
}

// programs lists the programs of coll, obj as cilium/ebpf loads it, by
// name. A relocated instruction is found in .BTF.ext by its function
// symbol and its offset from the symbol, as cilium/ebpf assigns records
// to instructions.
func (obj *Object) programs(coll *ebpf.CollectionSpec) ([]program, error) {
	type siteKey struct {
		fn  int32
		off uint32
	}
	sites := make(map[siteKey]int32, len(obj.Sites))
	for _, s := range obj.Sites {
		sites[siteKey{s.Function, s.InsnOff}] = s.Relocation
	}
	byName := map[string][]int32{}
	for f, fn := range obj.Functions {
		byName[fn.Name] = append(byName[fn.Name], int32(f))
	}
	var out []program
	for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
		p := program{name: name, spec: coll.Programs[name]}
		var (
			fns   []int32 // the functions named by the last symbol
			start asm.RawInstructionOffset
			sym   string
		)
		for it := p.spec.Instructions.Iterate(); it.Next(); {
			if s := it.Ins.Symbol(); s != "" {
				fns, start, sym = byName[s], it.Offset, s
			}
			relo := btf.CORERelocationMetadata(it.Ins)
			if relo == nil {
				continue
			}
			off := uint64(it.Offset-start) * asm.InstructionSize
			r := int32(-1)
			for _, f := range fns {
				at := uint64(obj.Functions[f].off) + off
				if at > 1<<32-1 {
					continue
				}
				if got, ok := sites[siteKey{f, uint32(at)}]; ok {
					if r >= 0 && got != r {
						return nil, fmt.Errorf("%s: program %s: instruction %d: function %s is in several sections", obj.Path, name, it.Index, sym)
					}
					r = got
				}
			}
			if r < 0 {
				return nil, fmt.Errorf("%s: program %s: instruction %d (%s+%d): CO-RE relocation without a .BTF.ext record", obj.Path, name, it.Index, sym, off)
			}
			p.relos = append(p.relos, relo)
			p.insns = append(p.insns, it.Index)
			p.which = append(p.which, r)
			p.local = p.local || obj.Relocations[r].Kind == TypeIDLocal
		}
		out = append(out, p)
	}
	return out, nil
}
