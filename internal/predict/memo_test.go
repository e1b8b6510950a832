package predict

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestMemo predicts the testdata objects on the testdata kernels, then on
// 6.12's BTF under the first kernel's version (same version, other
// facts and fixups), then on a copy of the first kernel under another
// release of its version, with and without a Memo: the predictions are
// the same, and the copy takes every program's from the memo (it adds no
// entry).
func TestMemo(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*", "*-el.o"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*-el.o"))
	paths = append(paths, more...)
	kernels := kerneltest.Corpus(t)
	other := kerneltest.ByName(t, "6.12.118+deb12-amd64")
	other.Name, other.Release = other.Name+"+as-6.1", kernels[0].Release+"+other"
	kernels = append(kernels, other)
	cp := kernels[0]
	cp.Name, cp.Release = cp.Name+"+copy", cp.Release+"+copy"
	kernels = append(kernels, cp)
	for _, path := range paths {
		coll, relos := object(t, path)
		oracle, err := coremin.NewOracle([]*coremin.Object{relos})
		if err != nil {
			t.Fatal(err)
		}
		memo := NewMemo()
		entries := 0
		for i, k := range kernels {
			targets := []*btf.Spec{kernelSpec(t, k)}
			answers, err := oracle.Relocate(targets, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Release: k.Release, Kernel: NewKernel(targets, Kfuncs(coll)),
				Fixups: func(dst []btf.COREFixup, program string) ([]btf.COREFixup, error) {
					return answers.AppendFixups(dst, 0, program)
				}}
			want := Collection(path, coll, relos, k.Name, targets, &opts)
			opts.Memo = memo
			if got := Collection(path, coll, relos, k.Name, targets, &opts); !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %s: with the memo %+v, without %+v", filepath.Base(path), k.Name, got, want)
			}
			n := 0
			for _, es := range memo.seen {
				n += len(es)
			}
			if i == len(kernels)-1 && n != entries {
				t.Errorf("%s: the copy of %s added %d memo entries, want none", filepath.Base(path), kernels[0].Name, n-entries)
			}
			entries = n
		}
		if entries == 0 && len(coll.Programs) > 0 {
			t.Errorf("%s: nothing memoized", filepath.Base(path))
		}
	}
}
