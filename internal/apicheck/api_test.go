package apicheck

import (
	"fmt"
	"go/types"
	"maps"
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/btfembed/btfembed"

func isInternal(path string) bool {
	return strings.HasPrefix(path, module+"/") && (strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal"))
}

// TestNoInternalTypesInPublicAPI loads every public package of the module
// and walks the type of each exported identifier: functions' parameters
// and results, exported fields and methods, variables and constants.
func TestNoInternalTypesInPublicAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedTypes, Dir: "../.."}, module+"/...")
	if err != nil {
		t.Fatal(err)
	}
	// An internal type that one public package aliases is one users can
	// name (runtime.Key, which generator/corpus's results hold): every
	// public package may mention it.
	aliased := map[types.Type]bool{}
	for _, p := range pkgs {
		if !isInternal(p.PkgPath) && p.Name != "main" && p.Types != nil {
			maps.Copy(aliased, exportedAliases(p.Types))
		}
	}
	checked := 0
	for _, p := range pkgs {
		// go list reads the sources in another process; stat them here so
		// that go test's cache knows this result depends on them.
		for _, f := range p.GoFiles {
			if _, err := os.Stat(f); err != nil {
				t.Error(err)
			}
		}
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		if isInternal(p.PkgPath) || p.Name == "main" || p.Types == nil {
			continue
		}
		checked++
		for _, bad := range internalMentions(p.Types, aliased) {
			t.Errorf("%s", bad)
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d public packages, want the module's (corereloc, distill, runtime, generator, ...)", checked)
	}
}

// TestCheckerFindsInternalTypes makes sure the walk can fail: a package
// whose exported function takes an internal type is reported.
func TestCheckerFindsInternalTypes(t *testing.T) {
	internal := types.NewPackage(module+"/internal/x", "x")
	spec := types.NewNamed(types.NewTypeName(0, internal, "Spec", nil), types.NewStruct(nil, nil), nil)
	pub := types.NewPackage(module+"/pub", "pub")
	params := types.NewTuple(types.NewVar(0, pub, "s", types.NewSlice(types.NewPointer(spec))))
	fn := types.NewFunc(0, pub, "Match", types.NewSignatureType(nil, nil, nil, params, nil, false))
	pub.Scope().Insert(fn)
	got := internalMentions(pub, exportedAliases(pub))
	if len(got) != 1 || !strings.Contains(got[0], "Match") {
		t.Fatalf("internalMentions = %q, want Match reported", got)
	}
}

// TestCheckerFollowsAliases makes sure that a public alias of an internal
// type is checked as a type declared in the public package: its fields
// may not mention internal types but those aliased, and a function that
// takes the alias is fine.
func TestCheckerFollowsAliases(t *testing.T) {
	internal := types.NewPackage(module+"/internal/x", "x")
	hidden := types.NewNamed(types.NewTypeName(0, internal, "Hidden", nil), types.NewStruct(nil, nil), nil)
	clean := types.NewNamed(types.NewTypeName(0, internal, "Options", nil),
		types.NewStruct([]*types.Var{types.NewField(0, internal, "Workers", types.Typ[types.Int], false)}, nil), nil)
	leaky := types.NewNamed(types.NewTypeName(0, internal, "Result", nil), types.NewStruct([]*types.Var{
		types.NewField(0, internal, "Spec", types.NewPointer(hidden), false),
		types.NewField(0, internal, "Runs", types.NewSlice(clean), false),
	}, nil), nil)
	pub := types.NewPackage(module+"/pub", "pub")
	opts := types.NewAlias(types.NewTypeName(0, pub, "Options", nil), clean)
	res := types.NewAlias(types.NewTypeName(0, pub, "Result", nil), leaky)
	params := types.NewTuple(types.NewVar(0, pub, "opts", types.NewPointer(opts)))
	results := types.NewTuple(types.NewVar(0, pub, "", types.NewPointer(res)))
	pub.Scope().Insert(opts.Obj())
	pub.Scope().Insert(res.Obj())
	pub.Scope().Insert(types.NewFunc(0, pub, "Run", types.NewSignatureType(nil, nil, nil, params, results, false)))
	got := internalMentions(pub, exportedAliases(pub))
	if len(got) != 1 || !strings.Contains(got[0], "pub.Result.Spec mentions "+module+"/internal/x.Hidden") {
		t.Fatalf("internalMentions = %q, want only Result.Spec reported", got)
	}
}

