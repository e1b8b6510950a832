package payload

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// TestVerdictVocabulary: the reader refuses a row whose kind is none of
// Kinds and names a terminal would interpret (issue 33: a payload's
// "explodes" reached Prediction.Kind, and escape sequences its log line).
func TestVerdictVocabulary(t *testing.T) {
	good := func() VerdictTable {
		return VerdictTable{
			Objects: []ObjectRecord{{Name: "bpf_x86_bpfel.o", Programs: []string{"handle_exec", "handle_fork"}}},
			Rows:    []RowRecord{{Object: 0, Program: 1, Verdict: VerdictFails, Kind: "core", Reasons: []string{"byte_off task_struct.mm_cid poisoned"}}},
			Sets:    [][]uint64{{0}},
		}
	}
	for _, kind := range Kinds {
		tab := good()
		tab.Rows[0].Kind = kind
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

// TestKindsMatchPredict: Kinds are the kinds the generator's analysis
// gives, read from internal/predict's source (which this package must
// not import: the runtime links it), so that a kind added there and not
// here fails this test rather than every agent's selection.
func TestKindsMatchPredict(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../predict/reason.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					kinds = append(kinds, s)
				}
			}
		}
	}
	slices.Sort(kinds)
	if want := slices.Sorted(slices.Values(Kinds)); !slices.Equal(kinds, want) {
		t.Errorf("internal/predict's kinds %q, payload.Kinds %q", kinds, want)
	}
}
