package rawbtf

import (
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// TypeID identifies a type within a BTF blob and, for split BTF, its base.
// It is cilium/ebpf's, so IDs pass between the two without conversion.
type TypeID = btf.TypeID

// Kind is the BTF_KIND_* of a type record.
type Kind uint8

// The BTF kinds, numbered as on the wire.
const (
	KindVoid Kind = iota
	KindInt
	KindPtr
	KindArray
	KindStruct
	KindUnion
	KindEnum
	KindFwd
	KindTypedef
	KindVolatile
	KindConst
	KindRestrict
	KindFunc
	KindFuncProto
	KindVar
	KindDatasec
	KindFloat
	KindDeclTag
	KindTypeTag
	KindEnum64
	numKnownKinds
)

var kindNames = [...]string{
	KindVoid:      "void",
	KindInt:       "int",
	KindPtr:       "ptr",
	KindArray:     "array",
	KindStruct:    "struct",
	KindUnion:     "union",
	KindEnum:      "enum",
	KindFwd:       "fwd",
	KindTypedef:   "typedef",
	KindVolatile:  "volatile",
	KindConst:     "const",
	KindRestrict:  "restrict",
	KindFunc:      "func",
	KindFuncProto: "func_proto",
	KindVar:       "var",
	KindDatasec:   "datasec",
	KindFloat:     "float",
	KindDeclTag:   "decl_tag",
	KindTypeTag:   "type_tag",
	KindEnum64:    "enum64",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// IsComposite reports whether k is a struct or union.
func (k Kind) IsComposite() bool { return k == KindStruct || k == KindUnion }

// IsEnum reports whether k is an enum of either width.
func (k Kind) IsEnum() bool { return k == KindEnum || k == KindEnum64 }

// IsQualifier reports whether k only qualifies the type it refers to.
func (k Kind) IsQualifier() bool {
	return k == KindVolatile || k == KindConst || k == KindRestrict || k == KindTypeTag
}

// hasRef reports whether the third word of a type record refers to a type.
func (k Kind) hasRef() bool {
	switch k {
	case KindPtr, KindTypedef, KindVolatile, KindConst, KindRestrict, KindFunc,
		KindFuncProto, KindVar, KindDeclTag, KindTypeTag:
		return true
	}
	return false
}

// layout gives the bytes a record of kind k carries after its 12-byte
// common part: a fixed part and a part per vlen element.
type layout struct{ info, elem uint8 }

var knownLayouts = [numKnownKinds]layout{
	KindInt:       {4, 0},
	KindPtr:       {0, 0},
	KindArray:     {12, 0},
	KindStruct:    {0, 12},
	KindUnion:     {0, 12},
	KindEnum:      {0, 8},
	KindFwd:       {0, 0},
	KindTypedef:   {0, 0},
	KindVolatile:  {0, 0},
	KindConst:     {0, 0},
	KindRestrict:  {0, 0},
	KindFunc:      {0, 0},
	KindFuncProto: {0, 8},
	KindVar:       {4, 0},
	KindDatasec:   {0, 12},
	KindFloat:     {0, 0},
	KindDeclTag:   {4, 0},
	KindTypeTag:   {0, 0},
	KindEnum64:    {0, 12},
}
