package predict

import (
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
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
		relos []*coremin.Object
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

// BenchmarkCollectionBig predicts testdata/objects/big (360 programs,
// 33,857 CO-RE relocations) on one kernel.
func BenchmarkCollectionBig(b *testing.B) {
	path := filepath.Join(kerneltest.Dir(), "objects", "big", "big-el.o")
	coll, relos := object(b, path)
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	targets := []*btf.Spec{kernelSpec(b, k)}
	opts := &Options{Release: k.Release, Kernel: NewKernel(targets, Kfuncs(coll))}
	b.ResetTimer()
	for b.Loop() {
		Collection(path, coll, relos, k.Name, targets, opts)
	}
}

// BenchmarkNewKernel reads a kernel's facts from its full BTF, once per
// kernel in a generate run.
func BenchmarkNewKernel(b *testing.B) {
	k := kerneltest.ByName(b, "6.12.118+deb12-amd64")
	targets := []*btf.Spec{kernelSpec(b, k)}
	NewKernel(targets, nil) // cilium/ebpf's name index, which the oracle builds anyway
	b.ResetTimer()
	for b.Loop() {
		NewKernel(targets, []string{"bpf_rcu_read_lock", "bpf_rcu_read_unlock"})
	}
}
