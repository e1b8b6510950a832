package rawbtf

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// BenchmarkParse is the per-kernel floor: the one linear pass.
func BenchmarkParse(b *testing.B) {
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	b.SetBytes(int64(len(k.BTF)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(k.BTF, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookupEssentialNames finds the candidates of 50 names, the
// order of a real agent's relocated types.
func BenchmarkLookupEssentialNames(b *testing.B) {
	s, names := spreadNames(b, 50, 997)
	b.ReportAllocs()
	for b.Loop() {
		if len(s.LookupEssentialNames(names)) == 0 {
			b.Fatal("nothing found")
		}
	}
}

// BenchmarkScanEssentialNames is the pass over a kernel's type names that
// LookupEssentialNames makes for names it was not asked before: once per
// kernel in a generate run.
func BenchmarkScanEssentialNames(b *testing.B) {
	s, names := spreadNames(b, 100, 487)
	for b.Loop() {
		if len(s.scanEssentialNames(names)) == 0 {
			b.Fatal("nothing found")
		}
	}
}

// spreadNames parses 6.1.0-47-amd64 and picks n essential names of its
// types, one every step type IDs or so.
func spreadNames(b *testing.B, n int, step TypeID) (*Spec, []string) {
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	s, err := Parse(k.BTF, nil)
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for id := TypeID(1); len(names) < n; id += step {
		t, _ := s.Type(id)
		if t.Name != "" {
			names = append(names, EssentialName(t.Name))
		}
	}
	return s, names
}

// BenchmarkNameIndex builds the full essential-name index.
func BenchmarkNameIndex(b *testing.B) {
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(k.BTF, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.buildNames()
	}
}

// BenchmarkCiliumLoadSpec is what the package is measured against:
// cilium/ebpf v0.22's btf.LoadSpecFromReader on the same kernel, which
// decodes types lazily but indexes and copies more up front.
func BenchmarkCiliumLoadSpec(b *testing.B) {
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	b.SetBytes(int64(len(k.BTF)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCiliumDecodeAll loads the spec and decodes every type, the
// cost of walking the whole kernel through cilium/ebpf's Type graph.
func BenchmarkCiliumDecodeAll(b *testing.B) {
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	b.SetBytes(int64(len(k.BTF)))
	b.ReportAllocs()
	for b.Loop() {
		spec, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF))
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range spec.All() {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
