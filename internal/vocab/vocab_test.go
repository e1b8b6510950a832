package vocab

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	for v := Loads; v <= Unknown; v++ {
		if got, ok := ParseVerdict(v.String()); !ok || got != v {
			t.Errorf("ParseVerdict(%q) = %v, %v", v.String(), got, ok)
		}
	}
	for _, word := range []string{"", "Loads", "fails ", "explodes", "Verdict(3)"} {
		if v, ok := ParseVerdict(word); ok {
			t.Errorf("ParseVerdict(%q) = %v, want none", word, v)
		}
	}
}

// TestKindsDocumented: docs/predictions.md's table of reason kinds, which
// users read to switch on Prediction.Kind, lists exactly the valid kinds.
func TestKindsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/predictions.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []Kind
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllSubmatch(doc, -1) {
		documented = append(documented, Kind(m[1]))
	}
	if !slices.Equal(documented, kinds) {
		t.Errorf("docs/predictions.md lists the kinds %q, vocab %q", documented, kinds)
	}
	for _, k := range documented {
		if !k.Valid() {
			t.Errorf("documented kind %q is not Valid", k)
		}
	}
	if Kind("explodes").Valid() || Kind("").Valid() {
		t.Error("Valid accepts a word that is no kind")
	}
}
