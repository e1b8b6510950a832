package emit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/imports"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestEmitGolden(t *testing.T) {
	report := &Coverage{
		Objects:      []string{"/somewhere/on/a/host/bpf_bpfel.o", "other.o"},
		Arches:       []string{"x86_64", "arm64", "x86_64"},
		Blobs:        2,
		PayloadBytes: 1234,
	}
	for _, tc := range []struct {
		golden string
		args   Args
	}{
		// A payload with module BTF links module relocation.
		{"kernelbtf.go.golden", Args{
			Package:     "agent",
			PayloadFile: "kernelbtf.btfembed",
			GoFile:      "kernelbtf.go",
			Command:     "go tool btfembed -pkg agent -corpus btfhub bpf_bpfel.o",
			Coverage:    report,
			Modules:     true,
		}},
		// The go:generate mode's per-GOARCH file, with an unexported
		// function.
		{"kernelbtf_amd64.go.golden", Args{
			Package:     "agent",
			Ident:       "kernelBTF",
			GOARCHes:    []string{"amd64"},
			PayloadFile: "kernelbtf_amd64.btfembed",
			GoFile:      "kernelbtf_amd64.go",
			Command:     "go tool btfembed -pkg agent -corpus btfhub",
			Coverage:    report,
		}},
		// The GOARCHes without kernels in the corpus.
		{"kernelbtf_other.go.golden", Args{
			Package:     "agent",
			GOARCHes:    []string{"386", "riscv64"},
			PayloadFile: "kernelbtf_other.btfembed",
			GoFile:      "kernelbtf_other.go",
			Command:     "go tool btfembed -pkg agent -corpus btfhub",
			Coverage:    &Coverage{PayloadBytes: 34},
		}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var got bytes.Buffer
			if err := Emit(&got, tc.args); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("Emit output differs from %s (run with -update after checking):\n%s", golden, got.String())
			}
			if strings.Contains(got.String(), "/somewhere") {
				t.Fatal("a host path leaked into the generated source")
			}
			if !strings.HasPrefix(got.String(), "// "+GeneratedHeader+"\n") {
				t.Fatal("generated file does not start with the standard header")
			}
			// goimports -l lists a file whose goimports output differs.
			fixed, err := imports.Process(tc.golden, got.Bytes(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fixed, got.Bytes()) {
				t.Errorf("goimports would rewrite the output to:\n%s", fixed)
			}
			if imports := strings.Contains(got.String(), "\t_ \""+modulesPkg+"\"\n"); imports != tc.args.Modules {
				t.Errorf("imports %s: %v, want %v (Args.Modules)", modulesPkg, imports, tc.args.Modules)
			}
			if tc.args.GOARCHes != nil && !strings.Contains(got.String(), "\n//go:build "+strings.Join(tc.args.GOARCHes, " || ")+"\n\npackage ") {
				t.Error("no build constraint before the package clause")
			}
		})
	}
}

func TestEmitRejects(t *testing.T) {
	for _, args := range []Args{
		{Package: "", PayloadFile: "p"},
		{Package: "my-pkg", PayloadFile: "p"},
		{Package: "main", Ident: "1st", PayloadFile: "p"},
		{Package: "main", Ident: "_", PayloadFile: "p"},
		{Package: "main", GOARCHes: []string{"amd 64"}, PayloadFile: "p"},
		{Package: "main", PayloadFile: ""},
		{Package: "main", PayloadFile: "dir/p", GoFile: "k.go"},
		{Package: "main", PayloadFile: "p"},
		{Package: "main", PayloadFile: "p", GoFile: "dir/k.go"},
		{Package: "main", PayloadFile: "p", GoFile: "k.txt"},
		{Package: "main", PayloadFile: "p", GoFile: "k\".go"},
	} {
		if err := Emit(&bytes.Buffer{}, args); err == nil {
			t.Errorf("Emit(%+v) succeeded", args)
		}
	}
}

// TestDocCommentPlurals: the generated doc counts in the singular for one.
func TestDocCommentPlurals(t *testing.T) {
	one := &Coverage{Objects: []string{"bpf_arm64_bpfel.o"}, Arches: []string{"arm64"}, Blobs: 1, PayloadBytes: 1}
	if got, want := docComment("KernelBTF", one), "minimized BTF for 1 kernel (arm64: 1) in 1 distinct blob, 1 byte,\n"; !strings.Contains(got, want) {
		t.Errorf("docComment = %q, want it to say %q", got, want)
	}
}
