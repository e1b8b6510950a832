package rawbtf

import "testing"

// TestNameFilter: the filter keeps every name whose essential name is
// wanted, flavoured or not, however short, and prefixKey reads from a
// string table what prefixOf computes.
func TestNameFilter(t *testing.T) {
	wanted := []string{"a", "ab", "a_", "abc", "u32", "abcd", "abcde", "task_struct", "___x", "___"}
	var f nameFilter
	want := map[string]bool{}
	for _, n := range wanted {
		f.add([]byte(n))
		want[n] = true
	}
	var names []string
	for _, n := range append(wanted, "b", "abd", "task", "x", "u64", "ab__", "a__b") {
		names = append(names, n, n+"___", n+"___old", n+"___v1___v2", n+"____x")
	}
	table := []byte{0}
	offs := map[string]uint32{}
	for _, n := range names {
		offs[n] = uint32(len(table))
		table = append(append(table, n...), 0)
	}
	s := &Spec{strs: table}
	kept := 0
	for _, n := range names {
		k := s.prefixKey(offs[n])
		if k != prefixOf([]byte(n)) {
			t.Errorf("%q: prefixKey %#x, prefixOf %#x", n, k, prefixOf([]byte(n)))
		}
		if want[EssentialName(n)] {
			kept++
			if !f.mayHave(k) {
				t.Errorf("%q (essential %q, wanted) is ruled out", n, EssentialName(n))
			}
		}
	}
	if kept < 3*len(wanted) {
		t.Fatalf("only %d names with a wanted essential name: the test lost its cases", kept)
	}
}
