package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/kerneltest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// TestHelp: -h and help exit 0 (run returns nil) and list every
// subcommand with its line; help <cmd> shows that command's usage.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, []string{"Usage: btfembed", "-corpus", "$GOPACKAGE", "$BTFEMBED_CORPUS", "go:generate", "Subcommands:"}},
		{[]string{"-help"}, []string{"Usage: btfembed", "Subcommands:"}},
		{[]string{"--help"}, []string{"Usage: btfembed", "Subcommands:"}},
		{[]string{"help"}, []string{"Usage: btfembed", "Subcommands:"}},
		{[]string{"-corpus", "x", "-h"}, []string{"Usage: btfembed", "Subcommands:"}},
		{[]string{"help", "min"}, []string{"Usage: btfembed min"}},
		{[]string{"help", "corpus"}, []string{"Usage:", "import", "ls"}},
		{[]string{"help", "cache"}, []string{"Usage: btfembed cache"}},
		{[]string{"help", "merge"}, []string{"Usage: btfembed merge"}},
		{[]string{"help", "inspect"}, []string{"Usage: btfembed inspect"}},
		{[]string{"help", "distill"}, []string{"Usage: btfembed distill"}},
		{[]string{"help", "relocate"}, []string{"Usage: btfembed relocate"}},
		{[]string{"help", "help"}, []string{"Usage: btfembed help"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(&stdout, &stderr, tc.args); err != nil {
				t.Fatalf("%v (want exit status 0)", err)
			}
			help := stdout.String() + stderr.String()
			// One spelling, the flag package's and the go command's.
			if strings.Contains(help, "(default "+strconv.Itoa(runtime.GOMAXPROCS(0))+")") {
				t.Errorf("help prints this machine's CPU count as a default:\n%s", help)
			}
			if strings.Contains(help, "usage:") {
				t.Errorf("help says \"usage:\", want \"Usage:\":\n%s", help)
			}
			for _, want := range tc.want {
				if !strings.Contains(help, want) {
					t.Errorf("help lacks %q:\n%s", want, help)
				}
			}
			if slices.Contains(tc.want, "Subcommands:") {
				for name := range subcommands {
					if !regexp.MustCompile(`(?m)^  ` + name + ` +\S`).MatchString(help) {
						t.Errorf("help does not list %s with a line", name)
					}
				}
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"help", "bogus"}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("help bogus: %v, want a usage error naming it", err)
	}
}

// TestUsageErrors: command-line errors match errUsage (exit status 2), and
// their messages say what is wrong without a trailing ": usage".
func TestUsageErrors(t *testing.T) {
	t.Setenv("GOPACKAGE", "agent")
	t.Setenv("BTFEMBED_CORPUS", "")
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{obj}, "no corpus: give -corpus DIR or set $BTFEMBED_CORPUS"},
		{[]string{"-corpus", "x", "-output", "out.txt", obj}, "want a .go file"},
		{[]string{"-corpus", "x", "-bogus", obj}, "flag provided but not defined: -bogus"},
		{[]string{"-corpus", "x", "-workers", "many", obj}, "invalid value"},
		{[]string{"-corpus", "x", "-workers", "-1", obj}, "-workers -1: want a positive number"},
		{[]string{"min"}, "min: want <kernel-btf>"},
		{[]string{"distill"}, "-B is required"},
		{[]string{"inspect"}, "no file given"},
		{[]string{"corpus"}, "missing subcommand"},
		{[]string{"corpus", "ls", "-bogus"}, "flag provided but not defined"},
		{[]string{"distill", "-bogus"}, "distill: flag provided but not defined: -bogus"},
		{[]string{"relocate", "-B", "vmlinux", "b"}, "relocate: want 3 arguments, got 1"},
		{[]string{"min", "-bogus"}, "min: flag provided but not defined: -bogus"},
		{[]string{"inspect", "-bogus"}, "inspect: flag provided but not defined: -bogus"},
		{[]string{"merge", "-bogus"}, "merge: flag provided but not defined: -bogus"},
		{[]string{"cache", "-bogus"}, "cache: flag provided but not defined: -bogus"},
		{[]string{"help", "a", "b"}, "at most one subcommand"},
		{[]string{"inpsect", "x.btfembed"}, `unknown command "inpsect" (and no file of that name); the commands are cache, corpus, distill, help, inspect, merge, min, relocate, version`},
		{[]string{"version", "x"}, "version takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, tc.args)
			if !errors.Is(err, errUsage) {
				t.Fatalf("error %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			if strings.HasSuffix(err.Error(), "usage") {
				t.Errorf("error %q ends in usage", err)
			}
		})
	}
}

