package distill_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// The distilled nvme module, committed so that fuzzing starts without
// loading kernels; TestDistilledGolden keeps it current.
const (
	seedBase  = "testdata/nvme-6.12.118+deb12-amd64.base.btf"
	seedSplit = "testdata/nvme-6.12.118+deb12-amd64.split.btf"
)

// seedPair is a real distilled pair: small, and its base is a valid
// standalone base to distill and relocate over.
func seedPair(f *testing.F) (base, split []byte) {
	f.Helper()
	base, err := os.ReadFile(seedBase)
	if err != nil {
		f.Fatal(err)
	}
	split, err = os.ReadFile(seedSplit)
	if err != nil {
		f.Fatal(err)
	}
	return base, split
}

// TestDistilledGolden compares Distill's output for nvme with the
// committed files (rewritten with -update).
func TestDistilledGolden(t *testing.T) {
	for _, m := range committedModules(t) {
		if m.name != "nvme" {
			continue
		}
		b, s := distillModule(t, m)
		for _, f := range []struct {
			path string
			got  []byte
		}{{seedBase, b.Raw()}, {seedSplit, s.Raw()}} {
			if *update {
				if err := os.WriteFile(f.path, f.got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.got, want) {
				t.Errorf("Distill output differs from %s (run with -update after checking the change)", f.path)
			}
		}
	}
}

// FuzzDistill distills arbitrary split BTF over an arbitrary base: errors
// are fine, panics are not, and what Distill returns must parse.
func FuzzDistill(f *testing.F) {
	base, split := seedPair(f)
	f.Add(base, split)
	f.Fuzz(func(t *testing.T, baseRaw, splitRaw []byte) {
		b, err := rawbtf.Parse(baseRaw, nil)
		if err != nil {
			return
		}
		s, err := rawbtf.Parse(splitRaw, b)
		if err != nil {
			return
		}
		db, ds, err := distill.DistillSpec(s)
		if err != nil {
			return
		}
		dist, err := rawbtf.Parse(db, nil)
		if err != nil {
			t.Fatalf("distilled base does not parse: %v", err)
		}
		if _, err := rawbtf.Parse(ds, dist); err != nil {
			t.Fatalf("distilled split does not parse: %v", err)
		}
	})
}

// FuzzRelocate relocates arbitrary split BTF over an arbitrary distilled
// base onto a real one: errors are fine, panics are not, and a result must
// parse over the new base.
func FuzzRelocate(f *testing.F) {
	base, split := seedPair(f)
	newBase, err := rawbtf.Parse(base, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base, split)
	f.Fuzz(func(t *testing.T, distRaw, splitRaw []byte) {
		dist, err := rawbtf.Parse(distRaw, nil)
		if err != nil {
			return
		}
		s, err := rawbtf.Parse(splitRaw, dist)
		if err != nil {
			return
		}
		out, err := distill.RelocateSpec(s, newBase, &btfrelocate.Options{LayoutCompatible: len(splitRaw)%2 == 0})
		if err != nil {
			return
		}
		if _, err := rawbtf.Parse(out, newBase); err != nil {
			t.Fatalf("relocated split does not parse: %v", err)
		}
	})
}
