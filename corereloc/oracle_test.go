package corereloc

import (
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// minimizeAndVerify minimizes target for objs and runs the oracle.
func minimizeAndVerify(t *testing.T, objPaths []string, raw *rawbtf.Spec, full *btf.Spec) (*Result, []byte) {
	t.Helper()
	res := matchObjects(t, objPaths, raw)
	minData, _, err := Minimize(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range verifyBlob(t, objPaths, full, minData) {
		t.Error(m)
	}
	bpftoolLoads(t, minData, nil)
	return res, minData
}

// TestOracleKernels: every test object against every kernel, one object
// at a time and all together.
func TestOracleKernels(t *testing.T) {
	objs := append(testObjects(t), ownObjects(t)...)
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			for _, obj := range objs {
				t.Run(filepath.Base(obj), func(t *testing.T) {
					minimizeAndVerify(t, []string{obj}, raw, full)
				})
			}
			t.Run("all", func(t *testing.T) {
				minimizeAndVerify(t, objs, raw, full)
			})
		})
	}
}

// TestOracleCilium runs cilium/ebpf's own CO-RE test objects against the
// target its tests use: the object's own BTF, relocs_read_tgt for
// relocs_read.
func TestOracleCilium(t *testing.T) {
	forCiliumObjects(t, []string{"relocs", "relocs_enum", "relocs_read", "tags"}, func(t *testing.T, obj string, raw *rawbtf.Spec, full *btf.Spec) {
		minimizeAndVerify(t, []string{obj}, raw, full)
	})
}

// TestOracleBig runs the big object (testdata/objects/big) on every
// kernel: each outcome of Match against cilium/ebpf's fixup on the full
// BTF, then the oracle on the minimized BTF. Its relocations repeat the
// same few hundred accesses across hundreds of programs, which Match
// computes once each.
func TestOracleBig(t *testing.T) {
	if testing.Short() {
		t.Skip("big object: seconds per kernel")
	}
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			compareWithCilium(t, []string{bigObject}, raw, full)
			minimizeAndVerify(t, []string{bigObject}, raw, full)
		})
	}
}
