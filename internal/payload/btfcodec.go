package payload

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// This file holds a reversible transform of raw BTF that makes minimized
// BTF of different kernels look alike before compression.
//
// Minimized BTF is mostly string table (identifiers) plus types whose
// fields are offsets into that table and IDs of other types. Two kernels
// usually keep the same identifiers and the same type graph, but one extra
// type or string shifts every later ID and offset, so the raw bytes differ
// almost everywhere and a compressor finds short matches only. The packed
// form splits the type section into columns (kind, names, references,
// plain numbers) and rewrites names and references relative to what came
// before, so that shared structure becomes identical bytes:
//
//   - a name offset is 0 for no name, 1 for "the next string not yet
//     referenced" (writers emit strings in first-use order), and otherwise
//     the distance back from that point;
//   - a type reference is 0 for void, 1 for "the next type ID not yet
//     referenced" (writers emit types depth first), and otherwise the
//     distance from the referring type.
//
// The transform applies to standalone little-endian BTF with the 24-byte
// header, types directly followed by strings, and known kinds only; other
// input is stored untransformed. Decoding checks every bound.

// Bits of btf_type.info: vlen in 0-15, kind in 24-28, kind_flag in 31.
const (
	infoVlenMask = 0xffff
	infoKindMask = 0x1f
	infoKnown    = infoVlenMask | infoKindMask<<24 | 1<<31
)

// kindWords returns the record layout of a kind byte from the wire, or
// false for void and kinds the transform does not know.
func kindWords(kind uint32) (rawbtf.Words, bool) {
	if kind > infoKindMask {
		return rawbtf.Words{}, false
	}
	return rawbtf.Kind(kind).Words()
}

// btfHeader is the 24-byte header of standalone BTF.
type btfHeader struct {
	typeLen, strLen uint32
}

// parsePackableHeader reports whether raw is BTF the transform handles and
// returns its section lengths.
func parsePackableHeader(raw []byte) (btfHeader, bool) {
	if len(raw) < rawbtf.HeaderLen {
		return btfHeader{}, false
	}
	return checkHeader(raw[:rawbtf.HeaderLen], uint64(len(raw)))
}

// checkHeader reports whether hdr is a 24-byte little-endian BTF header
// with types first, strings right after, and total bytes in all.
func checkHeader(hdr []byte, total uint64) (btfHeader, bool) {
	le := binary.LittleEndian
	if le.Uint16(hdr[0:]) != rawbtf.Magic || hdr[2] != rawbtf.Version || le.Uint32(hdr[4:]) != rawbtf.HeaderLen {
		return btfHeader{}, false
	}
	typeOff, typeLen := le.Uint32(hdr[8:]), le.Uint32(hdr[12:])
	strOff, strLen := le.Uint32(hdr[16:]), le.Uint32(hdr[20:])
	if typeOff != 0 || strOff != typeLen || uint64(rawbtf.HeaderLen)+uint64(typeLen)+uint64(strLen) != total {
		return btfHeader{}, false
	}
	return btfHeader{typeLen: typeLen, strLen: strLen}, true
}

// refCoder rewrites type IDs relative to the referring type.
type refCoder struct {
	cur, nextNew uint32
}

func (c *refCoder) startType(id uint32) {
	c.cur = id
	c.nextNew = max(c.nextNew, id+1)
}

func (c *refCoder) encode(ref uint32) uint64 {
	var code uint64
	switch ref {
	case 0:
		code = 0
	case c.nextNew:
		code = 1
	default:
		code = zigzag(int64(c.cur)-int64(ref)) + 2
	}
	c.seen(ref)
	return code
}

func (c *refCoder) decode(code uint64) (uint32, error) {
	var ref uint32
	switch code {
	case 0:
		ref = 0
	case 1:
		ref = c.nextNew
	default:
		var err error
		if ref, err = unrelative(c.cur, code-2, "type reference"); err != nil {
			return 0, err
		}
	}
	c.seen(ref)
	return ref, nil
}

