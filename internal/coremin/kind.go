package coremin

//go:generate go tool stringer -type Kind -linecomment

// Kind is the kind of a CO-RE relocation, numbered as in the kernel's
// enum bpf_core_relo_kind (include/uapi/linux/bpf.h) and in .BTF.ext.
type Kind uint32

// The relocation kinds. Their String is libbpf's name for them
// (core_relo_kind_str in tools/lib/bpf/relo_core.c).
const (
	// FieldByteOffset: bpf_core_field_offset, BPF_CORE_READ.
	FieldByteOffset Kind = iota // byte_off
	// FieldByteSize: bpf_core_field_size.
	FieldByteSize // byte_sz
	// FieldExists: bpf_core_field_exists.
	FieldExists // field_exists
	// FieldSigned: signedness of a field (BPF_CORE_READ_BITFIELD).
	FieldSigned // signed
	// FieldLShiftU64: bitfield left shift (BPF_CORE_READ_BITFIELD).
	FieldLShiftU64 // lshift_u64
	// FieldRShiftU64: bitfield right shift (BPF_CORE_READ_BITFIELD).
	FieldRShiftU64 // rshift_u64
	// TypeIDLocal: bpf_core_type_id_local.
	TypeIDLocal // local_type_id
	// TypeIDTarget: bpf_core_type_id_kernel.
	TypeIDTarget // target_type_id
	// TypeExists: bpf_core_type_exists.
	TypeExists // type_exists
	// TypeSize: bpf_core_type_size.
	TypeSize // type_size
	// EnumvalExists: bpf_core_enum_value_exists.
	EnumvalExists // enumval_exists
	// EnumvalValue: bpf_core_enum_value.
	EnumvalValue // enumval_value
	// TypeMatches: bpf_core_type_matches.
	TypeMatches // type_matches
)

// numKinds is the number of known kinds.
const numKinds = TypeMatches + 1

// valid reports whether k is one of the 13 known kinds.
func (k Kind) valid() bool { return k < numKinds }

// isField reports whether k is resolved by walking a field access path.
func (k Kind) isField() bool { return k <= FieldRShiftU64 }

// isEnumval reports whether k looks up an enumerator.
func (k Kind) isEnumval() bool { return k == EnumvalExists || k == EnumvalValue }

// checksExistence reports whether a missing target yields the value 0
// instead of a poisoned instruction.
func (k Kind) checksExistence() bool {
	return k == FieldExists || k == TypeExists || k == EnumvalExists || k == TypeMatches
}
