package corpus

import (
	"bytes"
	"testing"
)

// TestXZSize checks the size read from the index against the decoded size
// of each testdata archive, and that damaged or padded input is handled.
func TestXZSize(t *testing.T) {
	for i, f := range hubFiles(t) {
		out, err := decompress(f, formatXZ, 0)
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
			got, err := decompress(f, formatXZ, hint)
			if err != nil || !bytes.Equal(got, out) {
				t.Errorf("archive %d, hint %d: %d bytes, %v", i, hint, len(got), err)
			}
		}
	}
}
