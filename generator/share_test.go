package generator

import (
	"strings"
	"testing"
)

// TestRowSpelling: rows spell alike exactly when the report shows them
// alike, whatever bytes their strings hold, so sharing never swaps one
// kernel's rows for another's.
func TestRowSpelling(t *testing.T) {
	spellOf := func(p ProgramReport) string {
		var b strings.Builder
		writeProgram(&b, p)
		return b.String()
	}
	for _, c := range []struct {
		name string
		a, b ProgramReport
		same bool
	}{
		{"nil and empty lists", ProgramReport{Reasons: nil}, ProgramReport{Reasons: []string{}}, true},
		{"a boundary moved", ProgramReport{Object: "a", Program: "bc"}, ProgramReport{Object: "ab", Program: "c"}, false},
		{"reasons or guarded", ProgramReport{Reasons: []string{"x"}}, ProgramReport{Guarded: []string{"x"}}, false},
		{"one reason or two", ProgramReport{Reasons: []string{"a:b"}}, ProgramReport{Reasons: []string{"a", "b"}}, false},
		{"digits in a reason", ProgramReport{Reasons: []string{"1;1:x"}}, ProgramReport{Reasons: []string{"1", "x"}}, false},
		{"a count against a length", ProgramReport{Reasons: []string{"5:hello"}}, ProgramReport{Reasons: []string{"hello"}, Guarded: []string{""}}, false},
	} {
		if got := spellOf(c.a) == spellOf(c.b); got != c.same {
			t.Errorf("%s: spelled alike %v, want %v (%q, %q)", c.name, got, c.same, spellOf(c.a), spellOf(c.b))
		}
	}
	var a, b strings.Builder
	writeRelocation(&a, RelocationReport{Object: "o", InsnOff: 12, Kind: "3"})
	writeRelocation(&b, RelocationReport{Object: "o", InsnOff: 123})
	if a.String() == b.String() {
		t.Errorf("relocation rows with other offsets and kinds spell alike: %q", a.String())
	}
}
