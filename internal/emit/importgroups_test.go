package emit

import (
	"bytes"
	"testing"

	"golang.org/x/tools/imports"
)

// TestFormatGrouped: the output is what goimports makes of the input,
// for each shape of import block.
func TestFormatGrouped(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"mixed", "package p\nimport (\n_ \"embed\"\nx \"example.com/x\"\n\"sync\"\n)\nvar _ = sync.Mutex{}\nvar _ = x.X\n",
			"package p\n\nimport (\n\t_ \"embed\"\n\t\"sync\"\n\n\tx \"example.com/x\"\n)\n\nvar _ = sync.Mutex{}\nvar _ = x.X\n"},
		{"std only", "package p\nimport (\n\"sync\"\n\"io\"\n)\n",
			"package p\n\nimport (\n\t\"io\"\n\t\"sync\"\n)\n"},
		{"others only", "package p\nimport (\n\"example.com/b\"\n\"example.com/a\"\n)\n",
			"package p\n\nimport (\n\t\"example.com/a\"\n\t\"example.com/b\"\n)\n"},
		{"grouped already", "package p\n\nimport (\n\t\"io\"\n\n\t\"example.com/a\"\n)\n",
			"package p\n\nimport (\n\t\"io\"\n\n\t\"example.com/a\"\n)\n"},
		{"single import", "package p\nimport \"io\"\nvar _ io.Reader\n",
			"package p\n\nimport \"io\"\n\nvar _ io.Reader\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := formatGrouped([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			byGoimports, err := imports.Process("p.go", []byte(tc.src), &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, byGoimports) {
				t.Errorf("goimports gives\n%s", byGoimports)
			}
		})
	}
}

func TestFormatGroupedRejects(t *testing.T) {
	for _, src := range []string{
		"package p\nimport (\n",
		"package p\nimport (\n\"io\" // why\n)\n",
	} {
		if got, err := formatGrouped([]byte(src)); err == nil {
			t.Errorf("%q: no error, got\n%s", src, got)
		}
	}
}
