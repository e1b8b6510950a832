package extract

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// BtfBlob returns the BTF blob at the start of data, cut to the length its
// header gives, after checking that the header is sane and the blob is whole.
func BtfBlob(data []byte) ([]byte, error) {
	h, _, err := rawbtf.ParseHeader(data)
	if err != nil {
		return nil, fmt.Errorf("BTF header: %w", err)
	}
	n := h.Size()
	if n > len(data) {
		return nil, fmt.Errorf("BTF truncated: header gives %d bytes, %d present", n, len(data))
	}
	return data[:n], nil
}

// wholeBTF returns data when it is exactly one BTF blob, as a raw BTF file
// is: a sane header and nothing after the blob.
func wholeBTF(data []byte) ([]byte, error) {
	blob, err := BtfBlob(data)
	if err != nil {
		return nil, err
	}
	if len(blob) != len(data) {
		return nil, fmt.Errorf("not raw BTF: %d bytes after the BTF blob", len(data)-len(blob))
	}
	return blob, nil
}

// RawBTFFile is wholeBTF for a raw BTF file's contents, which must fit
// MaxBTF: what it returns outlives the memory budget's accounting.
func RawBTFFile(data []byte) ([]byte, error) {
	if len(data) > MaxBTF {
		return nil, fmt.Errorf("raw BTF of %d bytes, more than %d MiB: %w", len(data), MaxBTF>>20, ErrTooLarge)
	}
	return wholeBTF(data)
}

// btfMagics are the first four bytes of BTF in either byte order: magic,
// version, flags 0.
var btfMagics = [][]byte{
	append(binary.LittleEndian.AppendUint16(nil, rawbtf.Magic), rawbtf.Version, 0),
	append(binary.BigEndian.AppendUint16(nil, rawbtf.Magic), rawbtf.Version, 0),
}

// IsRawBTF tells whether data starts with the BTF magic.
func IsRawBTF(data []byte) bool {
	return bytes.HasPrefix(data, btfMagics[0]) || bytes.HasPrefix(data, btfMagics[1])
}

// scanBTF finds vmlinux BTF in a flat kernel image (arm64 Image, a
// decompressed payload that is not ELF): every position holding the BTF
// magic is tried, and the largest blob that parses wins, so a stray magic in
// code or data cannot shadow the real section.
func scanBTF(image []byte) ([]byte, error) {
	var best []byte
	for _, magic := range btfMagics {
		for off := 0; ; {
			i := bytes.Index(image[off:], magic)
			if i < 0 {
				break
			}
			off += i
			if blob, err := BtfBlob(image[off:]); err == nil && len(blob) > len(best) {
				if _, err := ParseBTF(blob, nil); err == nil {
					best = blob
				}
			}
			off++
		}
	}
	if best == nil {
		return nil, ErrNoBTF
	}
	return best, nil
}

// ParseBTF validates raw BTF (split over base when base is not nil) and
// returns its spec.
func ParseBTF(data []byte, base *rawbtf.Spec) (*rawbtf.Spec, error) {
	s, err := rawbtf.Parse(data, base)
	if err != nil {
		return nil, fmt.Errorf("parse BTF: %w", err)
	}
	return s, nil
}
