package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

func TestCacheCommand(t *testing.T) {
	t.Setenv(cache.EnvVar, t.TempDir())
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	out := t.TempDir()
	gen := []string{"-q", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-pkg", "agent", "-output", out + "/", obj}
	for i, want := range []string{"4 kernels (0 skipped)", "cached: 4 results"} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, gen); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("run %d: summary %q lacks %q", i, stderr.String(), want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cache", "info"}, "entries:     10 "}, // per kernel BTF and result, the payload and the whole run
		{[]string{"cache", "clean"}, "removed every entry"},
		{[]string{"cache", "info"}, "entries:     0 "},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, c.args); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), c.want) {
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.want, stdout.String())
		}
	}

	t.Setenv(cache.EnvVar, cache.Off)
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"cache", "info"}); err != nil || !strings.Contains(stdout.String(), "cache off") {
		t.Errorf("cache info with the cache off: %v, %q", err, stdout.String())
	}
	if err := run(&stdout, &stderr, []string{"cache", "bogus"}); err == nil {
		t.Error("cache bogus succeeded")
	}
}

// TestCacheUncreatable: a default cache directory that cannot be created
// (issue 18: "cache: mkdir /nonexistent: permission denied" failed the
// run) is a warning; the run writes its output without the cache.
func TestCacheUncreatable(t *testing.T) {
	t.Setenv(cache.EnvVar, "")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(file, "cache"))
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, []string{"-q", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-kernels", "6.1.0-47*", "-pkg", "agent", "-output", out + "/", obj})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "not a directory; running without the cache") {
		t.Errorf("stderr lacks the warning:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "kernelbtf.go")); err != nil {
		t.Error(err)
	}
}

// TestShardMerge: two shards merged write the files one unsharded run
// writes, byte for byte. Both modes create the -output directory.
func TestShardMerge(t *testing.T) {
	t.Setenv(cache.EnvVar, cache.Off)
	obj := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	corpusDir := filepath.Join(kerneltest.Dir(), "btfhub")
	whole, sharded := filepath.Join(t.TempDir(), "new", "whole"), filepath.Join(t.TempDir(), "new", "sharded")
	gen := func(dir string, extra ...string) {
		t.Helper()
		args := append([]string{"-q", "-corpus", corpusDir, "-pkg", "agent", "-output", filepath.Join(dir, "kernelbtf.go"), "-report", filepath.Join(dir, "report.json")}, extra...)
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, append(args, obj)); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
	}
	gen(whole)
	gen(sharded, "-shard", "0/2")
	gen(sharded, "-shard=1/2")
	parts, _ := filepath.Glob(filepath.Join(sharded, "kernelbtf.part-*-of-2"))
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, append([]string{"merge", "-q", "-pkg", "agent",
		"-output", filepath.Join(sharded, "kernelbtf.go"), "-report", filepath.Join(sharded, "report.json")}, parts...))
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, stderr.String())
	}
	for _, name := range []string{"kernelbtf.go", "kernelbtf.btfembed", "report.json"} {
		want, _ := os.ReadFile(filepath.Join(whole, name))
		got, _ := os.ReadFile(filepath.Join(sharded, name))
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: merged output differs from the unsharded run's", name)
		}
	}
	if err := run(&stdout, &stderr, []string{"merge", "-pkg", "agent", parts[0]}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("merge of one part of two: %v", err)
	}
	// merge -check passes on the outputs it wrote, and fails, naming it,
	// on a payload that differs, writing nothing.
	check := append([]string{"merge", "-q", "-check", "-pkg", "agent", "-output", filepath.Join(sharded, "kernelbtf.go")}, parts...)
	if err := run(&stdout, &stderr, check); err != nil {
		t.Errorf("merge -check on fresh outputs: %v", err)
	}
	payload := filepath.Join(sharded, "kernelbtf.btfembed")
	before, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	spoilt := append(before, 0)
	if err := os.WriteFile(payload, spoilt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(&stdout, &stderr, check); !errors.Is(err, errStale) || !strings.Contains(err.Error(), payload) {
		t.Errorf("merge -check on a changed payload: %v, want errStale naming %s", err, payload)
	}
	if after, _ := os.ReadFile(payload); !bytes.Equal(after, spoilt) {
		t.Errorf("merge -check wrote %s", payload)
	}
}

func TestShardFlag(t *testing.T) {
	for _, bad := range []string{"", "1", "2/2", "-1/2", "a/b", "1/0"} {
		var s shardFlag
		if err := s.Set(bad); err == nil {
			t.Errorf("-shard %q accepted", bad)
		}
	}
	var s shardFlag
	if err := s.Set("3/8"); err != nil || s != (shardFlag{3, 8}) || s.String() != "3/8" {
		t.Errorf("-shard 3/8: %v %v", s, err)
	}
	got := withoutFlag([]string{"-corpus", "c", "-shard", "1/2", "--shard=0/2", "-q", "x.o"}, "shard")
	if strings.Join(got, " ") != "-corpus c -q x.o" {
		t.Errorf("withoutFlag: %q", got)
	}
}

// TestShardMergeGoGenerate: in the go:generate mode, merged shards write
// the per-GOARCH files one run writes, byte for byte.
func TestShardMergeGoGenerate(t *testing.T) {
	corpusDir, err := filepath.Abs(filepath.Join(kerneltest.Dir(), "btfhub"))
	if err != nil {
		t.Fatal(err)
	}
	whole, sharded := t.TempDir(), t.TempDir()
	t.Chdir(filepath.Join("..", "..", "examples", "execsnoop"))
	t.Setenv("GOPACKAGE", "main")
	t.Setenv("BTFEMBED_CORPUS", corpusDir)
	t.Setenv(cache.EnvVar, cache.Off)
	for _, args := range [][]string{
		{"-q", "-output", filepath.Join(whole, "kernelbtf.go")},
		{"-q", "-shard", "0/2", "-output", filepath.Join(sharded, "kernelbtf.go")},
		{"-q", "-shard", "1/2", "-output", filepath.Join(sharded, "kernelbtf.go")},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
	}
	parts, _ := filepath.Glob(filepath.Join(sharded, "kernelbtf.part-*"))
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, append([]string{"merge", "-q", "-output", filepath.Join(sharded, "kernelbtf.go")}, parts...)); err != nil {
		t.Fatalf("merge: %v\n%s", err, stderr.String())
	}
	for _, p := range parts {
		os.Remove(p)
	}
	want, _ := os.ReadDir(whole)
	got, _ := os.ReadDir(sharded)
	if len(got) != len(want) || len(want) < 4 {
		t.Fatalf("merge wrote %d files, one run %d", len(got), len(want))
	}
	for _, e := range want {
		w, _ := os.ReadFile(filepath.Join(whole, e.Name()))
		g, _ := os.ReadFile(filepath.Join(sharded, e.Name()))
		if !bytes.Equal(g, w) {
			t.Errorf("%s: merged output differs from the unsharded run's", e.Name())
		}
	}
}
