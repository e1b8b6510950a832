package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/mapfile"
)

func TestMinUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"-h"}, flag.ErrHelp},
		{[]string{}, errUsage},
		{[]string{"k.btf", "out.btf"}, errUsage},
		{[]string{"-X", "k.btf", "out.btf", "a.o"}, errUsage},
	} {
		var stderr bytes.Buffer
		err := runMin(&bytes.Buffer{}, &stderr, tc.args)
		if !errors.Is(err, tc.want) {
			t.Errorf("%q: error %v, want %v", tc.args, err, tc.want)
		}
		if !strings.Contains(stderr.String(), "Usage: btfembed min") {
			t.Errorf("%q: no usage text on stderr", tc.args)
		}
	}
}

// TestMin runs the command on a BTFHub archive, the same kernel as raw
// BTF, and cilium/ebpf's ELF test target; checks the outputs agree, pass
// the oracle and load in bpftool.
func TestMin(t *testing.T) {
	objs, _ := filepath.Glob("../../testdata/objects/*-el.o")
	archive := "../../testdata/btfhub/debian/12/x86_64/6.1.0-47-amd64.btf.tar.xz"
	dir := t.TempDir()
	raw, err := readBTF(new(mapfile.Mapped), archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	rawPath := filepath.Join(dir, "kernel.btf")
	if err := os.WriteFile(rawPath, raw.Raw(), 0o644); err != nil {
		t.Fatal(err)
	}
	ciliumTestdata := kerneltest.CiliumTestdata(t)
	readTgt := filepath.Join(ciliumTestdata, "relocs_read_tgt-el.elf")
	readObj := filepath.Join(ciliumTestdata, "relocs_read-el.elf")

	for _, tc := range []struct {
		name   string
		kernel string
		objs   []string
		same   string // name of an earlier case with the same output
	}{
		{"archive", archive, objs, ""},
		{"raw", rawPath, objs, "archive"},
		{"elf", readTgt, []string{readObj}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".btf")
			var stderr bytes.Buffer
			if err := runMin(&bytes.Buffer{}, &stderr, append([]string{tc.kernel, out}, tc.objs...)); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if tc.same != "" {
				if want, _ := os.ReadFile(filepath.Join(dir, tc.same+".btf")); !bytes.Equal(got, want) {
					t.Errorf("output differs from %s", tc.same)
				}
			}
			full, err := btf.LoadSpec(tc.kernel)
			if tc.kernel == archive {
				full, err = btf.LoadSpec(rawPath)
			}
			if err != nil {
				t.Fatal(err)
			}
			min, err := btf.LoadSpec(out)
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := corereloc.Load(tc.objs...)
			if err != nil {
				t.Fatal(err)
			}
			if err := corereloc.Verify(loaded, []*btf.Spec{full}, []*btf.Spec{min}); err != nil {
				t.Error(err)
			}
			bpftoolDump(t, out)
		})
	}
}

// bpftoolDump checks bpftool can load and print a BTF file.
func bpftoolDump(t *testing.T, path string) {
	t.Helper()
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		t.Log("bpftool not installed: not checking it loads the output")
		return
	}
	out, err := exec.Command(bpftool, "btf", "dump", "file", path).CombinedOutput()
	if err != nil {
		t.Errorf("bpftool btf dump file %s: %v\n%s", path, err, out)
	}
}

func TestMinBadInput(t *testing.T) {
	dir := t.TempDir()
	obj := "../../testdata/objects/fields-el.o"
	notBTF := filepath.Join(dir, "garbage.btf")
	os.WriteFile(notBTF, []byte("not BTF at all"), 0o644)
	out := filepath.Join(dir, "out.btf")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing kernel", []string{filepath.Join(dir, "nope"), out, obj}, "nope"},
		{"garbage kernel", []string{notBTF, out, obj}, "garbage.btf"},
		{"garbage object", []string{"../../testdata/btfhub/debian/12/x86_64/6.1.0-47-amd64.btf.tar.xz", out, notBTF}, "garbage.btf"},
		{"ELF without .BTF", []string{"/proc/self/exe", out, obj}, ".BTF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runMin(&bytes.Buffer{}, &bytes.Buffer{}, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output written despite the error")
			}
		})
	}
}

// TestMinModule minimizes nf_conntrack's split BTF (from the shared
// corpus) over its vmlinux with -B, and checks the two outputs with the
// oracle and bpftool.
func TestMinModule(t *testing.T) {
	module := filepath.Join(kerneltest.SharedCorpus(t), "modules", "arm64", "6.1.0-57-arm64", "nf_conntrack.ko")
	archive := "../../testdata/btfhub/debian/12/arm64/6.1.0-57-arm64.btf.tar.xz"
	objs, _ := filepath.Glob("../../testdata/objects/*-el.o")
	dir := t.TempDir()
	out := filepath.Join(dir, "nf_conntrack.btf")
	if err := runMin(&bytes.Buffer{}, &bytes.Buffer{}, append([]string{"-B", archive, module, out}, objs...)); err != nil {
		t.Fatal(err)
	}
	vmlinux, err := readBTF(new(mapfile.Mapped), archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := readBTF(new(mapfile.Mapped), module, vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	full, err := btf.LoadSpecFromReader(bytes.NewReader(vmlinux.Raw()))
	if err != nil {
		t.Fatal(err)
	}
	fullMod, err := btf.LoadSplitSpecFromReader(bytes.NewReader(mod.Raw()), full)
	if err != nil {
		t.Fatal(err)
	}
	minBase, err := btf.LoadSpec(out + ".base")
	if err != nil {
		t.Fatal(err)
	}
	minMod, err := btf.LoadSplitSpec(out, minBase)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := corereloc.Load(objs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := corereloc.Verify(loaded, []*btf.Spec{full, fullMod}, []*btf.Spec{minBase, minMod}); err != nil {
		t.Error(err)
	}
	bpftoolDump(t, out+".base")
	if bpftool, err := exec.LookPath("bpftool"); err == nil {
		if b, err := exec.Command(bpftool, "-B", out+".base", "btf", "dump", "file", out).CombinedOutput(); err != nil {
			t.Errorf("bpftool -B: %v\n%s", err, b)
		}
	}
}
