package corpus

import (
	"archive/tar"
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	uxz "github.com/ulikunitz/xz"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
)

// testCorpus is the BTFHub-layout corpus the project ships.
const testCorpus = "../../testdata/btfhub"

// testExtra is a corpus root holding modules of testCorpus kernels (see
// its README).
const testExtra = "../../testdata/corpus-extra"

// extraModules is the testExtra modules directory of a kernel.
func extraModules(k kernelkey.Key) string {
	return filepath.Join(testExtra, k.Distro, k.Version, k.Arch, k.Release+".modules")
}

// testKernels are the kernels of testCorpus with their type counts as
// ../../../shared/corpus/README.md gives them (counted with bpftool).
var testKernels = []struct {
	key   kernelkey.Key
	types int
}{
	{kernelkey.Key{Arch: "arm64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"}, 109726},
	{kernelkey.Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"}, 100628},
	{kernelkey.Key{Arch: "x86_64", Release: "6.1.0-50-cloud-amd64", Distro: "debian", Version: "12"}, 95068},
	{kernelkey.Key{Arch: "x86_64", Release: "6.12.118+deb12-amd64", Distro: "debian", Version: "12"}, 112806},
}

var hubBTFCache sync.Map

// hubBTF returns the raw BTF of a testCorpus kernel, extracted with
// decoders this package does not use for reading (ulikunitz/xz,
// archive/tar), as the reference the reader and importer must match.
func hubBTF(tb testing.TB, k kernelkey.Key) []byte {
	tb.Helper()
	if b, ok := hubBTFCache.Load(k); ok {
		return b.([]byte)
	}
	data, err := os.ReadFile(filepath.Join(testCorpus, k.Distro, k.Version, k.Arch, k.Release+".btf.tar.xz"))
	if err != nil {
		tb.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(unxz(tb, data)))
	h, err := tr.Next()
	if err != nil {
		tb.Fatal(err)
	}
	if h.Name != k.Release+".btf" {
		tb.Fatalf("member %q, want %s.btf", h.Name, k.Release)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		tb.Fatal(err)
	}
	hubBTFCache.Store(k, b)
	return b
}

// objcopySection dumps an ELF section with llvm-objcopy, an extractor
// independent of this package, or skips the test without it.
func objcopySection(tb testing.TB, elfData []byte, section string) []byte {
	tb.Helper()
	tool, err := exec.LookPath("llvm-objcopy")
	if err != nil {
		tb.Skip("llvm-objcopy not installed")
	}
	dir := tb.TempDir()
	in, out := filepath.Join(dir, "in.o"), filepath.Join(dir, "section")
	if err := os.WriteFile(in, elfData, 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(tool, "--dump-section", section+"="+out, in, filepath.Join(dir, "discard.o"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("llvm-objcopy: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// unxz decompresses with ulikunitz/xz, not the decoder under test.
func unxz(tb testing.TB, data []byte) []byte {
	tb.Helper()
	xr, err := uxz.NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(xr)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// copyFile copies src to dst, creating dst's directory.
func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, dst, b)
}

func writeFile(tb testing.TB, dst string, b []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// moduleCorpus lays out a corpus in a temporary directory: the testCorpus
// kernels that have modules in testExtra, with those modules.
func moduleCorpus(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, tk := range testKernels {
		k := tk.key
		mods, _ := filepath.Glob(filepath.Join(extraModules(k), "*"))
		if len(mods) == 0 {
			continue
		}
		kdir := filepath.Join(dir, k.Distro, k.Version, k.Arch)
		copyFile(tb, filepath.Join(testCorpus, k.Distro, k.Version, k.Arch, k.Release+".btf.tar.xz"), filepath.Join(kdir, k.Release+".btf.tar.xz"))
		for _, m := range mods {
			copyFile(tb, m, filepath.Join(kdir, k.Release+".modules", filepath.Base(m)))
		}
	}
	return dir
}

// collect reads a whole corpus into memory, for tests.
func collect(tb testing.TB, roots []string, opts *Options) (kernels []*Kernel, errs []error) {
	tb.Helper()
	for k, err := range Read(tb.Context(), roots, opts) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		kernels = append(kernels, k)
	}
	return kernels, errs
}

// readTestModule returns a module file of testExtra as an ELF, decompressed
// with tools independent of this package's readers.
func readTestModule(tb testing.TB, file string) []byte {
	tb.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	switch filepath.Ext(file) {
	case ".xz":
		return unxz(tb, b)
	case ".gz":
		gr, err := stdgzip.NewReader(bytes.NewReader(b))
		if err != nil {
			tb.Fatal(err)
		}
		b, err = io.ReadAll(gr)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return b
}

// hubFile returns the BTFHub archive file of a testCorpus kernel.
func hubFile(tb testing.TB, k kernelkey.Key) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(testCorpus, k.Distro, k.Version, k.Arch, k.Release+".btf.tar.xz"))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// unxzNoTB decompresses for fuzz seeds, where a failure is a bug in the seed.
func unxzNoTB(data []byte) []byte {
	b, err := decompressXZ(data)
	if err != nil {
		panic(err)
	}
	return b
}

// decompressXZ decompresses xz under the image cap and gives the bytes
// back to the memory budget at once.
func decompressXZ(data []byte) ([]byte, error) {
	b, release, err := extract.Decompress(data, extract.FormatXZ, extract.MaxImage)
	if err == nil {
		release()
	}
	return b, err
}