// TestParseArgs covers the generate mode's command line: where -pkg and
// the corpus come from, and how objects are named.
func TestParseArgs(t *testing.T) {
	objDir := filepath.Join(kerneltest.Dir(), "objects")
	for _, tc := range []struct {
		name      string
		args      []string
		gopackage string // $GOPACKAGE, set by go generate
		corpusEnv string // $BTFEMBED_CORPUS
		pkg       string
		corpus    []string
		objects   int
		ident     string
		wantErr   string // "" for success
	}{
		{"go generate", []string{"-corpus", "c"}, "agent", "", "agent", []string{"c"}, 0, "KernelBTF", ""},
		{"-pkg wins over $GOPACKAGE", []string{"-corpus", "c", "-pkg", "other"}, "agent", "", "other", []string{"c"}, 0, "KernelBTF", ""},
		{"no -pkg outside go generate, no package", []string{"-corpus", "c", "-output", t.TempDir()}, "", "", "", nil, 0, "", "-pkg is required outside go generate"},
		{"-pkg outside go generate from the package's files", []string{"-corpus", "c"}, "", "", "main", []string{"c"}, 0, "KernelBTF", ""},
		{"-pkg outside go generate", []string{"-pkg", "agent", "-corpus", "c"}, "", "", "agent", []string{"c"}, 0, "KernelBTF", ""},
		{"corpus from the environment", nil, "agent", "/a" + string(filepath.ListSeparator) + "/b", "agent", []string{"/a", "/b"}, 0, "KernelBTF", ""},
		{"-corpus wins over the environment", []string{"-corpus", "c"}, "agent", "/a", "agent", []string{"c"}, 0, "KernelBTF", ""},
		{"repeated and comma-separated -corpus", []string{"-corpus", "a,b", "-corpus", "c"}, "agent", "", "agent", []string{"a", "b", "c"}, 0, "KernelBTF", ""},
		{"no corpus", nil, "agent", "", "", nil, 0, "", "no corpus"},
		{"explicit objects", []string{"-corpus", "c", filepath.Join(objDir, "fields-el.o"), filepath.Join(objDir, "enums-*.o")}, "agent", "", "agent", []string{"c"}, 3, "KernelBTF", ""},
		{"missing object", []string{"-corpus", "c", "nonexistent-*.o"}, "agent", "", "", nil, 0, "", "no such object"},
		{"unexported -ident", []string{"-corpus", "c", "-ident", "kernelBTF"}, "agent", "", "agent", []string{"c"}, 0, "kernelBTF", ""},
		{"flags after objects", []string{filepath.Join(objDir, "fields-el.o"), "-corpus", "c", filepath.Join(objDir, "enums-*.o"), "-ident", "x"}, "agent", "", "agent", []string{"c"}, 3, "x", ""},
		{"-- ends the flags", []string{"-corpus", "c", "--", filepath.Join(objDir, "fields-el.o")}, "agent", "", "agent", []string{"c"}, 1, "KernelBTF", ""},
		{"an object named like a flag after --", []string{"-corpus", "c", "--", "-ident"}, "agent", "", "", nil, 0, "", "-ident: no such object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOPACKAGE", tc.gopackage)
			t.Setenv("BTFEMBED_CORPUS", tc.corpusEnv)
			f, objs, err := parseGenerateFlags(io.Discard, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.pkg != tc.pkg || !slices.Equal(f.corpus, tc.corpus) || len(objs) != tc.objects || f.ident != tc.ident {
				t.Errorf("pkg %q corpus %q %d objects ident %q, want %q %q %d %q", f.pkg, f.corpus, len(objs), f.ident, tc.pkg, tc.corpus, tc.objects, tc.ident)
			}
		})
	}
}

