package rawbtf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// insideBase is standalone BTF with a name of each kind Parse checks:
// 1 int, 2 struct task_struct {pid}, 3 enum state {RUNNING}, 4
// func_proto (arg), 5 enum64 wide {BIG}.
func insideBase(tb testing.TB) []byte {
	tb.Helper()
	e := NewEncoder(binary.LittleEndian, nil)
	for _, r := range []Record{
		{Kind: KindInt, Name: "int", SizeType: 4, Int: IntEnc{Encoding: IntSigned, Bits: 32}},
		{Kind: KindStruct, Name: "task_struct", SizeType: 4, Members: []Member{{Name: "pid", Type: 1}}},
		{Kind: KindEnum, Name: "state", SizeType: 4, Values: []EnumValue{{Name: "RUNNING", Value: 1}}},
		{Kind: KindFuncProto, SizeType: 1, Params: []Param{{Name: "arg", Type: 1}}},
		{Kind: KindEnum64, Name: "wide", SizeType: 8, Values: []EnumValue{{Name: "BIG", Value: 1 << 40}}},
	} {
		if _, err := e.Add(r); err != nil {
			tb.Fatal(err)
		}
	}
	return e.Bytes()
}

// pointInside returns data with word `word` of type id's record set to
// the offset of the string "task_struct" plus one ("ask_struct"), the
// string looked up in base when base is not nil.
func pointInside(tb testing.TB, data []byte, base *Spec, id TypeID, word int) []byte {
	tb.Helper()
	s, err := Parse(data, base)
	if err != nil {
		tb.Fatal(err)
	}
	strs := s
	if base != nil {
		strs = base
	}
	off, ok := strs.findString("task_struct")
	if !ok {
		tb.Fatal("no string task_struct")
	}
	out := slices.Clone(data)
	at := int(s.hdr.HdrLen+s.hdr.TypeOff+s.offsets[id-s.firstID]) + 4*word
	binary.LittleEndian.PutUint32(out[at:], off+1)
	return out
}

// TestParseNameInsideString gives Parse a name offset that points inside
// a string, for a type's name and for each kind of member name: BTF the
// kernel and libbpf would load, but that cilium/ebpf, which loads the
// embedded BTF, cannot decode. Parse must refuse it, naming the type and
// the member, so that a corpus reports the file instead of the oracle
// blaming btfembed when the full BTF fails and the minimized one does not.
func TestParseNameInsideString(t *testing.T) {
	good := insideBase(t)
	if _, err := Parse(good, nil); err != nil {
		t.Fatal(err)
	}
	const inside = `points inside the string "task_struct", not at its start`
	for _, c := range []struct {
		name string
		id   TypeID
		word int // word of the record to point inside a string
		want string
	}{
		{"type name", 1, 0, "type 1: int: name offset"},
		{"member", 2, 3, "type 2: struct task_struct, member 0: name offset"},
		{"enum value", 3, 3, "type 3: enum state, value 0: name offset"},
		{"parameter", 4, 3, "type 4: func_proto, parameter 0: name offset"},
		{"enum64 value", 5, 3, "type 5: enum64 wide, value 0: name offset"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := pointInside(t, good, nil, c.id, c.word)
			_, err := Parse(bad, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), inside) {
				t.Fatalf("Parse: %v, want an error saying %q and %q", err, c.want, inside)
			}
			// Why it is refused: cilium/ebpf cannot decode the type.
			spec, err := btf.LoadSpecFromReader(bytes.NewReader(bad))
			if err == nil {
				_, err = spec.TypeByID(btf.TypeID(c.id))
			}
			if err == nil || !strings.Contains(err.Error(), "not the beginning of a string") {
				t.Fatalf("cilium/ebpf decodes type %d: %v, want its refusal", c.id, err)
			}
		})
	}

	t.Run("split over a base string", func(t *testing.T) {
		base, err := Parse(good, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := NewEncoder(binary.LittleEndian, base)
		id, err := e.Add(Record{Kind: KindStruct, Name: "module_thing", SizeType: 4, Members: []Member{{Name: "task_struct", Type: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		bad := pointInside(t, e.Bytes(), base, id, 3)
		_, err = Parse(bad, base)
		want := fmt.Sprintf("type %d: struct module_thing, member 0: name offset", id)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), inside) {
			t.Fatalf("Parse: %v, want an error saying %q and %q", err, want, inside)
		}
	})
}
