package rawbtf

import (
	"github.com/cilium/ebpf/btf"
)

// TypeID identifies a type within a BTF blob and, for split BTF, its base.
// It is cilium/ebpf's, so IDs pass between the two without conversion.
type TypeID = btf.TypeID

//go:generate go tool stringer -type Kind -linecomment

// Kind is the BTF_KIND_* of a type record.
type Kind uint8

// The BTF kinds, numbered as on the wire.
const (
	KindVoid      Kind = iota // void
	KindInt                   // int
	KindPtr                   // ptr
	KindArray                 // array
	KindStruct                // struct
	KindUnion                 // union
	KindEnum                  // enum
	KindFwd                   // fwd
	KindTypedef               // typedef
	KindVolatile              // volatile
	KindConst                 // const
	KindRestrict              // restrict
	KindFunc                  // func
	KindFuncProto             // func_proto
	KindVar                   // var
	KindDatasec               // datasec
	KindFloat                 // float
	KindDeclTag               // decl_tag
	KindTypeTag               // type_tag
	KindEnum64                // enum64
)

// numKnownKinds is the number of kinds this package knows, void included.
const numKnownKinds = KindEnum64 + 1

// IsComposite reports whether k is a struct or union.
func (k Kind) IsComposite() bool { return k == KindStruct || k == KindUnion }

// IsEnum reports whether k is an enum of either width.
func (k Kind) IsEnum() bool { return k == KindEnum || k == KindEnum64 }

// IsQualifier reports whether k only qualifies the type it refers to.
func (k Kind) IsQualifier() bool {
	return k == KindVolatile || k == KindConst || k == KindRestrict || k == KindTypeTag
}

// Word classifies one u32 of a type record: what the column transform of
// btfembed's payload and anything else that rewrites records must treat
// as a string offset or a type ID.
type Word uint8

const (
	WordNum  Word = iota // anything else: size, offset, value, encoding
	WordName             // an offset into the string section
	WordRef              // a type ID
)

// Words describes a kind's record after name_off and info: the class of
// btf_type's third word (size or type), the words that follow once, and
// the words that follow vlen times (Documentation/bpf/btf.rst, 2.2).
type Words struct {
	Third     Word
	Extra     []Word
	PerMember []Word
}

// kindWords is the one table of record layouts: the lengths the parser
// checks and whether the third word is a reference derive from it.
var kindWords = [numKnownKinds]Words{
	KindInt:       {Third: WordNum, Extra: []Word{WordNum}},
	KindPtr:       {Third: WordRef},
	KindArray:     {Third: WordNum, Extra: []Word{WordRef, WordRef, WordNum}},
	KindStruct:    {Third: WordNum, PerMember: []Word{WordName, WordRef, WordNum}},
	KindUnion:     {Third: WordNum, PerMember: []Word{WordName, WordRef, WordNum}},
	KindEnum:      {Third: WordNum, PerMember: []Word{WordName, WordNum}},
	KindFwd:       {Third: WordNum},
	KindTypedef:   {Third: WordRef},
	KindVolatile:  {Third: WordRef},
	KindConst:     {Third: WordRef},
	KindRestrict:  {Third: WordRef},
	KindFunc:      {Third: WordRef},
	KindFuncProto: {Third: WordRef, PerMember: []Word{WordName, WordRef}},
	KindVar:       {Third: WordRef, Extra: []Word{WordNum}},
	KindDatasec:   {Third: WordNum, PerMember: []Word{WordRef, WordNum, WordNum}},
	KindFloat:     {Third: WordNum},
	KindDeclTag:   {Third: WordRef, Extra: []Word{WordNum}},
	KindTypeTag:   {Third: WordRef},
	KindEnum64:    {Third: WordNum, PerMember: []Word{WordName, WordNum, WordNum}},
}

// Words returns the layout of k's records, or false for void and kinds
// this package does not know.
func (k Kind) Words() (Words, bool) {
	if k == KindVoid || k >= numKnownKinds {
		return Words{}, false
	}
	return kindWords[k], true
}

// hasRef reports whether the third word of a type record refers to a type.
func (k Kind) hasRef() bool {
	w, ok := k.Words()
	return ok && w.Third == WordRef
}

// layout gives the bytes a record of kind k carries after its 12-byte
// common part: a fixed part and a part per vlen element.
type layout struct{ info, elem uint8 }

// knownLayouts are the byte lengths of kindWords.
var knownLayouts = func() (ls [numKnownKinds]layout) {
	for k, w := range kindWords {
		ls[k] = layout{info: uint8(4 * len(w.Extra)), elem: uint8(4 * len(w.PerMember))}
	}
	return ls
}()
