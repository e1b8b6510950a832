package payload

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

// BTF wire constants, from the kernel's Documentation/bpf/btf.rst.
const (
	btfMagic     = 0xeB9F
	btfVersion   = 1
	btfHeaderLen = 24
	btfTypeLen   = 12

	kindInt       = 1
	kindPtr       = 2
	kindArray     = 3
	kindStruct    = 4
	kindUnion     = 5
	kindEnum      = 6
	kindFwd       = 7
	kindTypedef   = 8
	kindVolatile  = 9
	kindConst     = 10
	kindRestrict  = 11
	kindFunc      = 12
	kindFuncProto = 13
	kindVar       = 14
	kindDatasec   = 15
	kindFloat     = 16
	kindDeclTag   = 17
	kindTypeTag   = 18
	kindEnum64    = 19
	kindMax       = kindEnum64

	// Bits of btf_type.info: vlen in 0-15, kind in 24-28, kind_flag in 31.
	infoVlenMask = 0xffff
	infoKindMask = 0x1f
	infoKnown    = infoVlenMask | infoKindMask<<24 | 1<<31
)

// field classifies one u32 of a type record for the column it goes to.
type field uint8

const (
	fieldName field = iota // offset into the string section
	fieldRef               // type ID
	fieldNum               // anything else: size, offset, value, encoding
)

// layout describes a kind's record: the class of btf_type's third word,
// the words that follow once, and the words that follow vlen times.
type layout struct {
	third     field
	extra     []field
	perMember []field
}

var kindLayouts = [kindMax + 1]layout{
	kindInt:       {third: fieldNum, extra: []field{fieldNum}},
	kindPtr:       {third: fieldRef},
	kindArray:     {third: fieldNum, extra: []field{fieldRef, fieldRef, fieldNum}},
	kindStruct:    {third: fieldNum, perMember: []field{fieldName, fieldRef, fieldNum}},
	kindUnion:     {third: fieldNum, perMember: []field{fieldName, fieldRef, fieldNum}},
	kindEnum:      {third: fieldNum, perMember: []field{fieldName, fieldNum}},
	kindFwd:       {third: fieldNum},
	kindTypedef:   {third: fieldRef},
	kindVolatile:  {third: fieldRef},
	kindConst:     {third: fieldRef},
	kindRestrict:  {third: fieldRef},
	kindFunc:      {third: fieldRef},
	kindFuncProto: {third: fieldRef, perMember: []field{fieldName, fieldRef}},
	kindVar:       {third: fieldRef, extra: []field{fieldNum}},
	kindDatasec:   {third: fieldNum, perMember: []field{fieldRef, fieldNum, fieldNum}},
	kindFloat:     {third: fieldNum},
	kindDeclTag:   {third: fieldRef, extra: []field{fieldNum}},
	kindTypeTag:   {third: fieldRef},
	kindEnum64:    {third: fieldNum, perMember: []field{fieldName, fieldNum, fieldNum}},
}

// btfHeader is the 24-byte header of standalone BTF.
type btfHeader struct {
	typeLen, strLen uint32
}

// parsePackableHeader reports whether raw is BTF the transform handles and
// returns its section lengths.
func parsePackableHeader(raw []byte) (btfHeader, bool) {
	if len(raw) < btfHeaderLen {
		return btfHeader{}, false
	}
	return checkHeader(raw[:btfHeaderLen], uint64(len(raw)))
}

// checkHeader reports whether hdr is a 24-byte little-endian BTF header
// with types first, strings right after, and total bytes in all.
func checkHeader(hdr []byte, total uint64) (btfHeader, bool) {
	le := binary.LittleEndian
	if le.Uint16(hdr[0:]) != btfMagic || hdr[2] != btfVersion || le.Uint32(hdr[4:]) != btfHeaderLen {
		return btfHeader{}, false
	}
	typeOff, typeLen := le.Uint32(hdr[8:]), le.Uint32(hdr[12:])
	strOff, strLen := le.Uint32(hdr[16:]), le.Uint32(hdr[20:])
	if typeOff != 0 || strOff != typeLen || uint64(btfHeaderLen)+uint64(typeLen)+uint64(strLen) != total {
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
		v := int64(c.cur) - unzigzag(code-2)
		if v < 0 || v > 0xffffffff {
			return 0, fmt.Errorf("type reference out of range")
		}
		ref = uint32(v)
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
		v := int64(c.next) - unzigzag(code-1)
		if v < 0 || v > 0xffffffff {
			return 0, fmt.Errorf("name offset out of range")
		}
		off = uint32(v)
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

// Pack returns the packed form of raw, or false if raw is not BTF the
// transform handles.
func Pack(raw []byte) ([]byte, bool) {
	hdr, ok := parsePackableHeader(raw)
	if !ok {
		return nil, false
	}
	le := binary.LittleEndian
	types := raw[btfHeaderLen : btfHeaderLen+hdr.typeLen]
	strs := raw[btfHeaderLen+hdr.typeLen:]

	var kinds, names, refs, nums []byte
	nc := nameCoder{strs: strs}
	var rc refCoder
	put := func(f field, v uint32) {
		switch f {
		case fieldName:
			names = binary.AppendUvarint(names, nc.encode(v))
		case fieldRef:
			refs = binary.AppendUvarint(refs, rc.encode(v))
		default:
			nums = binary.AppendUvarint(nums, uint64(v))
		}
	}
	for id, off := uint32(1), 0; off < len(types); id++ {
		if len(types)-off < btfTypeLen {
			return nil, false
		}
		info := le.Uint32(types[off+4:])
		kind := info >> 24 & infoKindMask
		if info&^infoKnown != 0 || kind == 0 || kind > kindMax {
			return nil, false
		}
		l := kindLayouts[kind]
		vlen := int(info & infoVlenMask)
		size := btfTypeLen + 4*(len(l.extra)+vlen*len(l.perMember))
		if len(types)-off < size {
			return nil, false
		}
		rc.startType(id)
		kinds = append(kinds, byte(kind|info>>31<<7))
		kinds = binary.AppendUvarint(kinds, uint64(vlen))
		put(fieldName, le.Uint32(types[off:]))
		put(l.third, le.Uint32(types[off+8:]))
		w := off + btfTypeLen
		for _, f := range l.extra {
			put(f, le.Uint32(types[w:]))
			w += 4
		}
		for range vlen {
			for _, f := range l.perMember {
				put(f, le.Uint32(types[w:]))
				w += 4
			}
		}
		off = w
	}

	out := make([]byte, 0, len(raw)+len(kinds)+len(names)+len(refs)+len(nums)+16)
	out = append(out, raw[:btfHeaderLen]...)
	out = append(out, strs...)
	for _, col := range [][]byte{kinds, names, refs} {
		out = binary.AppendUvarint(out, uint64(len(col)))
		out = append(out, col...)
	}
	return append(out, nums...), true
}
