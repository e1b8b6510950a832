package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// 32-bit arm zImage (arch/arm/boot/compressed/head.S): the magic
// 0x016f2818 at 0x24, then the image's start and end. The compressed
// kernel (piggy_data) follows the decompressor's code at an offset no
// header field gives, and ends where the decompressor's data begins, so
// it is found by its magic and decoded as one stream, the bytes after it
// ignored.
const (
	zImageMagicOff = 0x24
	zImageMagic    = 0x016f2818
)

// maxZImageTries bounds the places tried per format, each a decoder's
// start: a crafted image full of magics costs at most this many.
const maxZImageTries = 8

func isZImage(data []byte) bool {
	return len(data) >= zImageMagicOff+12 && binary.LittleEndian.Uint32(data[zImageMagicOff:]) == zImageMagic
}

// zImageFormats are the compressions arm's zImage offers whose magic is
// strong enough to find in the decompressor's code, and whose decoder
// stops at the end of its stream: xz, gzip and lzop; lzma's three-byte
// magic and lz4's frames are not.
var zImageFormats = []struct {
	format string
	magic  []byte
}{
	{FormatXZ, []byte{0xfd, '7', 'z', 'X', 'Z', 0}},
	{FormatGzip, []byte{0x1f, 0x8b, 0x08}},
	{FormatLZO, []byte("\x89LZO\x00\r\n\x1a\n")},
}

// zImageBTF decompresses an arm zImage's kernel, trying each place a
// magic of zImageFormats is found, in file order, and looks for the BTF
// in the arm Image it holds.
func zImageBTF(data []byte, depth int) (ImageBTF, error) {
	type candidate struct {
		off    int
		format string
	}
	// The decompressor's own strings may hold a magic ("\xfd7zXZ\x00"
	// opens the xz decoder's messages in Debian's armmp zImage, before
	// the stream): every place is a candidate, a few per format.
	var cands []candidate
	for _, f := range zImageFormats {
		for off, n := zImageMagicOff+12, 0; n < maxZImageTries; n++ {
			i := bytes.Index(data[off:], f.magic)
			if i < 0 {
				break
			}
			cands = append(cands, candidate{off + i, f.format})
			off += i + 1
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return a.off - b.off })
	var errs []error
	for _, c := range cands {
		payload := data[c.off:]
		if c.format == FormatXZ {
			// The size word after the stream may open with a zero byte,
			// which an xz decoder reads as stream padding: cut the stream
			// at its footer.
			payload = xzStream(payload)
		}
		inner, release, err := Decompress(payload, c.format, MaxImage)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s at %d: %w", c.format, c.off, err))
			continue
		}
		defer release()
		if depth+1 > maxImageDepth {
			return ImageBTF{}, errors.New("images nested too deep")
		}
		img, err := flatImage(inner, "arm")
		if err != nil {
			return ImageBTF{}, fmt.Errorf("zImage payload (%s): %w", c.format, err)
		}
		return img, nil
	}
	if len(errs) == 0 {
		return ImageBTF{}, fmt.Errorf("%w: zImage without an xz, gzip or lzop payload", ErrUnknownFormat)
	}
	return ImageBTF{}, fmt.Errorf("zImage payload: %w", errors.Join(errs...))
}

// xzStream cuts data, which starts with an xz stream, after the stream's
// footer: the first 12 bytes ending in "YZ" whose CRC32 checks (the
// stream's backward size and flags); all of data where none does.
func xzStream(data []byte) []byte {
	for off := 12; off+2 <= len(data); {
		i := bytes.Index(data[off:], []byte("YZ"))
		if i < 0 {
			break
		}
		end := off + i + 2
		footer := data[end-12 : end]
		if binary.LittleEndian.Uint32(footer) == crc32.ChecksumIEEE(footer[4:10]) {
			return data[:end]
		}
		off += i + 1
	}
	return data
}
