package corpus

import (
	"encoding/binary"
	"hash/maphash"
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestTypesDigest: the digest verify mode compares is blind to what
// pahole varies between runs (FUNC records, their prototypes and decl
// tags, and so every type ID after them), and sees every change a forger
// could make to the other types.
func TestTypesDigest(t *testing.T) {
	intT := rawbtf.Record{Kind: rawbtf.KindInt, Name: "int", SizeType: 4, Int: rawbtf.IntEnc{Encoding: rawbtf.IntSigned, Bits: 32}}
	task := func(pidOffset uint32) rawbtf.Record {
		return rawbtf.Record{Kind: rawbtf.KindStruct, Name: "task_struct", SizeType: 16, Members: []rawbtf.Member{
			{Name: "pid", Type: 1, BitOffset: pidOffset}, {Name: "parent", Type: 3, BitOffset: 64},
		}}
	}
	ptr := rawbtf.Record{Kind: rawbtf.KindPtr, SizeType: 2}
	proto := rawbtf.Record{Kind: rawbtf.KindFuncProto, SizeType: 1, Params: []rawbtf.Param{{Name: "t", Type: 3}}}
	fn := func(name string, proto rawbtf.TypeID) rawbtf.Record {
		return rawbtf.Record{Kind: rawbtf.KindFunc, Name: name, SizeType: uint32(proto)}
	}
	tag := func(fn rawbtf.TypeID) rawbtf.Record {
		return rawbtf.Record{Kind: rawbtf.KindDeclTag, Name: "bpf_kfunc", SizeType: uint32(fn), ComponentIdx: -1}
	}
	blob := func(recs ...rawbtf.Record) []byte {
		e := rawbtf.NewEncoder(binary.LittleEndian, nil)
		for _, r := range recs {
			if _, err := e.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		return e.Bytes()
	}
	seed := maphash.MakeSeed()
	digest := func(raw []byte) [32]byte {
		spec, err := rawbtf.Parse(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		return newBTFDigester(spec, nil, seed).digest()
	}
	ref := digest(blob(intT, task(0), ptr, proto, fn("task_pid", 4), tag(5)))
	for _, c := range []struct {
		name string
		raw  []byte
		same bool
	}{
		{"no FUNC", blob(intT, task(0), ptr), true},
		{"another FUNC set", blob(intT, task(0), ptr, proto, fn("other", 4), fn("more", 4)), true},
		{"FUNCs first, renumbered", func() []byte {
			p := proto
			p.SizeType, p.Params = 3, []rawbtf.Param{{Name: "t", Type: 5}}
			tk := task(0)
			tk.Members[0].Type, tk.Members[1].Type = 3, 5
			return blob(p, fn("a", 1), intT, tk, rawbtf.Record{Kind: rawbtf.KindPtr, SizeType: 4}, fn("b", 1), tag(6))
		}(), true},
		{"a member moved", blob(intT, task(32), ptr), false},
		{"a member of another type", func() []byte { tk := task(0); tk.Members[0].Type = 3; return blob(intT, tk, ptr) }(), false},
		{"a struct renamed", func() []byte { tk := task(0); tk.Name = "task"; return blob(intT, tk, ptr) }(), false},
		{"a type more", blob(intT, task(0), ptr, rawbtf.Record{Kind: rawbtf.KindFloat, Name: "double", SizeType: 8}), false},
	} {
		if got := digest(c.raw) == ref; got != c.same {
			t.Errorf("%s: same digest %v, want %v", c.name, got, c.same)
		}
	}
}
