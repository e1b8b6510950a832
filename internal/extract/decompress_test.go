package extract

import (
	"bytes"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestDecompress round-trips real kernel BTF through every compressor the
// tests have and checks that the format is recognized by its magic.
func TestDecompress(t *testing.T) {
	btf := kerneltest.ByName(t, "6.1.0-50-cloud-amd64").BTF[:256<<10]
	for _, format := range []string{FormatGzip, FormatXZ, FormatLZMA, FormatZstd, FormatLZ4Legacy, FormatBzip2, FormatLZO} {
		t.Run(format, func(t *testing.T) {
			c := extracttest.Compressors[format](t, btf)
			if got := SniffCompression(c); got != format {
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
		"a.btf.xz": FormatXZ, "data.tar.zst": FormatZstd, "x.ko.gz": FormatGzip,
		"data.tar.bz2": FormatBzip2, "a.btf": FormatNone, "data.tar": FormatNone,
	} {
		if got := FormatFromExt(name); got != want {
			t.Errorf("FormatFromExt(%q) = %q, want %q", name, got, want)
		}
	}
}

// decompressT decompresses data under the image cap and gives the bytes
// back to the memory budget at once.
func decompressT(data []byte, format string) ([]byte, error) {
	b, release, err := Decompress(data, format, MaxImage)
	if err == nil {
		release()
	}
	return b, err
}
