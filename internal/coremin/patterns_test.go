package coremin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/libbpftest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// pattern is one program of testdata/patterns with one of its targets.
type pattern struct {
	name   string // "nesting___err_too_deep"
	prog   string // path of the program object
	target string // path of the target object, whose .BTF is the target
}

// patterns lists testdata/patterns: each <p>.o with each <p>___<v>.o.
func patterns(tb testing.TB) []pattern {
	tb.Helper()
	targets, err := filepath.Glob("testdata/patterns/*___*.o")
	if err != nil || len(targets) == 0 {
		tb.Fatalf("no pattern targets: %v", err)
	}
	var out []pattern
	for _, tgt := range targets {
		name := strings.TrimSuffix(filepath.Base(tgt), ".o")
		prog, _, _ := strings.Cut(name, "___")
		out = append(out, pattern{name, filepath.Join("testdata/patterns", prog+".o"), tgt})
	}
	return out
}

// targetBTF parses a pattern's target and writes its .BTF to a file
// libbpf and bpftool can read.
func (p pattern) targetBTF(t *testing.T) (*rawbtf.Spec, *btf.Spec, string) {
	t.Helper()
	data := elfBTF(t, p.target)
	raw, err := rawbtf.Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, err := btf.LoadSpecFromReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "target.btf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return raw, full, path
}

// TestPatterns: the CO-RE patterns of the kernel's selftests, in the
// project's words: cilium/ebpf (the oracle) must decide on the minimized
// BTF as on the full target BTF, and bpftool must accept it.
func TestPatterns(t *testing.T) {
	for _, p := range patterns(t) {
		t.Run(p.name, func(t *testing.T) {
			raw, full, _ := p.targetBTF(t)
			minimizeAndVerify(t, []string{p.prog}, raw, full)
		})
	}
}

// TestPatternsLibbpf: libbpf too.
func TestPatternsLibbpf(t *testing.T) {
	loader := libbpftest.Build(t)
	for _, p := range patterns(t) {
		t.Run(p.name, func(t *testing.T) {
			raw, _, path := p.targetBTF(t)
			libbpfAgrees(t, loader, []string{p.prog}, raw, path)
		})
	}
}
