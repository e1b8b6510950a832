package rawbtf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"
)

// maxTypeID is BTF_MAX_TYPE: IDs are 20 bits wide in kernel structures.
const maxTypeID = 0xfffff

// Spec is one parsed BTF blob, standalone or split over a base.
//
// A Spec is immutable after Parse and safe for concurrent use. It retains
// the data passed to Parse, which the caller must not modify.
type Spec struct {
	raw      []byte
	bo       binary.ByteOrder
	big      bool // bo is big-endian: u32 decodes without an interface call
	hdr      Header
	types    []byte   // the type section
	strs     []byte   // the string section
	layouts  []layout // from the layout section, indexed by kind; nil if absent
	offsets  []uint32 // offsets[i] is where type firstID+i starts in types
	datasecs []TypeID // the data sections, found while indexing
	base     *Spec
	firstID  TypeID
	strBase  uint32 // string offsets below this are the base's

	namesOnce sync.Once
	names     []uint64 // essential-name index, see packEntry

	stringsOnce sync.Once
	stringIdx   []uint64 // string index, for encoding split BTF over s

	lookupMu sync.Mutex
	looked   map[string][]TypeID // what LookupEssentialNames found, by name
}

// Parse checks data as a BTF blob and indexes its types. base is nil for
// standalone BTF (vmlinux, an object's .BTF) and the base for split BTF
// (a kernel module's .BTF over its vmlinux).
//
// Parse reads every type record once, checking that it is well framed and
// that every name offset and type reference it holds is in range, so that
// the accessors of Type never fail afterwards. Nothing else is decoded.
// A caller that needs the index of the same bytes in several places
// passes the Spec along rather than parsing again.
func Parse(data []byte, base *Spec) (*Spec, error) {
	hdr, bo, err := ParseHeader(data)
	if err != nil {
		return nil, err
	}
	s := &Spec{raw: data, bo: bo, big: bo == binary.BigEndian, hdr: hdr, base: base, firstID: 1}
	if base != nil {
		if base.bo != bo {
			return nil, fmt.Errorf("split BTF is %v but its base is %v", bo, base.bo)
		}
		s.firstID = base.NextID()
		s.strBase = base.strBase + uint32(len(base.strs))
	}
	body := data[hdr.HdrLen:]
	s.types = body[hdr.TypeOff : hdr.TypeOff+hdr.TypeLen]
	s.strs = body[hdr.StrOff : hdr.StrOff+hdr.StrLen]
	if err := s.checkStrings(); err != nil {
		return nil, err
	}
	if hdr.LayoutLen > 0 {
		if err := s.parseLayouts(body[hdr.LayoutOff : hdr.LayoutOff+hdr.LayoutLen]); err != nil {
			return nil, err
		}
	}
	if err := s.indexTypes(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Spec) checkStrings() error {
	if len(s.strs) == 0 {
		if s.base == nil {
			return fmt.Errorf("empty string section")
		}
		return nil
	}
	if s.base == nil && s.strs[0] != 0 {
		return fmt.Errorf("string section does not start with an empty string")
	}
	if s.strs[len(s.strs)-1] != 0 {
		return fmt.Errorf("string section is not NUL-terminated")
	}
	return nil
}

func (s *Spec) parseLayouts(sec []byte) error {
	if len(sec)%4 != 0 {
		return fmt.Errorf("layout section length %d is not a multiple of 4", len(sec))
	}
	s.layouts = make([]layout, len(sec)/4)
	for i := range s.layouts {
		s.layouts[i] = layout{info: sec[4*i], elem: sec[4*i+1]}
		if i < int(numKnownKinds) && i != int(KindVoid) && s.layouts[i] != knownLayouts[i] {
			return fmt.Errorf("layout of kind %v (%d+%d bytes) contradicts the format (%d+%d)",
				Kind(i), s.layouts[i].info, s.layouts[i].elem, knownLayouts[i].info, knownLayouts[i].elem)
		}
	}
	return nil
}

// recordLayout returns how many bytes follow the common part of a record
// of kind k, from the format for known kinds, else from the layout section.
func (s *Spec) recordLayout(k Kind) (layout, bool) {
	if k != KindVoid && k < numKnownKinds {
		return knownLayouts[k], true
	}
	if int(k) < len(s.layouts) && k != KindVoid {
		return s.layouts[k], true
	}
	return layout{}, false
}

// indexTypes is the one linear pass: it records each record's offset and
// checks names and references.
func (s *Spec) indexTypes() error {
	if len(s.types)%4 != 0 {
		return fmt.Errorf("type section length %d is not a multiple of 4", len(s.types))
	}
	// One pass frames every record, notes where it starts, and keeps the
	// largest name offset and type reference, so that a second pass is
	// needed only to name what is out of range. The offsets are sized by
	// a guess (kernel records average 25-26 bytes) rather than by a
	// framing pass that counted them first: that pass was a quarter of
	// Parse (go test ./internal/rawbtf -bench 'Parse$': 2.4-2.7 ms, now
	// 1.8-2.0 ms on 6.1.0-47-amd64). A blob of smaller records grows them.
	s.offsets = make([]uint32, 0, len(s.types)/22+1)
	var maxName, maxRef uint32
	inside := false // some name offset points inside a string
	for off := 0; off < len(s.types); {
		k, vlen, size, err := s.frame(off, uint64(s.firstID)+uint64(len(s.offsets)))
		if err != nil {
			return err
		}
		if k == KindDatasec {
			s.datasecs = append(s.datasecs, s.firstID+TypeID(len(s.offsets)))
		}
		s.offsets = append(s.offsets, uint32(off))
		name, ref, in := s.maxOffsets(k, vlen, s.types[off:off+size])
		maxName, maxRef, inside = max(maxName, name), max(maxRef, ref), inside || in
		off += size
	}
	next := s.NextID()
	if s.validString(maxName) && TypeID(maxRef) < next && !inside {
		return nil
	}
	// Second pass: find the name offset or reference out of range, or the
	// name inside a string.
	for i, off := range s.offsets {
		id := s.firstID + TypeID(i)
		if err := s.checkRecord(off, next); err != nil {
			return fmt.Errorf("type %d: %w", id, err)
		}
	}
	return nil
}

// frame returns the kind, vlen and length of the record at off, type id,
// checking that it fits the type section.
func (s *Spec) frame(off int, id uint64) (Kind, int, int, error) {
	if id > maxTypeID {
		return 0, 0, 0, fmt.Errorf("more than %d types", maxTypeID)
	}
	if len(s.types)-off < 12 {
		return 0, 0, 0, fmt.Errorf("type %d at offset %d: truncated record", id, off)
	}
	info := s.u32(s.types[off+4:])
	k, vlen := infoKind(info), infoVlen(info)
	l, ok := s.recordLayout(k)
	if !ok {
		return 0, 0, 0, fmt.Errorf("type %d at offset %d: unknown kind %d and no layout for it", id, off, k)
	}
	size := TypeLen + int(l.info) + int(l.elem)*vlen
	if size > len(s.types)-off {
		return 0, 0, 0, fmt.Errorf("type %d (%v) at offset %d: record of %d bytes overruns the type section", id, k, off, size)
	}
	return k, vlen, size, nil
}

// maxOffsets returns the largest name offset and the largest type
// reference of record rec, and whether any of its name offsets points
// inside a string: what checkRecord checks, without the checks.
func (s *Spec) maxOffsets(k Kind, vlen int, rec []byte) (name, ref uint32, inside bool) {
	name = s.u32(rec)
	inside = s.insideString(name)
	if k.hasRef() {
		ref = s.u32(rec[8:])
	}
	body := rec[12:]
	switch k {
	case KindArray:
		ref = max(ref, s.u32(body), s.u32(body[4:]))
	case KindStruct, KindUnion:
		for m := range vlen {
			n := s.u32(body[12*m:])
			name, inside = max(name, n), inside || s.insideString(n)
			ref = max(ref, s.u32(body[12*m+4:]))
		}
	case KindEnum:
		for v := range vlen {
			n := s.u32(body[8*v:])
			name, inside = max(name, n), inside || s.insideString(n)
		}
	case KindEnum64:
		for v := range vlen {
			n := s.u32(body[12*v:])
			name, inside = max(name, n), inside || s.insideString(n)
		}
	case KindFuncProto:
		for p := range vlen {
			n := s.u32(body[8*p:])
			name, inside = max(name, n), inside || s.insideString(n)
			ref = max(ref, s.u32(body[8*p+4:]))
		}
	case KindDatasec:
		for v := range vlen {
			ref = max(ref, s.u32(body[12*v:]))
		}
	}
	return name, ref, inside
}

// insideString tells whether off, a name offset, points past the first
// byte of a string: "task_struct" taken from "xtask_struct" at its offset
// plus one. The format asks only for an offset into the string section,
// and libbpf and the kernel check no more, but cilium/ebpf, the consumer,
// refuses such a name ("offset N is not the beginning of a string") when
// it decodes the type. The full BTF then fails a relocation that the
// minimized BTF, whose encoder writes the name as a string of its own,
// resolves, and the oracle blames btfembed. No compiler, pahole or libbpf
// writes such offsets (their string sets share whole strings only), so
// Parse refuses them and names the type. An offset out of range is not
// inside a string: validString judges it. Reading the byte before every
// name costs Parse a third more on 6.1.0-47-amd64 (go test
// ./internal/rawbtf -bench 'Parse$', best of 30 on a busy 2-core
// machine: 1.85 ms before, 2.48 ms after), against the tens of ms a
// kernel costs a generate run.
func (s *Spec) insideString(off uint32) bool {
	if off < s.strBase {
		return s.insideBase(off)
	}
	prev := off - s.strBase - 1 // the byte before; wraps past len for the first string
	return prev < uint32(len(s.strs)) && s.strs[prev] != 0
}

// insideBase is insideString for an offset into the base's strings, kept
// apart so that insideString, called for every name Parse reads, inlines.
//
//go:noinline
func (s *Spec) insideBase(off uint32) bool {
	return s.base != nil && s.base.insideString(off)
}

// errInside describes a name offset that insideString refuses, quoting
// the string it points into.
func (s *Spec) errInside(off uint32) error {
	return fmt.Errorf("name offset %d points inside the string %q, not at its start (cilium/ebpf cannot read it)", off, s.enclosingString(off))
}

// enclosingString returns the whole string a valid offset points into.
func (s *Spec) enclosingString(off uint32) string {
	if off < s.strBase {
		return s.base.enclosingString(off)
	}
	i := off - s.strBase
	start := bytes.LastIndexByte(s.strs[:i], 0) + 1
	return s.str(s.strBase + uint32(start))
}

func (s *Spec) checkRecord(off uint32, next TypeID) error {
	rec := s.types[off:]
	nameOff := s.u32(rec)
	info := s.u32(rec[4:])
	k, vlen := infoKind(info), infoVlen(info)
	word := s.u32(rec[8:])
	body := rec[12:]
	if !s.validString(nameOff) {
		return fmt.Errorf("name offset %d out of range", nameOff)
	}
	if s.insideString(nameOff) {
		return fmt.Errorf("%v: %w", k, s.errInside(nameOff))
	}
	typ := k.String()
	if nameOff != 0 {
		typ += " " + s.str(nameOff) // its own name is sound: say it
	}
	ref := func(what string, t uint32) error {
		if TypeID(t) >= next {
			return fmt.Errorf("%v %s refers to type %d, past the last type %d", k, what, t, next-1)
		}
		return nil
	}
	name := func(what string, i int, o uint32) error {
		if !s.validString(o) {
			return fmt.Errorf("%v %s name offset %d out of range", k, what, o)
		}
		if s.insideString(o) {
			return fmt.Errorf("%s, %s %d: %w", typ, what, i, s.errInside(o))
		}
		return nil
	}
	if k.hasRef() {
		if err := ref("type", word); err != nil {
			return err
		}
	}
	u32 := func(i int) uint32 { return s.u32(body[4*i:]) }
	switch k {
	case KindArray:
		if err := ref("element", u32(0)); err != nil {
			return err
		}
		return ref("index", u32(1))
	case KindStruct, KindUnion:
		for m := range vlen {
			if err := name("member", m, u32(3*m)); err != nil {
				return err
			}
			if err := ref("member", u32(3*m+1)); err != nil {
				return err
			}
		}
	case KindEnum:
		for v := range vlen {
			if err := name("value", v, u32(2*v)); err != nil {
				return err
			}
		}
	case KindEnum64:
		for v := range vlen {
			if err := name("value", v, u32(3*v)); err != nil {
				return err
			}
		}
	case KindFuncProto:
		for p := range vlen {
			if err := name("parameter", p, u32(2*p)); err != nil {
				return err
			}
			if err := ref("parameter", u32(2*p+1)); err != nil {
				return err
			}
		}
	case KindDatasec:
		for v := range vlen {
			if err := ref("variable", u32(3*v)); err != nil {
				return err
			}
		}
	}
	return nil
}

func infoKind(info uint32) Kind { return Kind((info >> 24) & 0x7f) }
func infoVlen(info uint32) int  { return int(info & 0xffffff) }
func infoKindFlag(info uint32) bool {
	return info>>31 == 1
}

// u32 decodes a word of the blob. Parsing and every accessor decode words
// by the hundred thousand; binary.ByteOrder's methods are interface calls.
func (s *Spec) u32(b []byte) uint32 {
	if s.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (s *Spec) validString(off uint32) bool {
	if off < s.strBase {
		return s.base != nil && s.base.validString(off)
	}
	return int(off-s.strBase) < len(s.strs)
}

// stringBytes returns the NUL-terminated string at off, without the NUL.
// off must be valid.
func (s *Spec) stringBytes(off uint32) []byte {
	if off < s.strBase {
		return s.base.stringBytes(off)
	}
	b := s.strs[off-s.strBase:]
	return b[:bytes.IndexByte(b, 0)]
}

// str returns the string at a checked offset without copying: the blob is
// immutable for the life of the Spec.
func (s *Spec) str(off uint32) string {
	b := s.stringBytes(off)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// String returns the string at offset off of the string table (for split
// BTF, offsets below the base's table length are the base's).
func (s *Spec) String(off uint32) (string, error) {
	if !s.validString(off) {
		return "", fmt.Errorf("string offset %d out of range", off)
	}
	return s.str(off), nil
}

// ByteOrder is the byte order of the blob.
func (s *Spec) ByteOrder() binary.ByteOrder { return s.bo }

// Base is the base of split BTF, nil for standalone BTF.
func (s *Spec) Base() *Spec { return s.base }

// FirstID is the first type ID this blob defines: 1 for standalone BTF
// (0 is void), the base's NextID for split BTF.
func (s *Spec) FirstID() TypeID { return s.firstID }

// NextID is one past the last type ID this blob defines.
func (s *Spec) NextID() TypeID { return s.firstID + TypeID(len(s.offsets)) }

// Raw is the blob as passed to Parse.
func (s *Spec) Raw() []byte { return s.raw[:s.hdr.Size()] }

// Datasecs returns the IDs of the blob's own data sections, in order.
func (s *Spec) Datasecs() []TypeID { return s.datasecs }

// Header is the blob's header.
func (s *Spec) Header() Header { return s.hdr }

// Type returns a view of type id, which may belong to the base. ID 0 is
// void.
func (s *Spec) Type(id TypeID) (Type, error) {
	if id == 0 {
		return Type{spec: s}, nil
	}
	if id < s.firstID {
		if s.base == nil {
			return Type{}, fmt.Errorf("type %d: no such type", id)
		}
		return s.base.Type(id)
	}
	i := id - s.firstID
	if i >= TypeID(len(s.offsets)) {
		return Type{}, fmt.Errorf("type %d: no such type (last is %d)", id, s.NextID()-1)
	}
	return s.view(id, s.offsets[i]), nil
}

func (s *Spec) view(id TypeID, off uint32) Type {
	rec := s.types[off:]
	info := s.u32(rec[4:])
	k := infoKind(info)
	l, _ := s.recordLayout(k)
	vlen := infoVlen(info)
	return Type{
		ID:       id,
		Kind:     k,
		Name:     s.str(s.u32(rec)),
		Vlen:     vlen,
		KindFlag: infoKindFlag(info),
		word:     s.u32(rec[8:]),
		spec:     s,
		body:     rec[TypeLen : TypeLen+int(l.info)+int(l.elem)*vlen],
	}
}
