package generator

import "testing"

// TestGroupDigestCountsRepeats: a group's members are a multiset. Order
// does not matter, but how often each relocation occurs does, since the
// candidate scoring of Match and of cilium/ebpf counts misses per
// relocation; two groups that differ only in repeats must not share a
// cached outcome.
func TestGroupDigestCountsRepeats(t *testing.T) {
	a, b := "0:1\x00byte_off", "0:2\x00byte_off"
	for _, what := range []string{"match", "cilium"} {
		threeA := groupDigest(what, "LittleEndian", "shape", []string{a, a, a, b}, true)
		threeB := groupDigest(what, "LittleEndian", "shape", []string{a, b, b, b}, true)
		if threeA == threeB {
			t.Errorf("%s: A×3+B and A+B×3 have one digest", what)
		}
		if shuffled := groupDigest(what, "LittleEndian", "shape", []string{b, a, a, a}, true); shuffled != threeA {
			t.Errorf("%s: the digest depends on the members' order", what)
		}
	}
}
