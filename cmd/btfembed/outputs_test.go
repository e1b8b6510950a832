package main

import (
	"bytes"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestOutputsAllOrNothing runs commands whose last output cannot be
// written, or whose output path is not a regular file: every old output
// must stay as it was and no temporary file may be left.
func TestOutputsAllOrNothing(t *testing.T) {
	testdata := kerneltest.Dir()
	obj := filepath.Join(testdata, "objects", "fields-el.o")
	kernel := filepath.Join(testdata, "btfhub", "debian", "12", "x86_64", "6.12.118+deb12-amd64.btf.tar.xz")
	for _, tc := range []struct {
		name string
		// args builds the command line in dir; outputs are the files
		// that exist before and must not change.
		args    func(dir string) []string
		outputs []string
		want    string // in the error
	}{
		{"generate with a bad -report path", func(dir string) []string {
			return []string{"-q", "-corpus", filepath.Join(testdata, "btfhub"), "-kernels", "6.12.*", "-pkg", "k",
				"-output", filepath.Join(dir, "k.go"), "-report", filepath.Join(dir, "missing", "r.json"), obj}
		}, []string{"k.go", "k.btfembed"}, "r.json"},
		{"min -B with an unwritable output", func(dir string) []string {
			os.Mkdir(filepath.Join(dir, "out.btf"), 0o755)
			return []string{"min", "-B", kernel, conntrack612, filepath.Join(dir, "out.btf"), obj}
		}, []string{"out.btf.base"}, "out.btf"},
		{"min into a symlink", func(dir string) []string {
			os.Symlink("victim", filepath.Join(dir, "link.btf"))
			return []string{"min", kernel, filepath.Join(dir, "link.btf"), obj}
		}, []string{"victim"}, "symlink"},
		{"min into a device node", func(dir string) []string {
			// /dev/null's numbers, made here: as root the old code
			// replaced /dev/null itself.
			if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
				t.Skip("mknod needs root:", err)
			}
			return []string{"min", kernel, filepath.Join(dir, "null"), obj}
		}, nil, "a device"},
		{"min into a named pipe", func(dir string) []string {
			if err := syscall.Mkfifo(filepath.Join(dir, "fifo.btf"), 0o644); err != nil {
				t.Skip(err)
			}
			return []string{"min", kernel, filepath.Join(dir, "fifo.btf"), obj}
		}, nil, "named pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, o := range tc.outputs {
				if err := os.WriteFile(filepath.Join(dir, o), []byte("old "+o), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadDir(dir)
			err := run(io.Discard, io.Discard, tc.args(dir))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			for _, o := range tc.outputs {
				b, err := os.ReadFile(filepath.Join(dir, o))
				if err != nil || string(b) != "old "+o {
					t.Errorf("%s now holds %q (%v)", o, b, err)
				}
			}
			after, _ := os.ReadDir(dir)
			if len(after) > len(before)+1 { // +1: what args made
				t.Errorf("left files: %v", after)
			}
			for _, e := range after {
				if strings.Contains(e.Name(), ".tmp") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

// TestNothingDroppedSilently checks that the mistakes the generator and
// min used to swallow are errors or warnings that -q does not hide.
func TestNothingDroppedSilently(t *testing.T) {
	testdata := kerneltest.Dir()
	btfhub := filepath.Join(testdata, "btfhub")
	obj := filepath.Join(testdata, "objects", "fields-el.o")
	kernel := filepath.Join(btfhub, "debian", "12", "x86_64", "6.12.118+deb12-amd64.btf.tar.xz")
	dir := t.TempDir()
	out := filepath.Join(dir, "k.go")
	gen := func(flags ...string) []string {
		return append(append([]string{"-q", "-pkg", "k", "-output", out}, flags...), obj)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string // "" for success
		stderr  string // must be in stderr
	}{
		{"missing corpus root", gen("-corpus", btfhub, "-corpus", filepath.Join(dir, "nope")), "nope", ""},
		{"unknown arch", gen("-corpus", btfhub, "-arch", "arm46"), `"arm46"`, ""},
		{"bad kernels glob", gen("-corpus", btfhub, "-kernels", "["), `"["`, ""},
		{"filters leave nothing", gen("-corpus", btfhub, "-arch", "arm64", "-kernels", "6.12.*"), `arch filter [arm64] removed 3, the kernels pattern "6.12.*" removed 1`, ""},
		{"unknown arch to corpus ls", []string{"corpus", "ls", "-arch", "arm46", btfhub}, `"arm46"`, ""},
		{"bad release glob to corpus ls", []string{"corpus", "ls", "-release", "[", btfhub}, `"["`, ""},
		{"non-BPF ELF to min", []string{"min", kernel, filepath.Join(dir, "o.btf"), "/proc/self/exe"}, "not a BPF object", ""},
		{"bad base to distill", []string{"distill", "-B", filepath.Join(btfhub, "debian", "12", "arm64", "6.1.0-57-arm64.btf.tar.xz"),
			conntrack612, filepath.Join(dir, "b"), filepath.Join(dir, "s")}, "-B " + filepath.Join(btfhub, "debian", "12", "arm64"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(io.Discard, &stderr, tc.args)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
		})
	}
}

// TestNoRelocationsWarning strips .BTF.ext from an object: min and
// generate still work, and say the object needs no BTF, even with -q.
func TestNoRelocationsWarning(t *testing.T) {
	objcopy, err := exec.LookPath("llvm-objcopy")
	if err != nil {
		t.Skip("llvm-objcopy not installed")
	}
	testdata := kerneltest.Dir()
	dir := t.TempDir()
	obj := filepath.Join(dir, "noext.o")
	if b, err := exec.Command(objcopy, "--remove-section=.BTF.ext", filepath.Join(testdata, "objects", "fields-el.o"), obj).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	kernel := filepath.Join(testdata, "btfhub", "debian", "12", "x86_64", "6.12.118+deb12-amd64.btf.tar.xz")
	for _, args := range [][]string{
		{"min", kernel, filepath.Join(dir, "o.btf"), obj},
		{"-q", "-corpus", filepath.Join(testdata, "btfhub"), "-kernels", "6.12.*", "-pkg", "k", "-output", filepath.Join(dir, "k.go"), obj},
	} {
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if want := "noext.o: no CO-RE relocations"; !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: stderr lacks %q:\n%s", args, want, stderr.String())
		}
	}
}

// TestHeaderCommentInjection gives a -corpus path whose text would close a
// block comment and add a build constraint: the generated file must carry
// no constraint and still hold the function.
func TestHeaderCommentInjection(t *testing.T) {
	btfhub := filepath.Join(kerneltest.Dir(), "btfhub")
	obj, err := filepath.Abs(filepath.Join(kerneltest.Dir(), "objects", "fields-el.o"))
	if err != nil {
		t.Fatal(err)
	}
	if btfhub, err = filepath.Abs(btfhub); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	// A relative path, recorded whole: directories "a\n*", "\n",
	// "go:build ignore\n" and "*", holding a corpus of one kernel.
	evil := "a\n*/\n//go:build ignore\n/*"
	const kernel = "debian/12/x86_64/6.12.118+deb12-amd64.btf.tar.xz"
	b, err := os.ReadFile(filepath.Join(btfhub, kernel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(evil, kernel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(evil, kernel), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := "k.go"
	args := []string{"-q", "-corpus", evil, "-kernels", "6.12.*", "-pkg", "k", "-output", out, obj}
	if err := run(io.Discard, io.Discard, args); err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), out, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) || constraint.IsPlusBuild(c.Text) {
				t.Errorf("generated file carries the constraint %q", c.Text)
			}
		}
	}
	if f.Scope.Lookup("KernelBTF") == nil {
		t.Error("generated file lost KernelBTF")
	}
}

// TestRerunKeepsOutputs: an identical rerun (a whole-run cache hit)
// leaves every output as it was, modification time included, so editors
// and file watchers see no change; a rerun that changes only the Go file
// replaces it and keeps the payload and the report.
func TestRerunKeepsOutputs(t *testing.T) {
	t.Setenv("BTFEMBED_CACHE", t.TempDir())
	out := t.TempDir()
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	args := func(ident string) []string {
		return []string{"-q", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-pkg", "agent", "-ident", ident,
			"-output", out + "/", "-report", filepath.Join(out, "report.json"), obj}
	}
	files := []string{"kernelbtf.go", "kernelbtf.btfembed", "report.json"}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, tc := range []struct {
		ident   string
		changed []string // the files the run replaces
	}{
		{"kernelBTF", nil},
		{"kernelBTFTwo", []string{"kernelbtf.go"}},
	} {
		if i == 0 {
			var stdout, stderr bytes.Buffer
			if err := run(&stdout, &stderr, args(tc.ident)); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range files {
			if err := os.Chtimes(filepath.Join(out, f), past, past); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args(tc.ident)); err != nil {
			t.Fatal(err)
		}
		wantSummary := ": unchanged: " + filepath.Join(out, "kernelbtf.go") + "\n"
		if len(tc.changed) > 0 {
			wantSummary = ": wrote " + filepath.Join(out, "kernelbtf.go") + "\n"
		}
		if !strings.HasSuffix(stderr.String(), wantSummary) {
			t.Errorf("-ident %s: summary %q does not end with %q", tc.ident, stderr.String(), wantSummary)
		}
		for _, f := range files {
			st, err := os.Stat(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			want := !slices.Contains(tc.changed, f)
			if kept := st.ModTime().Equal(past); kept != want {
				t.Errorf("-ident %s: %s kept = %v, want %v", tc.ident, f, kept, want)
			}
		}
	}
}

// TestGeneratedByUsNotRegular: a FIFO or a symlink among the files an
// earlier run may have written is neither waited on nor followed, and is
// not ours to remove.
func TestGeneratedByUsNotRegular(t *testing.T) {
	dir := t.TempDir()
	ours := filepath.Join(dir, "kernelbtf_amd64.go")
	if err := os.WriteFile(ours, []byte("// "+emit.GeneratedHeader+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "kernelbtf_mips.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "kernelbtf_arm64.go")
	if err := os.Symlink(ours, link); err != nil {
		t.Fatal(err)
	}
	if !generatedByUs(ours) {
		t.Fatalf("%s, with btfembed's header, is not recognized", ours)
	}
	for _, name := range []string{fifo, link} {
		done := make(chan bool, 1)
		go func() { done <- generatedByUs(name) }()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("%s counted as btfembed's output", filepath.Base(name))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: generatedByUs blocked", filepath.Base(name))
		}
	}
}

func TestWroteList(t *testing.T) {
	for _, tc := range []struct {
		names, kept []string
		want        string
	}{
		{[]string{"a.go", "b.go"}, nil, "wrote a.go, b.go"},
		{[]string{"a.go", "b.go"}, []string{"a.go", "b.go", "a.btfembed"}, "unchanged: a.go, b.go"},
		{[]string{"a.go", "b.go"}, []string{"b.go"}, "wrote a.go; unchanged: b.go"},
	} {
		if got := wroteList(tc.names, tc.kept); got != tc.want {
			t.Errorf("wroteList(%v, %v) = %q, want %q", tc.names, tc.kept, got, tc.want)
		}
	}
}

// TestLayoutSwitch: a run whose layout differs from the generated files
// there (named objects: one kernelbtf.go; none named: one file per
// GOARCH) writes nothing and names them, unless -replace-layout, and then
// the summary says what it removed; a GOARCH no longer embedded is removed
// in either case, and said.
func TestLayoutSwitch(t *testing.T) {
	t.Setenv("BTFEMBED_CACHE", t.TempDir())
	generated := []byte("// " + emit.GeneratedHeader + "\n\npackage agent\n")
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	for _, tc := range []struct {
		flags   []string
		wantErr string
		removed bool
	}{
		{nil, "kernelbtf_386.go, %[1]s/kernelbtf_amd64.go were written in the other layout", false},
		{[]string{"-replace-layout"}, "", true},
	} {
		out := t.TempDir()
		for _, name := range []string{"kernelbtf_386.go", "kernelbtf_amd64.go"} {
			if err := os.WriteFile(filepath.Join(out, name), generated, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Not btfembed's: never touched.
		if err := os.WriteFile(filepath.Join(out, "kernelbtf_arm64.go"), []byte("package agent\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"-q", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-pkg", "agent", "-output", out + "/"}, tc.flags...)
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, append(args, obj))
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf(tc.wantErr, out)) || !strings.Contains(err.Error(), "Nothing was written")):
			t.Errorf("%v: error %v, want %q", tc.flags, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.flags, err)
		}
		entries, _ := os.ReadDir(out)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := []string{"kernelbtf_386.go", "kernelbtf_amd64.go", "kernelbtf_arm64.go"}
		if tc.removed {
			want = []string{"kernelbtf.btfembed", "kernelbtf.go", "kernelbtf_arm64.go"}
			if s := stderr.String(); !strings.Contains(s, "removed "+filepath.Join(out, "kernelbtf_386.go")+", "+filepath.Join(out, "kernelbtf_amd64.go")) {
				t.Errorf("%v: summary %q does not say what it removed", tc.flags, s)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%v: files %q, want %q", tc.flags, names, want)
		}
	}
}

// TestLayoutSwitchPerGOARCH: the other way, a per-GOARCH run meeting the
// kernelbtf.go of a run that named objects.
func TestLayoutSwitchPerGOARCH(t *testing.T) {
	out := t.TempDir()
	goFile := filepath.Join(out, "kernelbtf.go")
	if err := os.WriteFile(goFile, []byte("// "+emit.GeneratedHeader+"\n\npackage agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &outputs{files: []outputFile{{Path: filepath.Join(out, "kernelbtf_amd64.go"), Data: []byte("package agent\n")}}}
	err := o.write(goFile)
	if err == nil || !strings.Contains(err.Error(), goFile+" was written in the other layout, one kernelbtf.go for all kernels") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "kernelbtf_amd64.go")); !os.IsNotExist(err) {
		t.Errorf("written after the refusal: %v", err)
	}
	o.replaceLayout = true
	if err := o.write(goFile); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(goFile); !os.IsNotExist(err) || !strings.Contains(o.wrote(), "removed "+goFile) {
		t.Errorf("kernelbtf.go left (%v) or not said: %q", err, o.wrote())
	}
}