// TestCheckerAcceptsAliasesElsewhere: an internal type that another
// public package aliases may be mentioned (generator/corpus's Key fields,
// runtime.Key), and only then.
func TestCheckerAcceptsAliasesElsewhere(t *testing.T) {
	internal := types.NewPackage(module+"/internal/x", "x")
	key := types.NewNamed(types.NewTypeName(0, internal, "Key", nil), types.NewStruct(nil, nil), nil)
	a := types.NewPackage(module+"/a", "a")
	a.Scope().Insert(types.NewAlias(types.NewTypeName(0, a, "Key", nil), key).Obj())
	b := types.NewPackage(module+"/b", "b")
	params := types.NewTuple(types.NewVar(0, b, "k", key))
	b.Scope().Insert(types.NewFunc(0, b, "Take", types.NewSignatureType(nil, nil, nil, params, nil, false)))
	if got := internalMentions(b, exportedAliases(a)); len(got) != 0 {
		t.Errorf("with a's alias: internalMentions = %q, want none", got)
	}
	if got := internalMentions(b, exportedAliases(b)); len(got) != 1 || !strings.Contains(got[0], "Take") {
		t.Errorf("without it: internalMentions = %q, want Take reported", got)
	}
}

// exportedAliases are the types pkg exports aliases of.
func exportedAliases(pkg *types.Package) map[types.Type]bool {
	aliased := map[types.Type]bool{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() {
			if alias, ok := tn.Type().(*types.Alias); ok {
				aliased[alias.Rhs()] = true
			}
		}
	}
	return aliased
}

// internalMentions lists the exported identifiers of pkg whose API mentions
// a type from an internal package other than those aliased, the types a
// public package exports aliases of: users can name those, and they are
// checked at the alias (ImportResult.Kernels is a []Imported of
// internal/corpus).
func internalMentions(pkg *types.Package, aliased map[types.Type]bool) []string {
	var out []string
	scope := pkg.Scope()
	report := func(what string, typ types.Type) {
		if path := findInternal(typ, maps.Clone(aliased)); path != "" {
			out = append(out, fmt.Sprintf("%s.%s mentions %s", pkg.Path(), what, path))
		}
	}
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.TypeName:
			var named *types.Named
			if alias, ok := obj.Type().(*types.Alias); ok {
				// A public face may alias an internal type rather than
				// copy it field by field (generator/corpus): the alias
				// is then checked as if the type were declared here.
				n, ok := alias.Rhs().(*types.Named)
				if !ok || n.Obj().Pkg() == nil || !isInternal(n.Obj().Pkg().Path()) {
					report(name, alias.Rhs())
					continue
				}
				named = n
			} else if n, ok := obj.Type().(*types.Named); ok {
				named = n
			} else {
				continue
			}
			if st, ok := named.Underlying().(*types.Struct); ok {
				for i := range st.NumFields() {
					if f := st.Field(i); f.Exported() {
						report(name+"."+f.Name(), f.Type())
					}
				}
			} else {
				report(name, named.Underlying())
			}
			for i := range named.NumMethods() {
				if m := named.Method(i); m.Exported() {
					report(name+"."+m.Name(), m.Type())
				}
			}
		default:
			report(name, obj.Type())
		}
	}
	return out
}

// findInternal returns the internal package path of a type that typ
// mentions, or "". It stops at named types of other packages: the test
// checks those packages on their own.
func findInternal(typ types.Type, seen map[types.Type]bool) string {
	if seen[typ] {
		return ""
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && isInternal(p.Path()) {
			return p.Path() + "." + t.Obj().Name()
		}
		for i := range t.TypeArgs().Len() {
			if p := findInternal(t.TypeArgs().At(i), seen); p != "" {
				return p
			}
		}
	case *types.Alias:
		p := t.Obj().Pkg()
		if p != nil && isInternal(p.Path()) {
			return p.Path() + "." + t.Obj().Name()
		}
		if p != nil && strings.HasPrefix(p.Path(), module+"/") {
			// A public package's alias is checked where it is declared
			// (internalMentions), as its named types are.
			return ""
		}
		return findInternal(t.Rhs(), seen)
	case *types.Pointer:
		return findInternal(t.Elem(), seen)
	case *types.Slice:
		return findInternal(t.Elem(), seen)
	case *types.Array:
		return findInternal(t.Elem(), seen)
	case *types.Map:
		if p := findInternal(t.Key(), seen); p != "" {
			return p
		}
		return findInternal(t.Elem(), seen)
	case *types.Chan:
		return findInternal(t.Elem(), seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				if p := findInternal(tup.At(i).Type(), seen); p != "" {
					return p
				}
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				if p := findInternal(f.Type(), seen); p != "" {
					return p
				}
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if p := findInternal(t.Method(i).Type(), seen); p != "" {
				return p
			}
		}
	}
	return ""
}
