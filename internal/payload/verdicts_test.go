package payload

import (
	"errors"
	"testing"

	"github.com/btfembed/btfembed/internal/vocab"
)

// TestVerdictVocabulary: the reader refuses a row whose verdict or kind
// is not vocab's and names a terminal would interpret (issue 33: a payload's
// "explodes" reached Prediction.Kind, and escape sequences its log line).
func TestVerdictVocabulary(t *testing.T) {
	good := func() VerdictTable {
		return VerdictTable{
			Objects: []ObjectRecord{{Name: "bpf_x86_bpfel.o", Programs: []string{"handle_exec", "handle_fork"}}},
			Rows:    []RowRecord{{Object: 0, Program: 1, Verdict: vocab.Fails, Kind: "core", Reasons: []string{"byte_off task_struct.mm_cid poisoned"}}},
			Sets:    [][]uint64{{0}},
		}
	}
	for _, kind := range []vocab.Kind{vocab.KindCORE, vocab.KindBTFIDAttach, vocab.KindAnalysis} {
		tab := good()
		tab.Rows[0].Verdict, tab.Rows[0].Kind = vocab.Unknown, string(kind)
		if _, err := readVerdicts(tab.marshal(), 1, nil); err != nil {
			t.Errorf("kind %s: %v", kind, err)
		}
	}
	// Reasons are free text, escaped where they are printed.
	tab := good()
	tab.Rows[0].Reasons = []string{"line\nwith\x1b[2J"}
	if _, err := readVerdicts(tab.marshal(), 1, nil); err != nil {
		t.Errorf("reason with control characters: %v", err)
	}
	for name, edit := range map[string]func(*VerdictTable){
		"verdict loads":         func(t *VerdictTable) { t.Rows[0].Verdict = vocab.Loads },
		"verdict 3":             func(t *VerdictTable) { t.Rows[0].Verdict = 3 },
		"kind explodes":         func(t *VerdictTable) { t.Rows[0].Kind = "explodes" },
		"kind in capitals":      func(t *VerdictTable) { t.Rows[0].Kind = "CORE" },
		"kind clearing screens": func(t *VerdictTable) { t.Rows[0].Kind = "core\x1b[2J" },
		"object with an escape": func(t *VerdictTable) { t.Objects[0].Name = "bpf\x1b[31m.o" },
		"program with newline":  func(t *VerdictTable) { t.Objects[0].Programs[1] = "handle_fork\nforged" },
		"program not UTF-8":     func(t *VerdictTable) { t.Objects[0].Programs[1] = "handle_\xff" },
	} {
		tab := good()
		edit(&tab)
		if _, err := readVerdicts(tab.marshal(), 1, nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}