func (c *refCoder) seen(ref uint32) {
	if ref != 0xffffffff && ref+1 > c.nextNew {
		c.nextNew = ref + 1
	}
}

// nameCoder rewrites string offsets relative to the end of the furthest
// string referenced so far.
type nameCoder struct {
	strs []byte
	next uint32
}

func (c *nameCoder) encode(off uint32) uint64 {
	var code uint64
	if off != 0 {
		code = zigzag(int64(c.next)-int64(off)) + 1
	}
	c.seen(off)
	return code
}

func (c *nameCoder) decode(code uint64) (uint32, error) {
	var off uint32
	if code != 0 {
		var err error
		if off, err = unrelative(c.next, code-1, "name offset"); err != nil {
			return 0, err
		}
	}
	c.seen(off)
	return off, nil
}

func (c *nameCoder) seen(off uint32) {
	if off < c.next || int(off) >= len(c.strs) {
		return
	}
	end := bytes.IndexByte(c.strs[off:], 0)
	if end < 0 {
		end = len(c.strs) - int(off) - 1
	}
	c.next = off + uint32(end) + 1
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// unrelative undoes a coder's distance: from, less the zigzag-decoded
// distance, which must land on a u32.
func unrelative(from uint32, distance uint64, what string) (uint32, error) {
	v := int64(from) - unzigzag(distance)
	if v < 0 || v > 0xffffffff {
		return 0, fmt.Errorf("%s out of range", what)
	}
	return uint32(v), nil
}

// Pack returns the packed form of raw, or false if raw is not BTF the
// transform handles.
func Pack(raw []byte) ([]byte, bool) {
	hdr, ok := parsePackableHeader(raw)
	if !ok {
		return nil, false
	}
	le := binary.LittleEndian
	types := raw[rawbtf.HeaderLen : rawbtf.HeaderLen+hdr.typeLen]
	strs := raw[rawbtf.HeaderLen+hdr.typeLen:]

	var kinds, names, refs, nums []byte
	nc := nameCoder{strs: strs}
	var rc refCoder
	put := func(f rawbtf.Word, v uint32) {
		switch f {
		case rawbtf.WordName:
			names = binary.AppendUvarint(names, nc.encode(v))
		case rawbtf.WordRef:
			refs = binary.AppendUvarint(refs, rc.encode(v))
		default:
			nums = binary.AppendUvarint(nums, uint64(v))
		}
	}
	for id, off := uint32(1), 0; off < len(types); id++ {
		if len(types)-off < rawbtf.TypeLen {
			return nil, false
		}
		info := le.Uint32(types[off+4:])
		kind := info >> 24 & infoKindMask
		l, ok := kindWords(kind)
		if info&^infoKnown != 0 || !ok {
			return nil, false
		}
		vlen := int(info & infoVlenMask)
		size := rawbtf.TypeLen + 4*(len(l.Extra)+vlen*len(l.PerMember))
		if len(types)-off < size {
			return nil, false
		}
		rc.startType(id)
		kinds = append(kinds, byte(kind|info>>31<<7))
		kinds = binary.AppendUvarint(kinds, uint64(vlen))
		put(rawbtf.WordName, le.Uint32(types[off:]))
		put(l.Third, le.Uint32(types[off+8:]))
		w := off + rawbtf.TypeLen
		for _, f := range l.Extra {
			put(f, le.Uint32(types[w:]))
			w += 4
		}
		for range vlen {
			for _, f := range l.PerMember {
				put(f, le.Uint32(types[w:]))
				w += 4
			}
		}
		off = w
	}

	out := make([]byte, 0, len(raw)+len(kinds)+len(names)+len(refs)+len(nums)+16)
	out = append(out, raw[:rawbtf.HeaderLen]...)
	out = append(out, strs...)
	for _, col := range [][]byte{kinds, names, refs} {
		out = binary.AppendUvarint(out, uint64(len(col)))
		out = append(out, col...)
	}
	return append(out, nums...), true
}
