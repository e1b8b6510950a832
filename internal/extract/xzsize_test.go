package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// hubArchives are the testdata BTFHub archives, as read from disk.
func hubArchives(tb testing.TB) [][]byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "btfhub", "*", "*", "*", "*.btf.tar.xz"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no testdata archives: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestXZSize checks the size read from the index against the decoded size
// of each testdata archive, and that damaged or padded input is handled.
func TestXZSize(t *testing.T) {
	for i, f := range hubArchives(t) {
		out, err := Decompress(f, FormatXZ, 0)
		if err != nil {
			t.Fatal(err)
		}
		size, ok := xzSize(f)
		if !ok || size != int64(len(out)) {
			t.Errorf("archive %d: xzSize = %d, %v; decoded %d bytes", i, size, ok, len(out))
		}
		padded := append(bytes.Clone(f), 0, 0, 0, 0, 0, 0, 0, 0)
		if size2, ok := xzSize(padded); !ok || size2 != size {
			t.Errorf("archive %d with stream padding: xzSize = %d, %v", i, size2, ok)
		}
		for name, bad := range map[string][]byte{
			"truncated":     f[:len(f)-1],
			"trailing data": append(bytes.Clone(f), 1),
			"footer only":   f[len(f)-12:],
		} {
			if _, ok := xzSize(bad); ok {
				t.Errorf("archive %d %s: xzSize accepted it", i, name)
			}
		}
		if i > 0 {
			continue
		}
		// A wrong hint changes nothing but the allocation.
		for _, hint := range []int{1, len(out) - 1, len(out) + 1, 2 * len(out)} {
			got, err := Decompress(f, FormatXZ, hint)
			if err != nil || !bytes.Equal(got, out) {
				t.Errorf("archive %d, hint %d: %d bytes, %v", i, hint, len(got), err)
			}
		}
	}
}
