package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

const conntrack612 = "../../distill/testdata/nf_conntrack-6.12.118+deb12-amd64.ko.xz"

// rawKernel writes a testdata kernel's raw BTF to dir.
func rawKernel(t *testing.T, dir, release string) string {
	t.Helper()
	k := kerneltest.ByName(t, "/"+release)
	path := filepath.Join(dir, release+".btf")
	if err := os.WriteFile(path, k.BTF, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDistillUsage(t *testing.T) {
	for _, tc := range []struct {
		run   func(stdout, stderr io.Writer, args []string) error
		usage string
		args  []string
		want  error
	}{
		{runDistill, "Usage: btfembed distill", []string{"-h"}, flag.ErrHelp},
		{runDistill, "Usage: btfembed distill", []string{}, errUsage},
		{runDistill, "Usage: btfembed distill", []string{"m.ko", "b", "s"}, errUsage},
		{runDistill, "Usage: btfembed distill", []string{"-B", "vmlinux", "m.ko", "b"}, errUsage},
		{runDistill, "Usage: btfembed distill", []string{"-X", "-B", "vmlinux", "m.ko", "b", "s"}, errUsage},
		{runRelocate, "Usage: btfembed relocate", []string{"-h"}, flag.ErrHelp},
		{runRelocate, "Usage: btfembed relocate", []string{"b", "s", "o"}, errUsage},
		{runRelocate, "Usage: btfembed relocate", []string{"-B", "vmlinux", "b", "s"}, errUsage},
	} {
		var stderr bytes.Buffer
		err := tc.run(&bytes.Buffer{}, &stderr, tc.args)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s %q: error %v, want %v", tc.usage, tc.args, err, tc.want)
		}
		if !strings.Contains(stderr.String(), tc.usage) {
			t.Errorf("%s %q: no usage text on stderr", tc.usage, tc.args)
		}
	}
}

// TestDistillRelocate distills a module with the command, checks the
// files are what the library makes, relocates them back onto their
// vmlinux and onto a 6.1 kernel, where only -layout-compatible succeeds.
func TestDistillRelocate(t *testing.T) {
	dir := t.TempDir()
	vm612 := rawKernel(t, dir, "6.12.118+deb12-amd64")
	vm61 := rawKernel(t, dir, "6.1.0-47-amd64")
	outBase, outSplit := filepath.Join(dir, "nf.base.btf"), filepath.Join(dir, "nf.split.btf")

	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"distill", "-B", vm612, conntrack612, outBase, outSplit}); err != nil {
		t.Fatalf("distill: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "distilled base types") {
		t.Errorf("distill prints %q", stdout.String())
	}
	wantBase, wantSplit := libraryDistill(t, vm612, conntrack612)
	if got := readAll(t, outBase); !bytes.Equal(got, wantBase) {
		t.Errorf("%s differs from distill.Distill's base", outBase)
	}
	if got := readAll(t, outSplit); !bytes.Equal(got, wantSplit) {
		t.Errorf("%s differs from distill.Distill's split", outSplit)
	}

	back := filepath.Join(dir, "nf.btf")
	if err := run(&stdout, &stderr, []string{"relocate", "-B", vm612, outBase, outSplit, back}); err != nil {
		t.Fatalf("relocate back: %v\n%s", err, stderr.String())
	}
	vmSpec, err := btf.LoadSpec(vm612)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSplitSpec(back, vmSpec)
	if err != nil {
		t.Fatalf("cilium/ebpf rejects %s: %v", back, err)
	}
	var fn *btf.Func
	if err := spec.TypeByName("nf_conntrack_in", &fn); err != nil {
		t.Fatalf("relocated module BTF: %v", err)
	}

	onto61 := filepath.Join(dir, "nf61.btf")
	stderr.Reset()
	err = run(&stdout, &stderr, []string{"relocate", "-B", vm61, outBase, outSplit, onto61})
	if err == nil || !strings.Contains(err.Error(), "-layout-compatible would map them all") {
		t.Fatalf("relocate 6.12 module onto 6.1: %v, want the hint for -layout-compatible", err)
	}
	if !strings.Contains(stderr.String(), "int 'char' size=1 encoding=none") {
		t.Errorf("stderr does not list char: %s", stderr.String())
	}
	if _, err := os.Stat(onto61); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed relocate left %s", onto61)
	}
	if err := run(&stdout, &stderr, []string{"relocate", "-layout-compatible", "-B", vm61, outBase, outSplit, onto61}); err != nil {
		t.Fatalf("relocate -layout-compatible: %v", err)
	}
}

