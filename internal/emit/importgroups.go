package emit

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"strings"
)

// formatGrouped gofmts Go source and, as goimports does, puts the standard
// library's imports in a group of their own ahead of the rest, so that the
// generated files are goimports-clean. It does this itself rather than
// through golang.org/x/tools/imports, whose tables and go command plumbing
// made the btfembed binary larger and its start-up memory higher, whatever
// the subcommand (measured in docs/min-core-btf.md, "Speed").
func formatGrouped(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	last := 0
	for _, d := range f.Decls {
		decl, ok := d.(*ast.GenDecl)
		if !ok || decl.Tok != token.IMPORT || !decl.Lparen.IsValid() {
			continue
		}
		var std, other []string
		for _, s := range decl.Specs {
			spec := s.(*ast.ImportSpec)
			if spec.Doc != nil || spec.Comment != nil {
				return nil, fmt.Errorf("import %s: comments on imports are not regrouped", spec.Path.Value)
			}
			line := string(src[fset.Position(spec.Pos()).Offset:fset.Position(spec.End()).Offset])
			if isStdImport(spec.Path.Value) {
				std = append(std, line)
			} else {
				other = append(other, line)
			}
		}
		out.Write(src[last : fset.Position(decl.Lparen).Offset+1])
		out.WriteString("\n")
		for i, group := range [][]string{std, other} {
			if i > 0 && len(std) > 0 && len(other) > 0 {
				out.WriteString("\n")
			}
			for _, line := range group {
				out.WriteString("\t" + line + "\n")
			}
		}
		last = fset.Position(decl.Rparen).Offset
	}
	out.Write(src[last:])
	return format.Source(out.Bytes())
}

// isStdImport tells whether a quoted import path names a standard library
// package: by goimports' rule, one whose first element has no dot.
func isStdImport(quoted string) bool {
	path := strings.Trim(quoted, `"`)
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
