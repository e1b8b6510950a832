// SPDX-License-Identifier: GPL-2.0
/*
 * enum64val.c: the same on 64-bit enums (BTF_KIND_ENUM64), signed and
 * unsigned.
 */
#include "patterns.h"

enum core_enum64val {
	CORE_E64_ONE = 0x1ffffffffULL,
	CORE_E64_TWO = 0x2ffffffffULL,
	CORE_E64_THREE = 0xfffffffffffffff0ULL,
};

enum core_enum64val_signed {
	CORE_E64_NEG = -0x100000000LL,
	CORE_E64_POS = 0x100000000LL,
};

SEC("raw_tp/sys_enter")
int enum64val(void *ctx)
{
	OUT(0, bpf_core_enum_value_exists(enum core_enum64val, CORE_E64_ONE));
	OUT(1, bpf_core_enum_value_exists(enum core_enum64val, CORE_E64_THREE));
	OUT(2, bpf_core_enum_value(enum core_enum64val, CORE_E64_ONE));
	OUT(3, bpf_core_enum_value(enum core_enum64val, CORE_E64_TWO));
	OUT(4, bpf_core_enum_value(enum core_enum64val, CORE_E64_THREE));
	OUT(5, bpf_core_enum_value(enum core_enum64val_signed, CORE_E64_NEG));
	OUT(6, bpf_core_enum_value(enum core_enum64val_signed, CORE_E64_POS));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