func libraryDistill(t *testing.T, basePath, modPath string) ([]byte, []byte) {
	t.Helper()
	base, err := distill.NewBase(readAll(t, basePath))
	if err != nil {
		t.Fatal(err)
	}
	m, err := corpus.ReadBTF(modPath)
	if err != nil {
		t.Fatal(err)
	}
	b, s, err := distill.Distill(m.BTF, base)
	if err != nil {
		t.Fatal(err)
	}
	return b, s
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRelocateTestmod relocates pahole's distilled bpf_testmod, as
// cilium/ebpf ships it, onto its vmlinux.
func TestRelocateTestmod(t *testing.T) {
	dir := t.TempDir()
	testdata := kerneltest.CiliumTestdata(t)
	vmPath := filepath.Join(dir, "vmlinux.btf")
	if err := os.WriteFile(vmPath, kerneltest.CiliumTestmod(t).VMLinux, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "testmod.btf")
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"relocate", "-B", vmPath,
		filepath.Join(testdata, "btf_testmod.btf.base"), filepath.Join(testdata, "btf_testmod.btf"), out}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	vmSpec, err := btf.LoadSpec(vmPath)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSplitSpec(out, vmSpec)
	if err != nil {
		t.Fatal(err)
	}
	var fn *btf.Func
	if err := spec.TypeByName("bpf_testmod_init", &fn); err != nil {
		t.Fatal(err)
	}
}

// TestDistillBadInput checks that bad files give an error naming them and
// leave no output.
func TestDistillBadInput(t *testing.T) {
	dir := t.TempDir()
	vm := rawKernel(t, dir, "6.12.118+deb12-amd64")
	junk := filepath.Join(dir, "junk.ko")
	if err := os.WriteFile(junk, []byte("\x7fELF not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	outBase, outSplit := filepath.Join(dir, "b.btf"), filepath.Join(dir, "s.btf")
	missing := filepath.Join(dir, "missing.ko")
	for _, tc := range []struct {
		args []string
		bad  string // the file the error must name
	}{
		{[]string{"distill", "-B", vm, junk, outBase, outSplit}, junk},
		{[]string{"distill", "-B", junk, conntrack612, outBase, outSplit}, junk},
		{[]string{"distill", "-B", vm, missing, outBase, outSplit}, missing},
		{[]string{"relocate", "-B", vm, junk, junk, outBase}, junk},
		{[]string{"relocate", "-B", vm, vm, vm, outBase}, vm}, // vmlinux is not split BTF over vmlinux
	} {
		args := tc.args
		err := run(io.Discard, io.Discard, args)
		if err == nil || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%q: error %v does not name %s", args, err, tc.bad)
		}
		for _, out := range []string{outBase, outSplit} {
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%q: left %s", args, out)
			}
		}
	}
}

// TestDistillModuleWithBase distills a module that carries its own
// distilled base (.BTF.base, as pahole 1.28 writes for out-of-tree
// modules, made here with objcopy): the command relocates it onto -B
// first, and the result relocates back onto -B.
func TestDistillModuleWithBase(t *testing.T) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		t.Skip("objcopy not installed")
	}
	dir := t.TempDir()
	vm := rawKernel(t, dir, "6.12.118+deb12-amd64")
	plain := filepath.Join(dir, "nf.ko")
	m, err := corpus.ReadBTF(conntrack612)
	if err != nil {
		t.Fatal(err)
	}
	// The committed module is xz-compressed; objcopy wants the ELF.
	elfData, err := decompressForTest(readAll(t, conntrack612))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, elfData, 0o644); err != nil {
		t.Fatal(err)
	}
	base, split := libraryDistill(t, vm, conntrack612)
	basePath, splitPath := filepath.Join(dir, "b.btf"), filepath.Join(dir, "s.btf")
	for path, data := range map[string][]byte{basePath: base, splitPath: split} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withBase := filepath.Join(dir, "nf-distilled.ko")
	cmd := exec.Command(objcopy, "--update-section", ".BTF="+splitPath, "--add-section", ".BTF.base="+basePath, plain, withBase)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}

	outBase, outSplit, back := filepath.Join(dir, "ob.btf"), filepath.Join(dir, "os.btf"), filepath.Join(dir, "back.btf")
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"distill", "-B", vm, withBase, outBase, outSplit}); err != nil {
		t.Fatalf("distill: %v\n%s", err, stderr.String())
	}
	if err := run(io.Discard, &stderr, []string{"relocate", "-B", vm, outBase, outSplit, back}); err != nil {
		t.Fatalf("relocate: %v\n%s", err, stderr.String())
	}
	vmSpec, err := btf.LoadSpec(vm)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := btf.LoadSplitSpecFromReader(bytes.NewReader(m.BTF), vmSpec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := btf.LoadSplitSpec(back, vmSpec)
	if err != nil {
		t.Fatal(err)
	}
	var want, have *btf.Func
	if err := orig.TypeByName("nf_conntrack_in", &want); err != nil {
		t.Fatal(err)
	}
	if err := got.TypeByName("nf_conntrack_in", &have); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(want.Type) != fmt.Sprint(have.Type) {
		t.Errorf("nf_conntrack_in is %v, was %v", have.Type, want.Type)
	}
}

func decompressForTest(data []byte) ([]byte, error) {
	zr, err := xz.NewReader(bytes.NewReader(data), 0)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
