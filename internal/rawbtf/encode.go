package rawbtf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// Encoder builds a BTF blob type by type. With a base it writes split BTF:
// IDs continue after the base's last ID, and names the base's string table
// already holds are referred to there rather than copied.
//
// The output depends only on the records added and their order.
type Encoder struct {
	bo      binary.AppendByteOrder
	base    *Spec
	types   []byte
	strs    []byte
	strOffs map[string]uint32
	nextID  TypeID
}

// NewEncoder starts an empty blob in byte order bo; base is nil for
// standalone BTF.
func NewEncoder(bo binary.ByteOrder, base *Spec) *Encoder {
	e := &Encoder{bo: bo.(binary.AppendByteOrder), base: base, strOffs: map[string]uint32{"": 0}, nextID: 1}
	if base != nil {
		e.nextID = base.NextID()
	} else {
		e.strs = []byte{0} // offset 0 is the empty string
	}
	return e
}

// NextID is the ID the next Add returns.
func (e *Encoder) NextID() TypeID { return e.nextID }

func (e *Encoder) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if off, ok := e.strOffs[s]; ok {
		return off
	}
	if e.base != nil {
		if off, ok := e.base.findString(s); ok {
			e.strOffs[s] = off
			return off
		}
	}
	var off uint32
	if e.base != nil {
		off = e.base.strBase + uint32(len(e.base.strs)) + uint32(len(e.strs))
	} else {
		off = uint32(len(e.strs))
	}
	e.strs = append(e.strs, s...)
	e.strs = append(e.strs, 0)
	e.strOffs[s] = off
	return off
}

// findString returns the offset of a string of s or its base, so split
// BTF can refer to the base's copy. The index is built once per Spec and
// shared by every Encoder over it.
func (s *Spec) findString(str string) (uint32, bool) {
	if s.base != nil {
		if off, ok := s.base.findString(str); ok {
			return off, true
		}
	}
	s.stringsOnce.Do(s.buildStringIndex)
	want := []byte(str)
	for _, e := range hashRange(s.stringIdx, hashName(want)) {
		if off := uint32(e); bytes.Equal(s.stringBytes(off), want) {
			return off, true
		}
	}
	return 0, false
}

func (s *Spec) buildStringIndex() {
	idx := make([]uint64, 0, len(s.strs)/16)
	for off := 0; off < len(s.strs); {
		end := off + bytes.IndexByte(s.strs[off:], 0)
		if end > off {
			idx = append(idx, packEntry(hashName(s.strs[off:end]), s.strBase+uint32(off)))
		}
		off = end + 1
	}
	slices.Sort(idx)
	s.stringIdx = idx
}

func (e *Encoder) put(v uint32) { e.types = e.bo.AppendUint32(e.types, v) }

// Add appends r and returns its ID. References in r are written as they
// are: the caller maps them to IDs of this blob first.
func (e *Encoder) Add(r Record) (TypeID, error) {
	if r.Kind == KindVoid || r.Kind >= numKnownKinds {
		return 0, fmt.Errorf("cannot encode kind %v", r.Kind)
	}
	if e.nextID > maxTypeID {
		return 0, fmt.Errorf("more than %d types", maxTypeID)
	}
	vlen := 0
	switch r.Kind {
	case KindStruct, KindUnion:
		vlen = len(r.Members)
	case KindEnum, KindEnum64:
		vlen = len(r.Values)
	case KindFuncProto:
		vlen = len(r.Params)
	case KindDatasec:
		vlen = len(r.Vars)
	case KindFunc:
		vlen = int(r.Linkage)
	}
	if vlen > 0xffff {
		// Old kernels and libbpf read 16 bits of vlen.
		return 0, fmt.Errorf("%v %q: %d entries exceed 65535", r.Kind, r.Name, vlen)
	}
	info := uint32(r.Kind)<<24 | uint32(vlen)
	if r.KindFlag {
		info |= 1 << 31
	}
	e.put(e.str(r.Name))
	e.put(info)
	e.put(r.SizeType)
	switch r.Kind {
	case KindInt:
		e.put(r.Int.word())
	case KindArray:
		e.put(uint32(r.Array.Type))
		e.put(uint32(r.Array.Index))
		e.put(r.Array.Nelems)
	case KindStruct, KindUnion:
		for _, m := range r.Members {
			off := m.BitOffset
			if r.KindFlag {
				if m.BitOffset > 0xffffff || m.BitfieldSize > 0xff {
					return 0, fmt.Errorf("%v %q member %q: bit offset %d or bitfield size %d out of range", r.Kind, r.Name, m.Name, m.BitOffset, m.BitfieldSize)
				}
				off |= m.BitfieldSize << 24
			} else if m.BitfieldSize != 0 {
				return 0, fmt.Errorf("%v %q member %q: bitfield without kind_flag", r.Kind, r.Name, m.Name)
			}
			e.put(e.str(m.Name))
			e.put(uint32(m.Type))
			e.put(off)
		}
	case KindEnum:
		for _, v := range r.Values {
			e.put(e.str(v.Name))
			e.put(uint32(v.Value))
		}
	case KindEnum64:
		for _, v := range r.Values {
			e.put(e.str(v.Name))
			e.put(uint32(v.Value))
			e.put(uint32(v.Value >> 32))
		}
	case KindFuncProto:
		for _, p := range r.Params {
			e.put(e.str(p.Name))
			e.put(uint32(p.Type))
		}
	case KindVar:
		e.put(r.Linkage)
	case KindDatasec:
		for _, v := range r.Vars {
			e.put(uint32(v.Type))
			e.put(v.Offset)
			e.put(v.Size)
		}
	case KindDeclTag:
		e.put(uint32(r.ComponentIdx))
	}
	id := e.nextID
	e.nextID++
	return id, nil
}

// Bytes returns the blob: a 24-byte header, the types, the strings.
func (e *Encoder) Bytes() []byte {
	h := Header{
		HdrLen:  HeaderLen,
		TypeLen: uint32(len(e.types)),
		StrOff:  uint32(len(e.types)),
		StrLen:  uint32(len(e.strs)),
	}
	out := make([]byte, HeaderLen, h.Size())
	h.put(e.bo.(binary.ByteOrder), out)
	out = append(out, e.types...)
	return append(out, e.strs...)
}
