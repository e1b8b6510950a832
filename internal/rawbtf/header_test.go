package rawbtf

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// tiny is a small valid blob: int, pointer to it, struct with a bitfield.
func tiny(t testing.TB, bo binary.ByteOrder) []byte {
	t.Helper()
	e := NewEncoder(bo, nil)
	for _, r := range []Record{
		{Kind: KindInt, Name: "int", SizeType: 4, Int: IntEnc{Encoding: IntSigned, Bits: 32}},
		{Kind: KindPtr, SizeType: 1},
		{Kind: KindStruct, Name: "s", SizeType: 16, KindFlag: true, Members: []Member{
			{Name: "p", Type: 2}, {Name: "b", Type: 1, BitOffset: 64, BitfieldSize: 3},
		}},
	} {
		if _, err := e.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	return e.Bytes()
}

func TestParseErrors(t *testing.T) {
	good := tiny(t, binary.LittleEndian)
	mut := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	le := binary.LittleEndian
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "too short", nil},
		{"magic", "not BTF", mut(func(b []byte) []byte { b[0] = 0; return b })},
		{"version", "version 2", mut(func(b []byte) []byte { b[2] = 2; return b })},
		{"short header", "shorter than 24", mut(func(b []byte) []byte { le.PutUint32(b[4:], 16); return b })},
		{"truncated", "past the", good[:len(good)-3]},
		{"unaligned types", "not 4-byte aligned", mut(func(b []byte) []byte { le.PutUint32(b[8:], 1); return b })},
		{"strings not terminated", "not NUL-terminated", mut(func(b []byte) []byte { b[len(b)-1] = 'x'; return b })},
		{"bad name", "name offset", mut(func(b []byte) []byte { le.PutUint32(b[24:], 1000); return b })},
		{"bad ref", "past the last type", mut(func(b []byte) []byte { le.PutUint32(b[24+16+8:], 9); return b })},
		{"unknown kind", "unknown kind 99", mut(func(b []byte) []byte { b[24+7] = 99; return b })},
		{"overrun", "overruns", mut(func(b []byte) []byte { b[24+16+12+4] = 200; return b })},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse: %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := Parse([]byte("\x7fELF...."), nil); !errors.Is(err, ErrNotBTF) {
		t.Fatalf("ELF: %v, want ErrNotBTF", err)
	}
}

// TestLayoutHeader builds the 32-byte header newer libbpf writes, with a
// layout section, and a record of a kind this package does not know.
func TestLayoutHeader(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		classic := tiny(t, bo)
		h, _, err := ParseHeader(classic)
		if err != nil {
			t.Fatal(err)
		}
		types := slices.Clone(classic[24 : 24+h.TypeLen])
		// Kind 25, unknown here: 12-byte common part, 4 fixed bytes, 2 x 8.
		unknown := make([]byte, 12+4+16)
		bo.PutUint32(unknown[4:], 25<<24|2)
		types = append(types, unknown...)
		layouts := make([]byte, 4*26)
		for k, l := range knownLayouts {
			layouts[4*k], layouts[4*k+1] = l.info, l.elem
		}
		layouts[4*25], layouts[4*25+1] = 4, 8
		strs := classic[24+h.StrOff:]

		blob := make([]byte, 32)
		bo.PutUint16(blob, Magic)
		blob[2] = 1
		bo.PutUint32(blob[4:], 32)
		bo.PutUint32(blob[8:], 0)
		bo.PutUint32(blob[12:], uint32(len(types)))
		bo.PutUint32(blob[16:], uint32(len(types)+len(layouts)))
		bo.PutUint32(blob[20:], uint32(len(strs)))
		bo.PutUint32(blob[24:], uint32(len(types)))
		bo.PutUint32(blob[28:], uint32(len(layouts)))
		blob = append(append(append(blob, types...), layouts...), strs...)

		s, err := Parse(blob, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.NextID() != 5 {
			t.Fatalf("NextID %d, want 5", s.NextID())
		}
		typ, _ := s.Type(4)
		if typ.Kind != 25 || typ.Vlen != 2 {
			t.Fatalf("unknown-kind record read as %v vlen %d", typ.Kind, typ.Vlen)
		}
		st, _ := s.Type(3)
		if m := st.Member(1); m.Name != "b" || m.BitOffset != 64 || m.BitfieldSize != 3 {
			t.Fatalf("member after layout parse: %+v", m)
		}
		if h, _, _ := ParseHeader(blob); h.Size() != len(blob) {
			t.Fatalf("Size %d, blob %d", h.Size(), len(blob))
		}
		// Without a layout the unknown kind cannot be skipped.
		bo.PutUint32(blob[28:], 0)
		if _, err := Parse(blob, nil); err == nil || !strings.Contains(err.Error(), "unknown kind 25") {
			t.Fatalf("no layout: %v", err)
		}
	}
}

func TestTypesByEssentialName(t *testing.T) {
	e := NewEncoder(binary.LittleEndian, nil)
	for _, name := range []string{"task_struct", "task_struct___old", "task", "___x", "a___b___c", "task_struct"} {
		if _, err := e.Add(Record{Kind: KindStruct, Name: name, SizeType: 8}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Parse(e.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]TypeID{
		"task_struct": {1, 2, 6},
		"task":        {3},
		"___x":        {4},
		"a___b":       {5},
		"a":           nil,
		"missing":     nil,
	} {
		if got := s.TypesByEssentialName(name); !slices.Equal(got, want) {
			t.Errorf("TypesByEssentialName(%q) = %v, want %v", name, got, want)
		}
	}
	if got := EssentialName("a___b___c"); got != "a___b" {
		t.Errorf("EssentialName = %q", got)
	}
}

// TestLookupEssentialNames checks the batch lookup against the index on a
// real kernel, for names with one, several, flavoured and no candidates.
func TestLookupEssentialNames(t *testing.T) {
	s, err := Parse(kerneltest.Corpus(t)[0].BTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"task_struct", "pt_regs", "sk_buff", "irq_info", "elf_thread_core_info", "no_such_type", "pid_t", "pid_type"}
	// Asked in three steps, so that later calls are answered partly from
	// what earlier ones found: a subset, then a set that overlaps it,
	// then all of them again.
	for _, ask := range [][]string{names[2:5], names[4:], names} {
		got := s.LookupEssentialNames(ask)
		for _, n := range ask {
			if want := s.TypesByEssentialName(n); !slices.Equal(got[n], want) {
				t.Errorf("%s: batch %v, index %v", n, got[n], want)
			}
		}
		if _, ok := got["no_such_type"]; ok {
			t.Error("a name without types is in the result")
		}
		for n := range got {
			if !slices.Contains(ask, n) {
				t.Errorf("%s is in the result but was not asked for", n)
			}
		}
	}
	if len(s.looked) != len(names) {
		t.Errorf("the Spec remembers %d names, want the %d asked", len(s.looked), len(names))
	}
}
