package extract

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
)

// LZO is the one payload compression without a maintained pure-Go decoder
// to depend on, so this file decodes it: the lzop container the kernel build
// writes (lzop -9) around LZO1X blocks. The block format follows the
// description in the kernel's Documentation/staging/lzo.rst; the container
// follows lzop's file layout. Checksums of the uncompressed data are
// verified.

var errLZOCorrupt = errors.New("lzo: corrupt block")

// lzop header flags.
const (
	lzopAdler32D   = 0x0001
	lzopAdler32C   = 0x0002
	lzopExtraField = 0x0040
	lzopCRC32D     = 0x0100
	lzopCRC32C     = 0x0200
	lzopFilter     = 0x0800
	lzopCRC32H     = 0x1000
)

// maxLZOPBlock bounds the uncompressed size of one lzop block: lzop
// writes 256 KiB blocks and accepts at most 64 MiB.
const maxLZOPBlock = 64 << 20

// lzopBlocks reads an lzop file's header and returns a function that
// decodes its blocks one at a time (each valid until the next call), then
// returns io.EOF.
func lzopBlocks(data []byte) (func() ([]byte, error), error) {
	r := &lzopReader{data: data}
	r.skip(9) // magic, checked by the caller's sniffing
	version := r.u16()
	r.u16() // library version
	if version >= 0x0940 {
		r.u16() // version needed to extract
	}
	method := r.u8()
	if version >= 0x0940 {
		r.u8() // level
	}
	flags := r.u32()
	if flags&lzopFilter != 0 {
		r.u32()
	}
	r.u32() // mode
	r.u32() // mtime
	if version >= 0x0940 {
		r.u32() // mtime, high bits
	}
	r.skip(int(r.u8())) // file name
	r.u32()             // header checksum
	if flags&lzopExtraField != 0 {
		r.skip(int(r.u32()))
		r.u32()
	}
	if r.err != nil {
		return nil, fmt.Errorf("lzo: header: %w", r.err)
	}
	if method < 1 || method > 3 {
		return nil, fmt.Errorf("lzo: method %d is not LZO1X", method)
	}
	var scratch []byte
	return func() ([]byte, error) {
		dstLen := r.u32()
		if r.err == nil && dstLen == 0 {
			return nil, io.EOF
		}
		srcLen := r.u32()
		var sumD uint32
		if flags&(lzopAdler32D|lzopCRC32D) != 0 {
			sumD = r.u32()
		}
		if flags&lzopAdler32D != 0 && flags&lzopCRC32D != 0 {
			r.u32() // both present: the CRC follows the Adler-32; one is enough
		}
		if srcLen < dstLen { // checksums of the compressed block, not checked
			if flags&lzopAdler32C != 0 {
				r.u32()
			}
			if flags&lzopCRC32C != 0 {
				r.u32()
			}
		}
		block := r.bytes(int(srcLen))
		if r.err != nil {
			return nil, fmt.Errorf("lzo: block: %w", r.err)
		}
		if srcLen > dstLen || dstLen > maxLZOPBlock {
			return nil, fmt.Errorf("lzo: block of %d bytes decompressing to %d", srcLen, dstLen)
		}
		out := block // stored uncompressed
		if srcLen != dstLen {
			// Grows with what the block really decodes to, not with dstLen.
			var err error
			if scratch, err = decodeLZO1X(block, scratch[:0], int(dstLen)); err != nil {
				return nil, err
			}
			out = scratch
		}
		if len(out) != int(dstLen) {
			return nil, fmt.Errorf("lzo: block decompressed to %d bytes, header says %d", len(out), dstLen)
		} else if flags&lzopAdler32D != 0 && adler32.Checksum(out) != sumD ||
			flags&lzopAdler32D == 0 && flags&lzopCRC32D != 0 && crc32.ChecksumIEEE(out) != sumD {
			return nil, errors.New("lzo: checksum mismatch")
		}
		return out, nil
	}, nil
}

// lzopReader reads big-endian fields, remembering the first overrun.
type lzopReader struct {
	data []byte
	off  int
	err  error
}

func (r *lzopReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.data)-r.off {
		r.err = fmt.Errorf("truncated at byte %d", r.off)
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *lzopReader) skip(n int) { r.bytes(n) }

