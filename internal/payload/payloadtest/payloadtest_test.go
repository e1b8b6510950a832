package payloadtest

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/btfembed/btfembed/internal/payload"
)

// TestMany: n entries under distinct keys, which encode to a payload that
// opens with all of them.
func TestMany(t *testing.T) {
	const n = payload.BlockLen + 1
	entries := Many(t, n)
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Key.String()] {
			t.Fatalf("%s twice", e.Key)
		}
		seen[e.Key.String()] = true
	}
	p, err := payload.Open(Encode(t, entries, nil))
	if err != nil {
		t.Fatal(err)
	}
	all, err := All(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("payload holds %d entries, want %d", len(all), n)
	}
}

// TestTestsOnly keeps the promise of the package doc: no package but
// another test helper imports it, so the runtime links no encoder.
func TestTestsOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the whole module")
	}
	const module = "github.com/btfembed/btfembed"
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps, Dir: "../../.."}, module+"/...")
	if err != nil {
		t.Fatal(err)
	}
	self := module + "/internal/payload/payloadtest"
	var runtime *packages.Package
	for _, p := range pkgs {
		// go list reads the sources in another process; stat them here so
		// that go test's cache knows this result depends on them.
		for _, f := range p.GoFiles {
			if _, err := os.Stat(f); err != nil {
				t.Error(err)
			}
		}
		if _, ok := p.Imports[self]; ok && !strings.HasSuffix(p.Name, "test") {
			t.Errorf("%s imports %s outside its tests", p.PkgPath, self)
		}
		if p.PkgPath == module+"/runtime" {
			runtime = p
		}
	}
	if runtime == nil {
		t.Fatal("no runtime package listed")
	}
	packages.Visit([]*packages.Package{runtime}, func(dep *packages.Package) bool {
		if dep.PkgPath == module+"/internal/payload/encode" {
			t.Error("the runtime links the encoder")
		}
		return true
	}, nil)
}
