package ciliumcore

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// object loads a committed BPF object with CO-RE relocations.
func object(tb testing.TB) (*ebpf.CollectionSpec, *btf.Spec) {
	tb.Helper()
	path := filepath.Join("..", "..", "internal", "coremin", "testdata", "flexarray-el.o")
	coll, err := ebpf.LoadCollectionSpec(path)
	if err != nil {
		tb.Fatal(err)
	}
	spec, err := btf.LoadSpec(path)
	if err != nil {
		tb.Fatal(err)
	}
	return coll, spec
}

func TestRelocate(t *testing.T) {
	coll, spec := object(t)
	total := 0
	for name, prog := range coll.Programs {
		var relos []*btf.CORERelocation
		for i := range prog.Instructions {
			if r := btf.CORERelocationMetadata(&prog.Instructions[i]); r != nil {
				relos = append(relos, r)
			}
		}
		total += len(relos)
		if len(relos) == 0 {
			continue
		}
		// Against its own BTF every local type is its own candidate.
		fixups, err := Relocate(prog, relos, []*btf.Spec{spec})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(fixups) != len(relos) {
			t.Errorf("%s: %d fixups for %d relocations", name, len(fixups), len(relos))
		}
		// Without a byte order the host's stands in, as in cilium/ebpf's
		// loader, and cilium/ebpf tells it from the target's explicit one.
		p := prog.Copy()
		p.ByteOrder = nil
		if _, err := Relocate(p, relos, []*btf.Spec{spec}); err == nil || !strings.Contains(err.Error(), "NativeEndian") {
			t.Errorf("%s without byte order: error %v, want one naming NativeEndian", name, err)
		}
	}
	if total == 0 {
		t.Fatal("no CO-RE relocations found")
	}
}

func TestDescribeTypeID(t *testing.T) {
	_, spec := object(t)
	st, err := spec.AnyTypeByName("sk_buff")
	if err != nil {
		t.Fatal(err)
	}
	id, err := spec.TypeID(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, want string
		prefix   bool // want is what the description starts with
	}{
		{strconv.Itoa(int(id)), `*btf.Struct "sk_buff"`, false},
		{"x", "bad id x", false},
		{"4000000000", "id 4000000000: ", true},
	} {
		got := DescribeTypeID(spec, tc.id)
		if ok := got == tc.want || tc.prefix && strings.HasPrefix(got, tc.want); !ok {
			t.Errorf("DescribeTypeID(%s) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
