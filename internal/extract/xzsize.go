package extract

import (
	"bytes"
	"encoding/binary"
)

// xzSize returns the uncompressed size an xz stream's index records, so
// that the output can be allocated once: growing it while decoding a 5 MB
// BTFHub archive costs about a tenth of the decoding. The stream must end
// data, followed only by stream padding; otherwise, or if the index does
// not parse, ok is false. The size is a hint: decoding does not trust it.
//
// Layout (https://tukaani.org/xz/xz-file-format.txt): the stream footer is
// CRC32, backward size ((stored+1)*4 bytes of index), flags and "YZ"; the
// index is a 0 byte, the number of records and per record the unpadded and
// the uncompressed size, all multibyte integers.
func xzSize(data []byte) (size int64, ok bool) {
	// Stream padding: zero bytes in multiples of four.
	for len(data) >= 4 && bytes.Equal(data[len(data)-4:], []byte{0, 0, 0, 0}) {
		data = data[:len(data)-4]
	}
	if len(data) < 12 || !bytes.HasSuffix(data, []byte("YZ")) {
		return 0, false
	}
	footer := data[len(data)-12:]
	indexSize := (int64(binary.LittleEndian.Uint32(footer[4:])) + 1) * 4
	if indexSize > int64(len(data)-12) {
		return 0, false
	}
	index := data[len(data)-12-int(indexSize) : len(data)-12]
	if index[0] != 0 {
		return 0, false
	}
	index = index[1:]
	count, ok := xzVarint(&index)
	if !ok {
		return 0, false
	}
	for range count {
		if _, ok := xzVarint(&index); !ok { // unpadded size
			return 0, false
		}
		n, ok := xzVarint(&index)
		if !ok || n > MaxDecompressed-uint64(size) {
			return 0, false
		}
		size += int64(n)
	}
	return size, true
}

// xzVarint consumes one xz multibyte integer (7 bits a byte, at most 9
// bytes) from the front of b.
func xzVarint(b *[]byte) (uint64, bool) {
	var v uint64
	for i := 0; i < 9 && i < len(*b); i++ {
		c := (*b)[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			*b = (*b)[i+1:]
			return v, true
		}
	}
	return 0, false
}
