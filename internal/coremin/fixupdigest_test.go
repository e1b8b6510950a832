package coremin

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestFixupDigest: a kernel's digest is the same asked per program or
// once per relocation, and against its full or its minimized BTF; it
// differs where the fixups do: between the testdata's 6.1 and 6.12
// kernels, and on a minimized BTF with a type changed that the oracle
// rejects.
func TestFixupDigest(t *testing.T) {
	objPaths := append(testObjects(t), ownObjects(t)...)
	oracle, err := NewOracle(loadObjects(t, objPaths))
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, k := range kernels(t) {
		raw, full := kernelSpecs(t, k)
		whole, once := askBothWays(t, oracle, full, raw)
		d := whole.FixupDigest()
		if len(d) != 32 || once.FixupDigest() != d {
			t.Fatalf("%s: digest %s asked per program, %s once", k.name, d, once.FixupDigest())
		}
		blob, _, err := Minimize(matchObjects(t, objPaths, raw))
		if err != nil {
			t.Fatal(err)
		}
		minRaw, err := rawbtf.Parse(blob, nil)
		if err != nil {
			t.Fatal(err)
		}
		min, err := btf.LoadSpecFromReader(bytes.NewReader(blob))
		if err != nil {
			t.Fatal(err)
		}
		wholeMin, onceMin := askBothWays(t, oracle, min, minRaw)
		if wholeMin.FixupDigest() != d || onceMin.FixupDigest() != d {
			t.Errorf("%s: digest %s on the full BTF, %s on the minimized BTF", k.name, d, wholeMin.FixupDigest())
		}
		digests[k.name] = d
		t.Logf("%s: %s", k.name, d)

		rejected := 0
		for _, v := range corruptions(t, blob)[1:] {
			spec, err := btf.LoadSpecFromReader(bytes.NewReader(v))
			if err != nil {
				continue
			}
			vRaw, err := rawbtf.Parse(v, nil)
			if err != nil {
				t.Fatal(err)
			}
			wholeV, _ := askBothWays(t, oracle, spec, vRaw)
			if len(oracle.Verify(whole, wholeV)) == 0 {
				continue
			}
			if rejected++; wholeV.FixupDigest() == d {
				t.Fatalf("%s: a variant the oracle rejects has the kernel's digest", k.name)
			}
			if rejected == 20 {
				break
			}
		}
		if rejected == 0 {
			t.Errorf("%s: no variant rejected", k.name)
		}
	}
	if a, b := digests["6.1.0-47-amd64"], digests["6.12.118+deb12-amd64"]; a == "" || a == b {
		t.Errorf("6.1.0-47-amd64 and 6.12.118+deb12-amd64: digests %q and %q, want two", a, b)
	}
}
