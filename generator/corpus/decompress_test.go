package corpus

import (
	"bytes"
	"strings"
	"testing"
)

// TestDecompress round-trips real kernel BTF through every compressor the
// tests have and checks that the format is recognized by its magic.
func TestDecompress(t *testing.T) {
	btf := hubBTF(t, testKernels[2].key)[:256<<10]
	for _, format := range []string{formatGzip, formatXZ, formatLZMA, formatZstd, formatLZ4Legacy, formatBzip2, formatLZO} {
		t.Run(format, func(t *testing.T) {
			c := compressors[format](t, btf)
			if got := sniffCompression(c); got != format {
				t.Errorf("sniffed %q", got)
			}
			out, err := decompressT(c, format)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, btf) {
				t.Error("round trip differs")
			}
			if _, err := decompressT(c[:len(c)/2], format); err == nil || !strings.HasPrefix(err.Error(), strings.Split(format, "-")[0]) {
				t.Errorf("truncated stream: error %v, want one starting with the format", err)
			}
		})
	}
}

func TestFormatFromExt(t *testing.T) {
	for name, want := range map[string]string{
		"a.btf.xz": formatXZ, "data.tar.zst": formatZstd, "x.ko.gz": formatGzip,
		"data.tar.bz2": formatBzip2, "a.btf": formatNone, "data.tar": formatNone,
	} {
		if got := formatFromExt(name); got != want {
			t.Errorf("formatFromExt(%q) = %q, want %q", name, got, want)
		}
	}
}
