package corereloc

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// kernel is one real kernel BTF of the test corpus.
type kernel struct {
	name  string
	load  func() ([]byte, error)
	specs func() (*kernelBTF, error)
}

// kernelBTF is a kernel's BTF parsed by rawbtf and by cilium/ebpf.
type kernelBTF struct {
	raw  *rawbtf.Spec
	full *btf.Spec
}

func newKernel(name string, load func() ([]byte, error)) kernel {
	load = sync.OnceValues(load)
	return kernel{name, load, sync.OnceValues(func() (*kernelBTF, error) {
		data, err := load()
		if err != nil {
			return nil, err
		}
		raw, err := rawbtf.Parse(data, nil)
		if err != nil {
			return nil, err
		}
		full, err := btf.LoadSpecFromReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return &kernelBTF{raw, full}, nil
	})}
}

const ciliumTestdata = "/root/go/pkg/mod/github.com/cilium/ebpf@v0.22.0/btf/testdata"

// kernels lists the BTFHub kernels under testdata and the running
// kernel's BTF, each decompressed and parsed once per test binary.
var kernels = sync.OnceValue(func() []kernel {
	var ks []kernel
	paths, _ := filepath.Glob("../testdata/btfhub/*/*/*/*.btf.tar.xz")
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".btf.tar.xz")
		ks = append(ks, newKernel(name, func() ([]byte, error) { return readTarXZ(p) }))
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err == nil {
		ks = append(ks, newKernel("running", func() ([]byte, error) {
			return os.ReadFile("/sys/kernel/btf/vmlinux")
		}))
	}
	return ks
})

// readTarXZ returns the one file of a BTFHub .btf.tar.xz archive.
func readTarXZ(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := xz.NewReader(f, 0)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			return io.ReadAll(tr)
		}
	}
}

func kernelSpecs(tb testing.TB, k kernel) (*rawbtf.Spec, *btf.Spec) {
	tb.Helper()
	s, err := k.specs()
	if err != nil {
		tb.Fatal(err)
	}
	return s.raw, s.full
}

// testObjects are the project's compiled test objects.
func testObjects(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob("../testdata/objects/*.o")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no test objects: %v", err)
	}
	return paths
}

// ownObjects are corereloc's own test objects (testdata/*.c), each made
// for one mechanism of Minimize.
func ownObjects(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob("testdata/*.o")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no test objects in corereloc/testdata: %v", err)
	}
	return paths
}

// elfBTF returns the .BTF section of an ELF object.
func elfBTF(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil {
		tb.Fatal(errors.New(path + ": no .BTF"))
	}
	data, err := sec.Data()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
