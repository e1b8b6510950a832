package rawbtf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// reencode writes every type of s through an Encoder in byte order bo.
func reencode(t *testing.T, s *Spec, base *Spec, bo binary.ByteOrder) []byte {
	t.Helper()
	e := NewEncoder(bo, base)
	for id := s.FirstID(); id < s.NextID(); id++ {
		typ, err := s.Type(id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Add(typ.Record())
		if err != nil {
			t.Fatal(err)
		}
		if got != id {
			t.Fatalf("Add returned ID %d for type %d", got, id)
		}
	}
	return e.Bytes()
}

func sameRecords(t *testing.T, a, b *Spec) {
	t.Helper()
	if a.NextID() != b.NextID() || a.FirstID() != b.FirstID() {
		t.Fatalf("IDs %d..%d vs %d..%d", a.FirstID(), a.NextID(), b.FirstID(), b.NextID())
	}
	for id := a.FirstID(); id < a.NextID(); id++ {
		x, _ := a.Type(id)
		y, _ := b.Type(id)
		if rx, ry := x.Record(), y.Record(); !reflect.DeepEqual(rx, ry) {
			t.Fatalf("type %d: %+v != %+v", id, rx, ry)
		}
	}
}

// TestRoundTrip re-encodes whole kernels, in both byte orders, and checks
// that every record survives and that cilium/ebpf reads the result.
func TestRoundTrip(t *testing.T) {
	k := kerneltest.Corpus(t)[0]
	s, err := Parse(k.BTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(bo.String(), func(t *testing.T) {
			out := reencode(t, s, nil, bo)
			back, err := Parse(out, nil)
			if err != nil {
				t.Fatal(err)
			}
			if back.ByteOrder() != bo {
				t.Fatalf("byte order %v, want %v", back.ByteOrder(), bo)
			}
			sameRecords(t, s, back)
			spec, err := btf.LoadSpecFromReader(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := spec.AnyTypeByName("task_struct"); err != nil {
				t.Fatal(err)
			}
			if bo == binary.LittleEndian && len(out) > len(k.BTF) {
				t.Errorf("re-encoded kernel is %d bytes, the original %d: strings not deduplicated?", len(out), len(k.BTF))
			}
		})
	}
}

// TestSplit parses pahole's split BTF for btf_testmod over its distilled
// base, re-encodes it as split BTF and checks IDs, names and cilium/ebpf's
// reading of the result.
func TestSplit(t *testing.T) {
	dir := kerneltest.CiliumTestdata(t)
	baseRaw, err := os.ReadFile(filepath.Join(dir, "btf_testmod.btf.base"))
	if err != nil {
		t.Fatal(err)
	}
	splitRaw, err := os.ReadFile(filepath.Join(dir, "btf_testmod.btf"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := Parse(baseRaw, nil)
	if err != nil {
		t.Fatal(err)
	}
	split, err := Parse(splitRaw, base)
	if err != nil {
		t.Fatal(err)
	}
	if split.FirstID() != base.NextID() {
		t.Fatalf("split starts at %d, base ends before %d", split.FirstID(), base.NextID())
	}
	if _, err := Parse(splitRaw, nil); err == nil {
		t.Fatal("split BTF parsed without its base")
	}

	out := reencode(t, split, base, binary.LittleEndian)
	back, err := Parse(out, base)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, split, back)
	if len(out) > len(splitRaw) {
		t.Errorf("re-encoded split BTF is %d bytes, pahole's %d: base strings copied?", len(out), len(splitRaw))
	}

	baseSpec, err := btf.LoadSpecFromReader(bytes.NewReader(baseRaw))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(out), baseSpec)
	if err != nil {
		t.Fatal(err)
	}
	for id := split.FirstID(); id < split.NextID(); id++ {
		want, _ := split.Type(id)
		got, err := spec.TypeByID(id)
		if err != nil {
			t.Fatal(err)
		}
		if want.Kind != KindDeclTag && got.TypeName() != want.Name {
			t.Fatalf("type %d: cilium/ebpf reads name %q, want %q", id, got.TypeName(), want.Name)
		}
	}
}

// TestEncodeRejects covers records the format cannot hold.
func TestEncodeRejects(t *testing.T) {
	for _, r := range []Record{
		{Kind: KindVoid},
		{Kind: Kind(numKnownKinds)},
		{Kind: KindStruct, Name: "s", Members: []Member{{Name: "b", BitfieldSize: 3}}},
		{Kind: KindStruct, Name: "s", KindFlag: true, Members: []Member{{Name: "b", BitOffset: 1 << 24}}},
		{Kind: KindEnum, Name: "e", Values: make([]EnumValue, 0x10000)},
	} {
		if _, err := NewEncoder(binary.LittleEndian, nil).Add(r); err == nil {
			t.Errorf("Add(%v %q) succeeded", r.Kind, r.Name)
		}
	}
}
