package kerneltest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// MinKernel is one kernel's minimized vmlinux BTF.
type MinKernel struct {
	Key kernelkey.Key
	BTF []byte
}

// MinBTFDir is testdata/minbtf: bpftool-minimized BTF of the testdata
// kernels for one agent object (see its README), standing in for the
// generator's output where a test needs small real BTF of several kernels.
func MinBTFDir() string { return filepath.Join(Dir(), "minbtf") }

var minBTF sync.Map // dir -> func() ([]MinKernel, error)

// MinBTF reads every <distro>/<version>/<arch>/<release>.btf under dir
// (MinBTFDir, or another tree of that layout given to a benchmark), once
// per directory and process, sorted by path. It fails the test if there
// are fewer than 4.
func MinBTF(tb testing.TB, dir string) []MinKernel {
	tb.Helper()
	load, _ := minBTF.LoadOrStore(dir, sync.OnceValues(func() ([]MinKernel, error) { return readMinBTF(dir) }))
	ks, err := load.(func() ([]MinKernel, error))()
	if err != nil {
		tb.Fatal(err)
	}
	if len(ks) < 4 {
		tb.Fatalf("found %d kernels under %s, want at least 4", len(ks), dir)
	}
	return ks
}

func readMinBTF(dir string) ([]MinKernel, error) {
	var ks []MinKernel
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".btf") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 {
			return fmt.Errorf("%s: not <distro>/<version>/<arch>/<release>.btf", path)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ks = append(ks, MinKernel{
			Key: kernelkey.Key{Distro: parts[0], Version: parts[1], Arch: parts[2], Release: strings.TrimSuffix(parts[3], ".btf")},
			BTF: raw,
		})
		return nil
	})
	return ks, err
}

// Testmod is cilium/ebpf's bpf_testmod as its testdata ships it: split BTF
// made by pahole over a distilled base, and the vmlinux BTF it was built
// against.
type Testmod struct {
	Base, Split, VMLinux []byte
}

var testmod = sync.OnceValues(func() (Testmod, error) {
	dir, err := CiliumTestdataDir()
	if err != nil {
		return Testmod{}, err
	}
	var m Testmod
	if m.Base, err = os.ReadFile(filepath.Join(dir, "btf_testmod.btf.base")); err != nil {
		return m, err
	}
	if m.Split, err = os.ReadFile(filepath.Join(dir, "btf_testmod.btf")); err != nil {
		return m, err
	}
	gz, err := os.ReadFile(filepath.Join(dir, "vmlinux.btf.gz"))
	if err != nil {
		return m, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return m, fmt.Errorf("vmlinux.btf.gz: %w", err)
	}
	if m.VMLinux, err = io.ReadAll(zr); err != nil {
		return m, fmt.Errorf("vmlinux.btf.gz: %w", err)
	}
	return m, nil
})

// CiliumTestmod returns bpf_testmod's BTF (shared: do not modify it),
// skipping the test where cilium/ebpf's module directory cannot be found
// and failing it where a file is missing or broken.
func CiliumTestmod(tb testing.TB) Testmod {
	tb.Helper()
	CiliumTestdata(tb)
	m, err := testmod()
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
