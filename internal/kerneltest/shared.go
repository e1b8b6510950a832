package kerneltest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

// SharedArchive is a kernel of the shared corpus (SharedCorpus) in
// BTFHub-archive layout, rel being its path under the corpus's btfhub
// directory without .btf.tar.xz ("debian/11/x86_64/5.10.0-32-amd64"),
// decompressed once per machine like the testdata kernels. It skips the
// test where the shared corpus is not set.
func SharedArchive(tb testing.TB, rel string) Kernel {
	tb.Helper()
	path := filepath.Join(SharedCorpus(tb), "btfhub", filepath.FromSlash(rel)+".btf.tar.xz")
	skipIfMissing(tb, path)
	raw, err := readArchive(path)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	parts := strings.Split(rel, "/")
	return Kernel{Name: rel, Arch: parts[len(parts)-2], Release: parts[len(parts)-1], BTF: raw}
}

// NoBTF is the shared corpus's kernel built without BTF
// (nobtf/x86_64, Linux 6.1.176) with BTF made from the DWARF of its
// vmlinux by encode (package pahole's Tool.Encode, which this package
// cannot import: pahole's own tests import it), as BTFHub makes BTF for
// such kernels, once per machine (about 3 s and 450 MB of memory). It
// skips the test under -short and where the shared corpus is not set or
// lacks the kernel; encode may skip it too (no pahole).
func NoBTF(tb testing.TB, encode func(tb testing.TB, vmlinux, release string) []byte) Kernel {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: making BTF from DWARF with pahole takes seconds")
	}
	path := SharedFile(tb, "nobtf", "x86_64", "vmlinux-6.1.176.xz")
	k := Kernel{Name: "nobtf/x86_64/6.1.176", Arch: "x86_64", Release: "6.1.176"}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	cached := filepath.Join(cacheDir(), "dwarf-"+hex.EncodeToString(h.Sum(nil))+".btf")
	if k.BTF, err = os.ReadFile(cached); err == nil {
		return k
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		tb.Fatal(err)
	}
	zr, err := xz.NewReader(f, 0)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	vmlinux := filepath.Join(tb.TempDir(), "vmlinux")
	out, err := os.Create(vmlinux)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	k.BTF = encode(tb, vmlinux, k.Release)
	if os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		_ = atomicfile.WriteFile(cached, k.BTF)
	}
	return k
}

// SharedFile is the path of a file of the shared corpus, skipping the
// test where the corpus is not set or lacks the file.
func SharedFile(tb testing.TB, elem ...string) string {
	tb.Helper()
	path := filepath.Join(append([]string{SharedCorpus(tb)}, elem...)...)
	skipIfMissing(tb, path)
	return path
}

// skipIfMissing skips the test when the shared corpus lacks path, as one
// fetched with scripts/fetch-test-corpus.sh lacks the Debian 11 and
// BTF-less kernels.
func skipIfMissing(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("%s is not in the shared corpus (../shared/corpus has it; its README.md says how it was made)", path)
	}
}
