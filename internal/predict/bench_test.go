package predict

import (
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// BenchmarkCollection predicts every program of the testdata objects on
// one kernel, as the generator does per kernel.
func BenchmarkCollection(b *testing.B) {
	paths, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*-el.o"))
	if err != nil {
		b.Fatal(err)
	}
	var (
		colls []*ebpf.CollectionSpec
		relos []*corereloc.Object
	)
	for _, p := range paths {
		coll, obj := object(b, p)
		colls, relos = append(colls, coll), append(relos, obj)
	}
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	targets := []*btf.Spec{kernelSpec(b, k)}
	opts := &Options{Release: k.Release}
	b.ResetTimer()
	for b.Loop() {
		for i, coll := range colls {
			Collection(paths[i], coll, relos[i], k.Name, targets, opts)
		}
	}
}
