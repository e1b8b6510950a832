package predict

import (
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestFeaturesFromTypes reads the features' markers from real kernels'
// types: on Debian's kernels (BTF of their own, and BTF pahole made from
// the DWARF of the 6.1 built without it) and the running kernel, every
// marker gives the answer the release rules gave; on the vendor-released
// kernel (Linux 6.1 as 4.18.0-305.el8), the opposite exactly where 4.18
// predates a feature 6.1 has: global data, read-only maps, global
// functions, ring buffers and bpf_loop (not lazy globals: 6.8).
func TestFeaturesFromTypes(t *testing.T) {
	kernels := map[string]func(*testing.T) kerneltest.Kernel{
		"5.10": func(t *testing.T) kerneltest.Kernel {
			return kerneltest.SharedArchive(t, "debian/11/x86_64/5.10.0-32-amd64")
		},
		"nobtf":   func(t *testing.T) kerneltest.Kernel { return noBTF(t) },
		"vendor":  func(t *testing.T) kerneltest.Kernel { return kerneltest.Vendor(t) },
		"running": func(t *testing.T) kerneltest.Kernel { return kerneltest.Running(t) },
	}
	for _, k := range kerneltest.Corpus(t) {
		kernels[k.Release] = func(*testing.T) kerneltest.Kernel { return k }
	}
	for name, kernel := range kernels {
		t.Run(name, func(t *testing.T) { checkFeatures(t, kernel(t)) })
	}
}

// checkFeatures compares what k's types show of each feature with what
// its release says.
func checkFeatures(t *testing.T, k kerneltest.Kernel) {
	facts := NewKernel([]*btf.Spec{kernelSpec(t, k)}, nil)
	v, ok := version(k.Release)
	if !ok {
		t.Fatalf("%s: release %q does not parse", k.Name, k.Release)
	}
	var differ []Feature
	for _, m := range markers {
		has, shown := facts.Features[m.feature]
		if m.typ == "" {
			if shown {
				t.Errorf("%s: %s has no marker, but the types show it", k.Name, m.feature)
			}
			continue
		}
		if !shown {
			t.Errorf("%s: the types lack %s, %s's marker", k.Name, m.typ, m.feature)
		}
		if has != (v >= m.version) {
			differ = append(differ, m.feature)
		}
	}
	var want []Feature
	if k.Release == kerneltest.VendorRelease {
		want = []Feature{FeatureGlobalData, FeatureReadOnlyMaps, FeatureGlobalFuncs, FeatureRingbuf, FeatureLoop}
	}
	if !slices.Equal(differ, want) {
		t.Errorf("%s (%v): types and release differ on %q, want %q", k.Name, facts.Features, differ, want)
	}
}

// TestUnparsableRelease: where the types decide every feature, the
// predictions of the feature objects are the same, reasons and all,
// whatever the release says: its own, a vendor's, an Android GKI name, or
// none.
func TestUnparsableRelease(t *testing.T) {
	k := kerneltest.ByName(t, "6.12.118+deb12-amd64")
	want := predictFeatures(t, k)
	for _, release := range []string{"4.18.0-305.el8.x86_64", "a15-6.6-2024-06-x86_64", ""} {
		k.Release = release
		got := predictFeatures(t, k)
		same := func(a, b Prediction) bool { return a.Verdict == b.Verdict && slices.Equal(a.Reasons, b.Reasons) }
		if len(got) != len(want) {
			t.Fatalf("release %q: %d predictions, want %d", release, len(got), len(want))
		}
		for name, p := range got {
			if w := want[name]; !same(p, w) {
				t.Errorf("release %q: %s %q, want %s %q", release, p, p.Reasons, w.Verdict, w.Reasons)
			}
		}
	}
}
