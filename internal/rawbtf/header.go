package rawbtf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The wire constants of BTF (include/uapi/linux/btf.h).
const (
	// Magic is the first field of every BTF header.
	Magic = 0xeB9F
	// Version is the BTF version, the header's third byte.
	Version = 1
	// HeaderLen is the length of the classic header, magic to str_len:
	// what pahole, the kernel and this package's encoder write.
	HeaderLen = 24
	// TypeLen is the length of struct btf_type, the part every type
	// record starts with: name_off, info, size or type.
	TypeLen = 12

	layoutHeaderLen = 32 // HeaderLen plus layout_off, layout_len
)

// ErrNotBTF is wrapped by errors for data that does not start with a BTF
// header.
var ErrNotBTF = errors.New("not BTF")

// Header is a BTF header. Offsets are relative to the end of the header.
type Header struct {
	HdrLen    uint32
	TypeOff   uint32
	TypeLen   uint32
	StrOff    uint32
	StrLen    uint32
	LayoutOff uint32 // zero unless HdrLen >= 32
	LayoutLen uint32
}

// Size is the number of bytes the blob described by h occupies, header
// included. It is how a BTF blob is cut out of a larger buffer, such as a
// kernel image.
func (h Header) Size() int {
	end := uint64(h.TypeOff) + uint64(h.TypeLen)
	end = max(end, uint64(h.StrOff)+uint64(h.StrLen))
	end = max(end, uint64(h.LayoutOff)+uint64(h.LayoutLen))
	return int(uint64(h.HdrLen) + end)
}

// ParseHeader reads and checks the header at the start of data: magic in
// either byte order, version 1, a header length the format defines (a
// longer header is accepted if its unknown tail is zero, as the kernel
// does), and sections that lie within data.
func ParseHeader(data []byte) (Header, binary.ByteOrder, error) {
	if len(data) < 8 {
		return Header{}, nil, fmt.Errorf("%d bytes is too short for a header: %w", len(data), ErrNotBTF)
	}
	bo, err := MagicOrder(data)
	if err != nil {
		return Header{}, nil, err
	}
	if v := data[2]; v != Version {
		return Header{}, nil, fmt.Errorf("unsupported BTF version %d", v)
	}
	h := Header{HdrLen: bo.Uint32(data[4:])}
	if h.HdrLen < HeaderLen {
		return Header{}, nil, fmt.Errorf("header length %d is shorter than %d", h.HdrLen, HeaderLen)
	}
	if uint64(h.HdrLen) > uint64(len(data)) {
		return Header{}, nil, fmt.Errorf("header length %d exceeds the %d bytes of data", h.HdrLen, len(data))
	}
	h.TypeOff = bo.Uint32(data[8:])
	h.TypeLen = bo.Uint32(data[12:])
	h.StrOff = bo.Uint32(data[16:])
	h.StrLen = bo.Uint32(data[20:])
	known := uint32(HeaderLen)
	if h.HdrLen >= layoutHeaderLen {
		h.LayoutOff = bo.Uint32(data[24:])
		h.LayoutLen = bo.Uint32(data[28:])
		known = layoutHeaderLen
	}
	for i := known; i < h.HdrLen; i++ {
		if data[i] != 0 {
			return Header{}, nil, fmt.Errorf("header length %d: unknown non-zero header byte at offset %d", h.HdrLen, i)
		}
	}
	if h.TypeOff%4 != 0 {
		return Header{}, nil, fmt.Errorf("type section offset %d is not 4-byte aligned", h.TypeOff)
	}
	if h.Size() > len(data) {
		return Header{}, nil, fmt.Errorf("sections end at byte %d, past the %d bytes of data (truncated?)", h.Size(), len(data))
	}
	return h, bo, nil
}

// MagicOrder is the byte order of BTF whose first two bytes, the magic,
// are data's: what ParseHeader decides first, for a caller that has read
// no more of a file yet (internal/btfload.File).
func MagicOrder(data []byte) (binary.ByteOrder, error) {
	switch {
	case len(data) < 2:
		return nil, fmt.Errorf("%d bytes is too short for the magic: %w", len(data), ErrNotBTF)
	case binary.LittleEndian.Uint16(data) == Magic:
		return binary.LittleEndian, nil
	case binary.BigEndian.Uint16(data) == Magic:
		return binary.BigEndian, nil
	}
	return nil, fmt.Errorf("magic %#04x: %w", binary.LittleEndian.Uint16(data), ErrNotBTF)
}

// put writes a classic 24-byte header.
func (h Header) put(bo binary.ByteOrder, b []byte) {
	bo.PutUint16(b, Magic)
	b[2] = Version
	b[3] = 0 // flags
	bo.PutUint32(b[4:], HeaderLen)
	bo.PutUint32(b[8:], h.TypeOff)
	bo.PutUint32(b[12:], h.TypeLen)
	bo.PutUint32(b[16:], h.StrOff)
	bo.PutUint32(b[20:], h.StrLen)
}
