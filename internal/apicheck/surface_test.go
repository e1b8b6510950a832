package apicheck

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/surface.golden from the module's public packages")

// entry is one exported identifier of a public package: kind is func,
// type, var or const for a package-level name, method for a method of an
// exported type, and field for an exported struct field or interface
// method.
type entry struct {
	pkg, kind, name string
}

// surface lists every exported identifier of the module's public packages:
// those outside internal/ that are not commands, read as linux/amd64 builds
// them. It parses the sources only, so it runs in -short mode.
func surface(root string) ([]entry, error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "linux", "amd64"
	var out []entry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if name := d.Name(); rel != "." && (name == "internal" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		bp, err := ctx.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if bp.Name == "main" {
			return nil
		}
		got, err := exported(root, rel, path, bp.GoFiles)
		out = append(out, got...)
		return err
	})
	return out, err
}

// exported lists the exported identifiers declared in files of dir. An
// alias of a type of one of the module's internal packages (root is the
// module's directory) is listed with that type's exported fields and
// methods: a user of the alias sees them as this package's, so they are
// part of its surface even though they are declared elsewhere.
func exported(root, pkg, dir string, files []string) ([]entry, error) {
	fset := token.NewFileSet()
	var out []entry
	add := func(kind, name string) { out = append(out, entry{pkg, kind, name}) }
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		imports := importNames(f)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					add("func", d.Name.Name)
				} else if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
					add("method", recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						add("type", s.Name.Name)
						for _, m := range members(s.Type) {
							add("field", s.Name.Name+"."+m)
						}
						if !s.Assign.IsValid() {
							continue
						}
						fields, methods, err := internalAlias(root, imports, s.Type)
						if err != nil {
							return nil, fmt.Errorf("%s: alias %s: %w", pkg, s.Name.Name, err)
						}
						for _, m := range fields {
							add("field", s.Name.Name+"."+m)
						}
						for _, m := range methods {
							add("method", s.Name.Name+"."+m)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								add(d.Tok.String(), n.Name)
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// importNames maps the names a file refers to its imports by (the
// package's last path element unless renamed) to their paths.
func importNames(f *ast.File) map[string]string {
	names := map[string]string{}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	return names
}

// internalAlias returns the exported fields and methods of the type an
// alias names when that type is declared in one of the module's internal
// packages, found in its sources under root; nothing for any other alias
// (runtime's Key = kernelkey.Key is listed with kernelkey). An internal
// type that is itself an alias is an error: the listing does not chase
// chains, and a public face has no reason to make one.
func internalAlias(root string, imports map[string]string, typ ast.Expr) (fields, methods []string, err error) {
	sel, ok := typ.(*ast.SelectorExpr)
	if !ok {
		return nil, nil, nil
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil, nil, nil
	}
	path := imports[x.Name]
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok || !isInternal(path) {
		return nil, nil, nil
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "linux", "amd64"
	dir := filepath.Join(root, filepath.FromSlash(rel))
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	fset := token.NewFileSet()
	found := false
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.IsExported() && receiverName(d.Recv.List[0].Type) == sel.Sel.Name {
					methods = append(methods, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if s, ok := spec.(*ast.TypeSpec); ok && s.Name.Name == sel.Sel.Name {
						if s.Assign.IsValid() {
							return nil, nil, fmt.Errorf("%s.%s is an alias too", rel, sel.Sel.Name)
						}
						found = true
						fields = members(s.Type)
					}
				}
			}
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("no type %s in %s", sel.Sel.Name, rel)
	}
	return fields, methods, nil
}

// receiverName is the type name of a method's receiver, T for T, *T and
// T[P].
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// members lists the exported fields of a struct type or the exported
// methods of an interface type, embedded ones by their type's name.
func members(e ast.Expr) []string {
	var list *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		if len(f.Names) == 0 {
			if n := receiverName(f.Type); ast.IsExported(n) {
				out = append(out, n)
			} else if sel, ok := f.Type.(*ast.SelectorExpr); ok {
				out = append(out, sel.Sel.Name)
			}
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, n.Name)
			}
		}
	}
	return out
}

// format writes one line per entry, sorted, then a count per package.
func format(entries []entry) []byte {
	slices.SortFunc(entries, func(a, b entry) int {
		return strings.Compare(a.pkg+" "+a.kind+" "+a.name, b.pkg+" "+b.kind+" "+b.name)
	})
	var b bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %s %s\n", e.pkg, e.kind, e.name)
	}
	return b.Bytes()
}

