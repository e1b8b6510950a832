package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/kernelarch"
	"github.com/btfembed/btfembed/internal/kerneltest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// TestGenerateBare runs the go:generate mode with no objects named in
// examples/execsnoop, a package laid out by bpf2go -target amd64,arm64: it
// writes one file and payload per GOARCH that bpf2go's constraints allow,
// each holding only its architecture's kernels, takes the corpus from
// $BTFEMBED_CORPUS, and removes the outputs of an earlier run that it no
// longer writes (the other layout's with -replace-layout, TestLayoutSwitch),
// saying so, but no file it did not generate.
func TestGenerateBare(t *testing.T) {
	corpusDir, err := filepath.Abs(filepath.Join(kerneltest.Dir(), "btfhub"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	stale := "// " + emit.GeneratedHeader + "\n\npackage main\n"
	for name, content := range map[string]string{
		"kernelbtf.go":               stale, // the explicit mode's output
		"kernelbtf.btfembed":         "old",
		"kernelbtf_riscv64.go":       stale, // a GOARCH no longer embedded
		"kernelbtf_riscv64.btfembed": "old",
		"kernelbtf_notes.go":         "package main\n", // not ours
	} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join("..", "..", "examples", "execsnoop"))
	t.Setenv("GOPACKAGE", "main")
	t.Setenv("BTFEMBED_CORPUS", corpusDir)
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"-q", "-replace-layout", "-output", filepath.Join(out, "kernelbtf.go")}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "removed "+filepath.Join(out, "kernelbtf_riscv64.go")+", "+filepath.Join(out, "kernelbtf.go")) {
		t.Errorf("summary %q does not say what it removed", s)
	}

	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"kernelbtf_amd64.btfembed", "kernelbtf_amd64.go", "kernelbtf_arm64.btfembed", "kernelbtf_arm64.go",
		"kernelbtf_notes.go", "kernelbtf_other.btfembed", "kernelbtf_other.go"}
	if !slices.Equal(names, want) {
		t.Fatalf("output directory holds %q, want %q", names, want)
	}
	// bpf2go's x86 object is for 386 || amd64; the corpus has no i386
	// kernel, so 386 gets the empty payload of kernelbtf_other.go.
	written := 0
	for _, tc := range []struct {
		file, goarch, constraint string
		kernels                  int
	}{
		{"kernelbtf_amd64", "amd64", "amd64", 3},
		{"kernelbtf_arm64", "arm64", "arm64", 1},
		{"kernelbtf_other", "386", "386", 0},
	} {
		src, err := os.ReadFile(filepath.Join(out, tc.file+".go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "\n//go:build "+tc.constraint+"\n") {
			t.Errorf("%s.go is not built for %s:\n%s", tc.file, tc.constraint, src)
		}
		if strings.Contains(string(src), "runtime/modules") {
			t.Errorf("%s.go links module relocation for a payload without modules:\n%s", tc.file, src)
		}
		if strings.Contains(string(src), "-corpus") || strings.Contains(string(src), out) {
			t.Errorf("%s.go records the corpus from the environment or a host path:\n%s", tc.file, src)
		}
		goarch, kernels := tc.goarch, tc.kernels
		payload, err := os.ReadFile(filepath.Join(out, tc.file+".btfembed"))
		if err != nil {
			t.Fatal(err)
		}
		written += len(payload)
		assets, err := btfruntime.Open(payload)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := assets.Kernels()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != kernels {
			t.Errorf("%s payload holds %d kernels, want %d", goarch, len(keys), kernels)
		}
		for _, k := range keys {
			if k.Arch != kernelarch.OfGOARCH(goarch) {
				t.Errorf("%s payload holds %s", goarch, k)
			}
		}
	}
	// The 386 payload is expected with bpf2go's targets: said only with -v.
	const word386 = "no kernels for GOARCH 386: kernelbtf_other.go"
	if strings.Contains(stderr.String(), word386) {
		t.Errorf("without -v, a word about 386's empty payload:\n%s", stderr.String())
	}
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"-q", "-v", "-output", filepath.Join(out, "kernelbtf.go")}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), word386) {
		t.Errorf("-v: no word about 386's empty payload:\n%s", stderr.String())
	}
	// The summary counts the payloads written, not one of every kernel.
	if want := fmt.Sprintf(" %d payload bytes,", written); !strings.Contains(stderr.String(), want) {
		t.Errorf("summary does not say%q:\n%s", want, stderr.String())
	}
}

// TestGenerateNothingEmbedded: the go:generate mode in a package that
// embeds no BPF object says so.
func TestGenerateNothingEmbedded(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, []string{"-pkg", "main", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-output", t.TempDir()})
	if !errors.Is(err, emit.ErrNoEmbeddedObjects) {
		t.Fatalf("error %v, want ErrNoEmbeddedObjects", err)
	}
}

// TestCommandLine: the header's command runs as written from the
// directory of the generated file.
func TestCommandLine(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		pkg    string
		pkgDir string
		want   string
	}{
		{"as given in the package", []string{"-corpus", "../../testdata/btfhub"}, "main", ".",
			"go tool btfembed -pkg main -corpus ../../testdata/btfhub"},
		{"-pkg kept where given", []string{"-pkg", "agent", "-corpus=../c", "-q", "bpf/x.o"}, "agent", ".",
			"go tool btfembed -pkg agent -corpus ../c -q bpf/x.o"},
		{"absolute paths made relative", []string{"-corpus", filepath.Join(cwd, "c"), "-report", filepath.Join(cwd, "agent", "r.json"), filepath.Join(cwd, "agent", "x.o")}, "agent", "agent",
			"go tool btfembed -pkg agent -corpus ../c -report r.json x.o"},
		{"run from elsewhere", []string{"-output", "agent/kernelbtf.go", "-ident", "kernelBTF", "objs/x.o"}, "agent", "agent",
			"go tool btfembed -pkg agent -output kernelbtf.go -ident kernelBTF ../objs/x.o"},
		{"objects after --", []string{"-corpus", "c", "--", "-odd.o"}, "main", ".",
			"go tool btfembed -pkg main -corpus c -- -odd.o"},
		{"-check left out", []string{"-check", "-corpus", "c", "--check=true", "x.o"}, "main", ".",
			"go tool btfembed -pkg main -corpus c x.o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := commandLine(tc.args, tc.pkg, tc.pkgDir)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestKeySpelling: the generate table, corpus ls and inspect name a kernel
// as the runtime's Key.String does, as do the runtime's errors
// (runtime.TestSelect).
func TestKeySpelling(t *testing.T) {
	key := btfruntime.Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"}.String()
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	out := t.TempDir()
	for _, args := range [][]string{
		{"-pkg", "agent", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-kernels", "6.1.0-47-amd64", "-output", out, obj},
		{"corpus", "ls", "-release", "6.1.0-47-amd64", filepath.Join(kerneltest.Dir(), "btfhub")},
		{"inspect", filepath.Join(out, "kernelbtf.btfembed")},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !strings.Contains(stdout.String(), key+" ") {
			t.Errorf("%q does not name %s:\n%s", args, key, stdout.String())
		}
	}
}
