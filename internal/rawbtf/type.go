package rawbtf

import "slices"

// Type is a view of one type record. It is cheap to copy; the accessors
// decode single fields on demand and never fail on a Spec that Parse
// accepted (they panic on an out-of-range index, like a slice would).
type Type struct {
	ID       TypeID
	Kind     Kind
	Name     string
	Vlen     int
	KindFlag bool

	word uint32 // size or type, as Kind says
	spec *Spec
	body []byte // the bytes after the 12-byte common part
}

// IntEnc is the encoding word of an INT.
type IntEnc struct {
	Encoding uint8 // IntSigned | IntChar | IntBool
	Offset   uint8 // bit offset (legacy bitfields), always 0 from pahole
	Bits     uint8
}

// INT encodings.
const (
	IntSigned = 1 << 0
	IntChar   = 1 << 1
	IntBool   = 1 << 2
)

// Array is the body of an ARRAY.
type Array struct {
	Type   TypeID
	Index  TypeID
	Nelems uint32
}

// Member is a STRUCT or UNION member, with kind_flag decoded.
type Member struct {
	Name         string
	Type         TypeID
	BitOffset    uint32
	BitfieldSize uint32 // 0 unless a bitfield member of a kind_flag composite
}

// EnumValue is an ENUM or ENUM64 enumerator. ENUM values are sign-extended
// when the enum is signed and zero-extended otherwise, as cilium/ebpf does.
type EnumValue struct {
	Name  string
	Value uint64
}

// Param is a FUNC_PROTO parameter.
type Param struct {
	Name string
	Type TypeID
}

// VarSecinfo is a DATASEC entry.
type VarSecinfo struct {
	Type   TypeID
	Offset uint32
	Size   uint32
}

// Spec is the blob holding this type's record.
func (t Type) Spec() *Spec { return t.spec }

// Size of INT, STRUCT, UNION, ENUM, ENUM64, FLOAT and DATASEC types.
func (t Type) Size() uint32 { return t.word }

// Ref is the type referred to by PTR, TYPEDEF, qualifiers, FUNC, VAR,
// DECL_TAG and TYPE_TAG, and the return type of a FUNC_PROTO.
func (t Type) Ref() TypeID { return TypeID(t.word) }

func (t Type) u32(i int) uint32 { return t.spec.u32(t.body[4*i:]) }

// Int is the encoding of an INT.
func (t Type) Int() IntEnc {
	v := t.u32(0)
	return IntEnc{Encoding: uint8(v >> 24 & 0x0f), Offset: uint8(v >> 16), Bits: uint8(v)}
}

func (e IntEnc) word() uint32 {
	return uint32(e.Encoding)<<24 | uint32(e.Offset)<<16 | uint32(e.Bits)
}

// Array is the body of an ARRAY.
func (t Type) Array() Array {
	return Array{Type: TypeID(t.u32(0)), Index: TypeID(t.u32(1)), Nelems: t.u32(2)}
}

// Member is member i of a STRUCT or UNION.
func (t Type) Member(i int) Member {
	m := Member{Name: t.spec.str(t.u32(3 * i)), Type: TypeID(t.u32(3*i + 1)), BitOffset: t.u32(3*i + 2)}
	if t.KindFlag {
		m.BitfieldSize = m.BitOffset >> 24
		m.BitOffset &= 0xffffff
	}
	return m
}

// Signed reports whether an ENUM or ENUM64 is signed.
func (t Type) Signed() bool { return t.KindFlag }

// EnumValue is enumerator i of an ENUM or ENUM64.
func (t Type) EnumValue(i int) EnumValue {
	if t.Kind == KindEnum64 {
		lo, hi := uint64(t.u32(3*i+1)), uint64(t.u32(3*i+2))
		return EnumValue{Name: t.spec.str(t.u32(3 * i)), Value: hi<<32 | lo}
	}
	v := t.u32(2*i + 1)
	val := uint64(v)
	if t.KindFlag {
		val = uint64(int64(int32(v)))
	}
	return EnumValue{Name: t.spec.str(t.u32(2 * i)), Value: val}
}

