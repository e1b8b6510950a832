package corereloc

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestMinimizeRechecksMismatches: testdata/voidptr.c's type_matches fails
// only because of what task_struct.mm points to. Without the recheck the
// minimized BTF points mm to void and the oracle sees the relocation
// succeed; with it, nothing changes.
func TestMinimizeRechecksMismatches(t *testing.T) {
	const obj = "testdata/voidptr-el.o"
	objs, err := Load(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kernels() {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			res, err := Match(objs, []*rawbtf.Spec{raw})
			if err != nil {
				t.Fatal(err)
			}
			verify := func(blob []byte) []Mismatch {
				min, err := btf.LoadSpecFromReader(bytes.NewReader(blob))
				if err != nil {
					t.Fatal(err)
				}
				ms, err := Verify([]string{obj}, []*btf.Spec{full}, []*btf.Spec{min})
				if err != nil {
					t.Fatal(err)
				}
				return ms
			}

			naive, err := build(res, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ms := verify(naive.blobs[0]); len(ms) == 0 {
				t.Error("without the recheck the oracle sees no difference: the test object no longer tests it")
			}
			blob, _, err := Minimize(res)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range verify(blob) {
				t.Error(m)
			}
		})
	}
}
