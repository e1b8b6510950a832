package coremin

import (
	"encoding/binary"
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestLibbpfSearchSharedAnonymous: a target whose anonymous structs form
// a lattice, 30 levels of two anonymous members that both lead to the
// next level, before the member a relocation looks for. A depth-first
// search that forgot what it had searched would visit 2^30 paths; Match
// must come back, with the member found (cilium/ebpf finds a first,
// breadth first) and what it keeps bounded by the types there are.
func TestLibbpfSearchSharedAnonymous(t *testing.T) {
	const levels = 30
	enc := rawbtf.NewEncoder(binary.LittleEndian, nil)
	add := func(r rawbtf.Record) rawbtf.TypeID {
		t.Helper()
		id, err := enc.Add(r)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	intID := add(rawbtf.Record{Kind: rawbtf.KindInt, Name: "int", SizeType: 4, Int: rawbtf.IntEnc{Encoding: rawbtf.IntSigned, Bits: 32}})
	// Level i is ID first+i; the last level holds an int named x.
	first := enc.NextID()
	for i := range levels {
		next := first + rawbtf.TypeID(i) + 1
		members := []rawbtf.Member{{Type: next}, {Type: next}}
		if i == levels-1 {
			members = []rawbtf.Member{{Name: "x", Type: intID}}
		}
		add(rawbtf.Record{Kind: rawbtf.KindStruct, SizeType: 4, Members: members})
	}
	inner := add(rawbtf.Record{Kind: rawbtf.KindStruct, SizeType: 8, Members: []rawbtf.Member{
		{Name: "a", Type: intID}, {Name: "c", Type: intID, BitOffset: 32},
	}})
	add(rawbtf.Record{Kind: rawbtf.KindStruct, Name: "core_nesting", SizeType: 12, Members: []rawbtf.Member{
		{Type: first}, {Name: "a", Type: inner, BitOffset: 32},
	}})
	target, err := rawbtf.Parse(enc.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}

	res := matchObjects(t, []string{"testdata/patterns/nesting.o"}, target)
	obj := res.Objects[0]
	for j, s := range obj.Sites {
		if obj.Relocations[s.Relocation].Access == "0:0:0" {
			if o := res.Outcome(0, j); o.Status != Resolved || o.Target != 4 {
				t.Errorf("%v: %v %d, want resolved at 4", obj.SiteString(j), o.Status, o.Target)
			}
		}
	}
	if len(res.marks) > int(target.NextID()) {
		t.Errorf("%d types kept of %d", len(res.marks), target.NextID()-1)
	}
}
