package distill_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// ciliumTestdata is cilium/ebpf's btf/testdata in the module cache.
func ciliumTestdata(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cilium/ebpf").Output()
	if err != nil {
		t.Fatalf("locate github.com/cilium/ebpf: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "btf", "testdata")
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// testmod is bpf_testmod's split BTF over the distilled base pahole made
// for it, as cilium/ebpf ships them, and the vmlinux they were built with.
func testmod(t *testing.T) (distilled, *kernel) {
	t.Helper()
	dir := ciliumTestdata(t)
	baseRaw := readFile(t, filepath.Join(dir, "btf_testmod.btf.base"))
	splitRaw := readFile(t, filepath.Join(dir, "btf_testmod.btf"))
	distBase, err := rawbtf.Parse(baseRaw, nil)
	if err != nil {
		t.Fatal(err)
	}
	split := parseSplit(t, splitRaw, distBase)
	baseSpec, err := btf.LoadSpecFromReader(bytes.NewReader(baseRaw))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := btf.LoadSplitSpecFromReader(bytes.NewReader(splitRaw), baseSpec)
	if err != nil {
		t.Fatal(err)
	}
	d := distilled{name: "btf_testmod", split: split, orig: orig, origFirst: split.FirstID(), origBase: baseSpec}

	zr, err := gzip.NewReader(bytes.NewReader(readFile(t, filepath.Join(dir, "vmlinux.btf.gz"))))
	if err != nil {
		t.Fatal(err)
	}
	vmRaw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return d, newKernel(t, "cilium/ebpf vmlinux.btf.gz", vmRaw)
}

func newKernel(t *testing.T, name string, raw []byte) *kernel {
	t.Helper()
	rs, err := rawbtf.Parse(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return &kernel{name: name, raw: rs, spec: spec}
}

// TestTestmod relocates pahole's distilled bpf_testmod onto the vmlinux it
// was built with, which must succeed in strict mode, and onto the testdata
// kernels, whose outcomes are golden.
func TestTestmod(t *testing.T) {
	d, vmlinux := testmod(t)
	got := outcome(t, d, vmlinux, "vmlinux.btf.gz")
	if !strings.HasSuffix(got, ": ok\n") {
		t.Fatalf("relocation onto its own vmlinux fails:\n%s", got)
	}
	var b strings.Builder
	b.WriteString(got)
	for _, k := range kerneltest.Corpus(t) {
		b.WriteString(outcome(t, d, kernelFor(t, k.Release), k.Release))
	}
	compareGolden(t, "testmod.txt", b.String())
}

// TestTestmodRunning relocates bpf_testmod onto the running kernel, which
// differs from machine to machine: the outcome is logged, not compared.
func TestTestmodRunning(t *testing.T) {
	d, _ := testmod(t)
	running := kerneltest.Running(t)
	t.Log(outcome(t, d, newKernel(t, "running "+running.Release, running.BTF), running.Release))
}
