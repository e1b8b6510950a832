package distill_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// testmod is bpf_testmod's split BTF over the distilled base pahole made
// for it, as cilium/ebpf ships them, and the vmlinux they were built with.
func testmod(t *testing.T) (distilled, *kernel) {
	t.Helper()
	m := kerneltest.CiliumTestmod(t)
	baseRaw, splitRaw := m.Base, m.Split
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
	return d, newKernel(t, "cilium/ebpf vmlinux.btf.gz", m.VMLinux)
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
