package corereloc

import "fmt"

// Kind is the kind of a CO-RE relocation, numbered as in the kernel's
// enum bpf_core_relo_kind (include/uapi/linux/bpf.h) and in .BTF.ext.
type Kind uint32

// The relocation kinds.
const (
	FieldByteOffset Kind = iota // bpf_core_field_offset, BPF_CORE_READ
	FieldByteSize               // bpf_core_field_size
	FieldExists                 // bpf_core_field_exists
	FieldSigned                 // signedness of a field (BPF_CORE_READ_BITFIELD)
	FieldLShiftU64              // bitfield left shift (BPF_CORE_READ_BITFIELD)
	FieldRShiftU64              // bitfield right shift (BPF_CORE_READ_BITFIELD)
	TypeIDLocal                 // bpf_core_type_id_local
	TypeIDTarget                // bpf_core_type_id_kernel
	TypeExists                  // bpf_core_type_exists
	TypeSize                    // bpf_core_type_size
	EnumvalExists               // bpf_core_enum_value_exists
	EnumvalValue                // bpf_core_enum_value
	TypeMatches                 // bpf_core_type_matches
	numKinds
)

// kindNames are libbpf's names for the kinds (core_relo_kind_str in
// tools/lib/bpf/relo_core.c).
var kindNames = [numKinds]string{
	FieldByteOffset: "byte_off",
	FieldByteSize:   "byte_sz",
	FieldExists:     "field_exists",
	FieldSigned:     "signed",
	FieldLShiftU64:  "lshift_u64",
	FieldRShiftU64:  "rshift_u64",
	TypeIDLocal:     "local_type_id",
	TypeIDTarget:    "target_type_id",
	TypeExists:      "type_exists",
	TypeSize:        "type_size",
	EnumvalExists:   "enumval_exists",
	EnumvalValue:    "enumval_value",
	TypeMatches:     "type_matches",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("unknown (%d)", uint32(k))
}

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
