package coremin

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
// name.
func (obj *Object) programs(coll *ebpf.CollectionSpec) ([]program, error) {
	var out []program
	for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
		p := program{name: name, spec: coll.Programs[name]}
		sites, err := obj.ProgramRelocations(p.spec)
		if err != nil {
			return nil, err
		}
		p.relos, p.insns, p.which = make([]*btf.CORERelocation, len(sites)), make([]int, len(sites)), make([]int32, len(sites))
		for k, s := range sites {
			p.relos[k], p.insns[k], p.which[k] = s.CORE, s.Index, s.at
			p.local = p.local || s.Kind == TypeIDLocal
		}
		out = append(out, p)
	}
	return out, nil
}

// ProgramRelocation is one instruction of a program, as cilium/ebpf
// loads it, that carries a CO-RE relocation.
type ProgramRelocation struct {
	Index int                 // the instruction's index in the program
	CORE  *btf.CORERelocation // cilium/ebpf's, as btf.CORERelocate takes it
	// Relocation is the same relocation as Load read it from .BTF.ext:
	// its kind, local type and access, which cilium/ebpf keeps
	// unexported.
	*Relocation
	at int32 // Relocation's index in Object.Relocations
}

// ProgramRelocations lists, in instruction order, the instructions of
// prog, one of obj's programs as cilium/ebpf loads it (subprograms
// linked in), that carry a CO-RE relocation, each tied to its
// relocation. It is how a caller walking cilium/ebpf's instructions
// learns what cilium/ebpf keeps unexported, without parsing the String
// of a btf.CORERelocation. An instruction that .BTF.ext does not account
// for is an error. The list is made once per program and shared by
// every call, so that a caller asking per kernel walks no instructions:
// do not modify it.
func (obj *Object) ProgramRelocations(prog *ebpf.ProgramSpec) ([]ProgramRelocation, error) {
	if l, ok := obj.memo.programs.Load(prog); ok {
		return l.([]ProgramRelocation), nil
	}
	out, err := obj.walkProgram(prog)
	if err != nil {
		return nil, err
	}
	obj.memo.programs.Store(prog, out)
	return out, nil
}

// siteIndex finds a relocation by function and offset.
type siteIndex struct {
	sites  map[siteKey]int32  // Object.Relocations index
	byName map[string][]int32 // Object.Functions indices
}

type siteKey struct {
	fn  int32
	off uint32
}

func (obj *Object) newSiteIndex() *siteIndex {
	ix := &siteIndex{sites: make(map[siteKey]int32, len(obj.Sites)), byName: map[string][]int32{}}
	for _, s := range obj.Sites {
		ix.sites[siteKey{s.Function, s.InsnOff}] = s.Relocation
	}
	for f, fn := range obj.Functions {
		ix.byName[fn.Name] = append(ix.byName[fn.Name], int32(f))
	}
	return ix
}

// walkProgram lists the relocated instructions of prog in order, each
// tied to .BTF.ext's record, which is found by the instruction's
// function symbol and its offset from the symbol, as cilium/ebpf assigns
// records to instructions.
func (obj *Object) walkProgram(prog *ebpf.ProgramSpec) ([]ProgramRelocation, error) {
	ix := obj.memo.index()
	var (
		out   []ProgramRelocation
		fns   []int32 // the functions named by the last symbol
		start asm.RawInstructionOffset
		sym   string
	)
	for it := prog.Instructions.Iterate(); it.Next(); {
		if s := it.Ins.Symbol(); s != "" {
			fns, start, sym = ix.byName[s], it.Offset, s
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
			if got, ok := ix.sites[siteKey{f, uint32(at)}]; ok {
				if r >= 0 && got != r {
					return nil, fmt.Errorf("%s: program %s: instruction %d: function %s is in several sections", obj.Path, prog.Name, it.Index, sym)
				}
				r = got
			}
		}
		if r < 0 {
			return nil, fmt.Errorf("%s: program %s: instruction %d (%s+%d): CO-RE relocation without a .BTF.ext record", obj.Path, prog.Name, it.Index, sym, off)
		}
		out = append(out, ProgramRelocation{it.Index, relo, &obj.Relocations[r], r})
	}
	return out, nil
}