// TestVersion: "btfembed version" and "-version" print the module and the
// Go version from the build information; formatVersion reads the module
// whether btfembed is the main module or a tool's dependency.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^btfembed .*\(go1\.[0-9]+`).MatchString(stdout.String()) {
			t.Errorf("%v printed %q", args, stdout.String())
		}
	}
	for _, tc := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Path: modulePath, Version: "v0.3.0"}},
			"btfembed v0.3.0 (go1.25.0)"},
		{debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "8dcdce5f"}, {Key: "vcs.time", Value: "2026-12-03T08:00:09Z"}, {Key: "vcs.modified", Value: "true"}}},
			"btfembed (devel) revision 8dcdce5f 2026-12-03T08:00:09Z (modified) (go1.25.0)"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/agent"}, Deps: []*debug.Module{
			{Path: "github.com/cilium/ebpf", Version: "v0.22.0"},
			{Path: modulePath, Version: "v0.0.0", Replace: &debug.Module{Path: "../btfembed"}}}},
			"btfembed v0.0.0 => ../btfembed (go1.26.8)"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/other"}}, "btfembed (unknown version) (go1.26.8)"},
	} {
		if got := formatVersion(&tc.info); got != tc.want {
			t.Errorf("formatVersion = %q, want %q", got, tc.want)
		}
	}
}

// TestErrorWording: mistakes a newcomer makes get messages that say what
// is wrong with what was given.
func TestErrorWording(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.o")
	if err := os.WriteFile(notes, []byte("remember the milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	corpusDir := filepath.Join(kerneltest.Dir(), "btfhub")
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	out := filepath.Join(dir, "out.go")
	// An arm64 object (bpf2go's name) and only x86_64 kernels: nothing
	// filtered by a flag, the object's architecture decides.
	arm64Obj := filepath.Join(dir, "bpf_arm64_bpfel.o")
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(arm64Obj, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"text file as object", []string{"-pkg", "x", "-corpus", corpusDir, "-output", out, notes}, notes + ": not an ELF file"},
		{"empty corpus", []string{"-pkg", "x", "-corpus", empty, "-output", out, obj}, "it holds no kernel BTF"},
		{"no kernel of the object's architecture", []string{"-pkg", "x", "-corpus", corpusDir, "-kernels", "6.12.*", "-output", out, arm64Obj},
			"the objects, which pair with [arm64] kernels only, removed 3"},
		{"corpus ls of nothing", []string{"corpus", "ls", filepath.Join(dir, "nope")}, "corpus ls: stat " + filepath.Join(dir, "nope") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("printed on stdout before failing:\n%s", stdout.String())
			}
		})
	}
}

// TestGenerateCommand runs the default mode end to end into a temporary
// package and checks both files, the report and that nothing else was
// left behind.
func TestGenerateCommand(t *testing.T) {
	out := t.TempDir()
	report := filepath.Join(out, "report.json")
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, []string{
		"-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-pkg", "agent",
		"-output", out + string(filepath.Separator), "-report", report, "-workers", "1", obj,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	src, err := os.ReadFile(filepath.Join(out, "kernelbtf.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), "// "+emit.GeneratedHeader) || !strings.Contains(string(src), "package agent") {
		t.Fatalf("generated source:\n%s", src)
	}
	if strings.Contains(string(src), out) {
		t.Fatal("generated source names the host output path")
	}
	payload, err := os.ReadFile(filepath.Join(out, "kernelbtf.btfembed"))
	if err != nil {
		t.Fatal(err)
	}
	assets, err := btfruntime.Open(payload)
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := assets.Kernels(); err != nil || len(keys) != len(kerneltest.Corpus(t)) {
		t.Fatalf("payload has %d kernels (%v)", len(keys), err)
	}
	if _, err := os.Stat(report); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Fatalf("output directory holds %d files, want kernelbtf.go, kernelbtf.btfembed, report.json", len(entries))
	}
	if !strings.Contains(stdout.String(), "6.12.118+deb12-amd64") || !strings.Contains(stderr.String(), "4 kernels") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// TestGenerateKeepsOutputOnFailure: a failing run leaves an existing
// output untouched.
func TestGenerateKeepsOutputOnFailure(t *testing.T) {
	out := t.TempDir()
	goFile := filepath.Join(out, "kernelbtf.go")
	if err := os.WriteFile(goFile, []byte("package old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"-corpus", empty, "-pkg", "old", "-output", goFile, obj}); err == nil {
		t.Fatal("generate from an empty corpus succeeded")
	}
	if b, _ := os.ReadFile(goFile); string(b) != "package old\n" {
		t.Fatalf("output changed to %q", b)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("failed run left %d files", len(entries))
	}
}