func (r *lzopReader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *lzopReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *lzopReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// decodeLZO1X decodes one LZO1X block, appending at most limit bytes to out.
//
// The stream is a sequence of instructions. Each is an opcode byte whose high
// bits select the kind, with lengths that extend through zero bytes and
// distances completed by one or two more bytes; the two low bits of most
// instructions, S, count literals copied right after the match, and that
// count (the state) changes the meaning of the next opcode below 16.
func decodeLZO1X(src, out []byte, limit int) ([]byte, error) {
	limit += len(out)
	base := len(out)
	ip := 0
	fail := func() ([]byte, error) { return nil, errLZOCorrupt }
	// length reads a length operand: the opcode's bits under mask, or when
	// they are zero, mask + 255 per zero byte + the next non-zero byte.
	length := func(op byte, mask byte) (int, bool) {
		if n := int(op & mask); n != 0 {
			return n, true
		}
		n := int(mask)
		for ip < len(src) && src[ip] == 0 {
			n += 255
			ip++
			if n > limit {
				return 0, false
			}
		}
		if ip >= len(src) {
			return 0, false
		}
		n += int(src[ip])
		ip++
		return n, true
	}
	literals := func(n int) bool {
		if n > len(src)-ip || len(out)+n > limit {
			return false
		}
		out = append(out, src[ip:ip+n]...)
		ip += n
		return true
	}
	match := func(dist, n int) bool {
		if dist > len(out)-base || len(out)+n > limit {
			return false
		}
		from := len(out) - dist
		for n > 0 { // the source may overlap what is being written
			chunk := min(n, dist)
			out = append(out, out[from:from+chunk]...)
			from += chunk
			n -= chunk
		}
		return true
	}

	if len(src) == 0 {
		return fail()
	}
	state := 0
	switch first := src[0]; {
	case first == 17:
		return nil, errors.New("lzo: LZO-RLE streams are not supported")
	case first > 17:
		ip = 1
		n := int(first) - 17
		if !literals(n) {
			return fail()
		}
		state = min(n, 4)
	}
	for {
		if ip >= len(src) {
			return fail()
		}
		op := src[ip]
		ip++
		var dist, n int
		switch {
		case op >= 64: // LDDDSS or LLDDDSS: 3-8 bytes within 2 KiB
			if ip >= len(src) {
				return fail()
			}
			if op >= 128 {
				n = 5 + int(op>>5&3)
			} else {
				n = 3 + int(op>>5&1)
			}
			dist = int(src[ip])<<3 + int(op>>2&7) + 1
			ip++
		case op >= 32: // 001LLLLL then LE16 DDDDDDDD DDDDDDSS: within 16 KiB
			l, ok := length(op, 31)
			if !ok || len(src)-ip < 2 {
				return fail()
			}
			n = 2 + l
			d := int(binary.LittleEndian.Uint16(src[ip:]))
			ip += 2
			dist = d>>2 + 1
			op = byte(d) // S is in the distance's low bits
		case op >= 16: // 0001HLLL then LE16: within 16-48 KiB, or the end
			l, ok := length(op, 7)
			if !ok || len(src)-ip < 2 {
				return fail()
			}
			n = 2 + l
			d := int(binary.LittleEndian.Uint16(src[ip:]))
			ip += 2
			dist = 16384 + int(op&8)<<11 + d>>2
			if dist == 16384 {
				if ip != len(src) {
					return nil, fmt.Errorf("lzo: %d bytes after the end of the block", len(src)-ip)
				}
				return out, nil
			}
			op = byte(d)
		case state == 0: // 0000LLLL: a run of 4 or more literals
			l, ok := length(op, 15)
			if !ok || !literals(3+l) {
				return fail()
			}
			state = 4
			continue
		default: // 0000DDSS then H: 2 bytes within 1 KiB, or 3 bytes at 2-3 KiB after a literal run
			if ip >= len(src) {
				return fail()
			}
			dist = int(src[ip])<<2 + int(op>>2&3) + 1
			ip++
			n = 2
			if state == 4 {
				dist += 2048
				n = 3
			}
		}
		if !match(dist, n) {
			return fail()
		}
		state = int(op & 3)
		if !literals(state) {
			return fail()
		}
	}
}
