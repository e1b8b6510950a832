package kerneltest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestArchiveCache reads a testdata archive twice through an empty cache:
// the first read decompresses it and leaves exactly its BTF in the cache,
// the second returns the cached file.
func TestArchiveCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	archive := filepath.Join(Dir(), "btfhub/debian/12/x86_64/6.1.0-50-cloud-amd64.btf.tar.xz")
	first, err := readArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(cacheDir(), "*.btf"))
	if err != nil || len(files) != 1 {
		t.Fatalf("cache holds %v (%v), want one file", files, err)
	}
	cached, err := os.ReadFile(files[0])
	if err != nil || !bytes.Equal(cached, first) || !bytes.HasPrefix(first, []byte{0x9f, 0xeb, 1}) {
		t.Fatalf("cached file differs from the decompressed BTF (%v)", err)
	}
	marker := append(bytes.Clone(first), 0)
	if err := os.WriteFile(files[0], marker, 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := readArchive(archive)
	if err != nil || !bytes.Equal(second, marker) {
		t.Fatalf("second read did not come from the cache (%v)", err)
	}
}
