package kerneltest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// UnpackArchive returns the raw BTF of a BTFHub archive's bytes (a
// .tar.xz holding one .btf member).
func UnpackArchive(archive []byte) ([]byte, error) { return unpackArchive(archive) }

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