// Param is parameter i of a FUNC_PROTO.
func (t Type) Param(i int) Param {
	return Param{Name: t.spec.str(t.u32(2 * i)), Type: TypeID(t.u32(2*i + 1))}
}

// Linkage of a VAR, or of a FUNC (which keeps it in vlen).
func (t Type) Linkage() uint32 {
	if t.Kind == KindFunc {
		return uint32(t.Vlen)
	}
	return t.u32(0)
}

// VarSecinfo is entry i of a DATASEC.
func (t Type) VarSecinfo(i int) VarSecinfo {
	return VarSecinfo{Type: TypeID(t.u32(3 * i)), Offset: t.u32(3*i + 1), Size: t.u32(3*i + 2)}
}

// ComponentIdx of a DECL_TAG: -1 for the type itself, else a member or
// parameter index.
func (t Type) ComponentIdx() int32 { return int32(t.u32(0)) }

// Record is a whole type as a plain value, to edit and encode.
type Record struct {
	Kind     Kind
	Name     string
	KindFlag bool
	// SizeType is the size or the referenced type, as Kind says. For FUNC
	// it is the FUNC_PROTO; the linkage is in Linkage.
	SizeType     uint32
	Int          IntEnc
	Array        Array
	Members      []Member
	Values       []EnumValue
	Params       []Param
	Linkage      uint32
	Vars         []VarSecinfo
	ComponentIdx int32
}

// Record decodes the whole type. Kinds this package only knows by their
// layout cannot be decoded and yield a Record with Kind alone.
func (t Type) Record() Record {
	r := Record{Kind: t.Kind, Name: t.Name, KindFlag: t.KindFlag, SizeType: t.word}
	switch t.Kind {
	case KindInt:
		r.Int = t.Int()
	case KindArray:
		r.Array = t.Array()
	case KindStruct, KindUnion:
		r.Members = make([]Member, t.Vlen)
		for i := range r.Members {
			r.Members[i] = t.Member(i)
		}
	case KindEnum, KindEnum64:
		r.Values = make([]EnumValue, t.Vlen)
		for i := range r.Values {
			r.Values[i] = t.EnumValue(i)
		}
	case KindFuncProto:
		r.Params = make([]Param, t.Vlen)
		for i := range r.Params {
			r.Params[i] = t.Param(i)
		}
	case KindFunc, KindVar:
		r.Linkage = t.Linkage()
	case KindDatasec:
		r.Vars = make([]VarSecinfo, t.Vlen)
		for i := range r.Vars {
			r.Vars[i] = t.VarSecinfo(i)
		}
	case KindDeclTag:
		r.ComponentIdx = t.ComponentIdx()
	}
	return r
}

// MapRefs replaces every type reference in r by fn of it, so a caller can
// renumber a type whatever its kind. Members, parameters and variables are
// copied first: r may share them with the record it was derived from.
func (r *Record) MapRefs(fn func(TypeID) TypeID) {
	if r.Kind.hasRef() {
		r.SizeType = uint32(fn(TypeID(r.SizeType)))
	}
	switch r.Kind {
	case KindArray:
		r.Array.Type = fn(r.Array.Type)
		r.Array.Index = fn(r.Array.Index)
	case KindStruct, KindUnion:
		r.Members = slices.Clone(r.Members)
		for i := range r.Members {
			r.Members[i].Type = fn(r.Members[i].Type)
		}
	case KindFuncProto:
		r.Params = slices.Clone(r.Params)
		for i := range r.Params {
			r.Params[i].Type = fn(r.Params[i].Type)
		}
	case KindDatasec:
		r.Vars = slices.Clone(r.Vars)
		for i := range r.Vars {
			r.Vars[i].Type = fn(r.Vars[i].Type)
		}
	}
}
