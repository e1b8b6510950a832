package runtime

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// minBTFDir holds bpftool-minimized BTF of the testdata kernels, laid out
// as <distro>/<version>/<arch>/<release>.btf. The -minbtf flag points tests
// and benchmarks at another tree of that layout.
var minBTFDir = flag.String("minbtf", "testdata/minbtf", "directory of minimized BTF, <distro>/<version>/<arch>/<release>.btf")

// loadEntries reads every kernel under minBTFDir, keyed by its path.
var loadEntries = sync.OnceValues(func() ([]Entry, error) {
	var entries []Entry
	err := filepath.WalkDir(*minBTFDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".btf") {
			return err
		}
		rel, _ := filepath.Rel(*minBTFDir, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		entries = append(entries, Entry{
			Key:     Key{Distro: parts[0], Version: parts[1], Arch: parts[2], Release: strings.TrimSuffix(parts[3], ".btf")},
			VMLinux: raw,
		})
		return nil
	})
	return entries, err
})

func testEntries(tb testing.TB) []Entry {
	tb.Helper()
	entries, err := loadEntries()
	if err != nil {
		tb.Fatal(err)
	}
	if len(entries) < 4 {
		tb.Fatalf("found %d kernels under %s, want at least 4", len(entries), *minBTFDir)
	}
	return entries
}

func encode(tb testing.TB, entries []Entry, opts *EncodeOptions) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, entries, opts); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func open(tb testing.TB, payload []byte) *Assets {
	tb.Helper()
	a, err := Open(payload)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}
