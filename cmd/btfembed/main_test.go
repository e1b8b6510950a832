package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/kerneltest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%v: %v", args, err)
		}
		for _, want := range []string{"Usage: btfembed", "-corpus", "$GOPACKAGE", "go:generate"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%v: help lacks %q", args, want)
			}
		}
	}
}

func TestGenerateUsageErrors(t *testing.T) {
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no BPF objects"},
		{[]string{obj}, "-corpus is required"},
		{[]string{"-corpus", "x", "nonexistent-*.o"}, "no such object"},
		{[]string{"-corpus", "x", "-output", "out.txt", obj}, "want a .go file"},
		{[]string{"-corpus", "x", "-bogus", obj}, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, c.args)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), c.want) {
			t.Errorf("run(%q) = %v, want an error mentioning %q", c.args, err, c.want)
		}
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
	if !strings.HasPrefix(string(src), "// "+generator.GeneratedHeader) || !strings.Contains(string(src), "package agent") {
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
	if n := len(assets.Kernels()); n != len(kerneltest.Corpus(t)) {
		t.Fatalf("payload has %d kernels", n)
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