// counts sums, per package and in total, the package-level names (func,
// type, var, const), the methods and the fields.
func counts(entries []entry) string {
	type n struct{ names, methods, fields int }
	per := map[string]*n{}
	var pkgs []string
	total := &n{}
	for _, e := range entries {
		c := per[e.pkg]
		if c == nil {
			c = &n{}
			per[e.pkg] = c
			pkgs = append(pkgs, e.pkg)
		}
		for _, c := range []*n{c, total} {
			switch e.kind {
			case "method":
				c.methods++
			case "field":
				c.fields++
			default:
				c.names++
			}
		}
	}
	slices.Sort(pkgs)
	var b strings.Builder
	for _, p := range pkgs {
		fmt.Fprintf(&b, "%-18s %3d names %3d methods %3d fields\n", p, per[p].names, per[p].methods, per[p].fields)
	}
	fmt.Fprintf(&b, "%-18s %3d names %3d methods %3d fields\n", "total", total.names, total.methods, total.fields)
	return b.String()
}

// TestPublicSurface holds the exported identifiers of every public
// package to testdata/surface.golden, so that the surface only changes on
// purpose: a new exported name fails here until the golden is rewritten
// (go test ./internal/apicheck -run TestPublicSurface -update) and the
// change reviewed. The counts it logs (-v) are the ones docs/api.md
// reports.
func TestPublicSurface(t *testing.T) {
	entries, err := surface("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("public surface:\n%s", counts(entries))
	got := format(entries)
	golden := filepath.Join("testdata", "surface.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the public surface differs from %s (-golden +now):\n%s\nA wider surface needs a reason: justify each new name in its package doc, then rerun with -update.",
			golden, lineDiff(want, got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got []byte) string {
	w := strings.Split(strings.TrimSpace(string(want)), "\n")
	g := strings.Split(strings.TrimSpace(string(got)), "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "-%s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+%s\n", l)
		}
	}
	return b.String()
}

// TestSurfaceFindsExports makes sure the listing can see what it must:
// a package-level name of each kind, a method, a field and an interface
// method, and nothing unexported.
func TestSurfaceFindsExports(t *testing.T) {
	dir := t.TempDir()
	src := `package p
const C, c = 1, 2
var V int
type T struct{ F, f int; io.Reader }
type I interface{ M(); m() }
type t struct{ G int }
func (T) M() {}
func (*t) N() {}
func F() {}
func f() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exported(dir, "p", dir, []string{"p.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := "p const C\np field I.M\np field T.F\np field T.Reader\np func F\np method T.M\np type I\np type T\np var V\n"
	if s := string(format(got)); s != want {
		t.Fatalf("exported =\n%s\nwant\n%s", s, want)
	}
}

// TestSurfaceFollowsInternalAliases makes sure that a public alias of an
// internal type is listed with the fields and methods its users see.
func TestSurfaceFollowsInternalAliases(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"internal/x/x.go": "package x\ntype T struct{ F, g int }\nfunc (T) M() {}\nfunc (*T) m() {}\ntype U = T\n",
		"pub/p.go":        "package pub\nimport x \"" + module + "/internal/x\"\ntype A = x.T\n",
		"bad/b.go":        "package bad\nimport \"" + module + "/internal/x\"\ntype B = x.U\n",
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := exported(root, "pub", filepath.Join(root, "pub"), []string{"p.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := "pub field A.F\npub method A.M\npub type A\n"
	if s := string(format(got)); s != want {
		t.Fatalf("exported =\n%s\nwant\n%s", s, want)
	}
	if _, err := exported(root, "bad", filepath.Join(root, "bad"), []string{"b.go"}); err == nil {
		t.Fatal("an alias of an internal alias was listed, want an error")
	}
}

// TestPackageDocsJustifyNames checks that each package-level exported
// name of a public package is named in its package's doc comment, where
// the overview says who calls it and why. Constants of an exported type
// are justified by their type.
func TestPackageDocsJustifyNames(t *testing.T) {
	entries, err := surface("../..")
	if err != nil {
		t.Fatal(err)
	}
	type pkgInfo struct {
		doc    string
		consts map[string]bool
	}
	infos := map[string]pkgInfo{}
	for _, e := range entries {
		if e.kind == "method" || e.kind == "field" {
			continue
		}
		info, ok := infos[e.pkg]
		if !ok {
			info.doc, info.consts, err = packageDoc(filepath.Join("../..", e.pkg))
			if err != nil {
				t.Fatal(err)
			}
			infos[e.pkg] = info
		}
		if e.kind == "const" && info.consts[e.name] {
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(e.name) + `\b`).MatchString(info.doc) {
			t.Errorf("%s: exported %s %s is not named in the package doc; say there who calls it and why", e.pkg, e.kind, e.name)
		}
	}
}

// packageDoc returns the package comment of the package in dir, as
// linux/amd64 builds it, and the names of its constants of a named type
// of the package (enumeration values).
func packageDoc(dir string) (string, map[string]bool, error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "linux", "amd64"
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return "", nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return "", nil, err
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, bp.ImportPath)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", dir, err)
	}
	consts := map[string]bool{}
	for _, typ := range d.Types {
		for _, c := range typ.Consts {
			for _, n := range c.Names {
				consts[n] = true
			}
		}
	}
	return d.Doc, consts, nil
}
