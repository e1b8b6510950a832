package extract

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// makeZImage lays a zImage out as Debian's armmp one is: the header with
// its magic at 0x24, decompressor code whose strings hold a decoy xz
// magic (the decoder's messages), the compressed arm Image, and the
// decompressor's data after it.
func makeZImage(payload []byte) []byte {
	img := make([]byte, 0x400)
	binary.LittleEndian.PutUint32(img[zImageMagicOff:], zImageMagic)
	img = append(img, "\xfd7zXZ\x00\x00\x00XZ decompressor ran out of memory\x00"...)
	img = append(img, make([]byte, 200)...)
	img = append(img, payload...)
	img = binary.LittleEndian.AppendUint32(img, 1<<20) // size_append
	img = append(img, "decompressor data, appended DTB..."...)
	binary.LittleEndian.PutUint32(img[zImageMagicOff+8:], uint32(len(img)))
	return img
}

// TestZImage reads the BTF of a 32-bit arm zImage, its kernel compressed
// with xz, gzip or lzop past a decoy magic; one without BTF is ErrNoBTF
// with the DWARF route. Debian's linux-image-6.1.0-50-armmp (6.1.176-1,
// armhf, built without BTF) gave: "zImage payload (xz): no BTF found in
// the image ...; a kernel built without BTF is imported from its DWARF
// instead" (it was "unknown file format").
func TestZImage(t *testing.T) {
	btf := extracttest.SmallBTF(t)
	flat := append(append(make([]byte, 4096), extracttest.Banner...), btf...)
	flat = append(flat, make([]byte, 100)...)
	for _, format := range []string{FormatXZ, FormatGzip, FormatLZO} {
		img, err := FindImageBTF(makeZImage(extracttest.Compressors[format](t, flat)))
		if err != nil {
			t.Errorf("%s: %v", format, err)
			continue
		}
		if img.Arch != "arm" || len(img.BTF) != len(btf) || img.Banner.Release != "6.99.0-7-test" {
			t.Errorf("%s: arch %q, %d bytes of BTF, release %q", format, img.Arch, len(img.BTF), img.Banner.Release)
		}
	}
	noBTF := append(append(make([]byte, 4096), extracttest.Banner...), make([]byte, 4096)...)
	_, err := FindImageBTF(makeZImage(extracttest.Compressors[FormatXZ](t, noBTF)))
	if !errors.Is(err, ErrNoBTF) || !strings.Contains(err.Error(), "debug package") {
		t.Errorf("zImage without BTF: %v", err)
	}
	if _, err := FindImageBTF(makeZImage([]byte("not compressed"))); err == nil {
		t.Error("zImage without a payload: no error")
	}
}
