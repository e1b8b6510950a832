// SPDX-License-Identifier: GPL-2.0
/*
 * type_based.c: type-based relocations (exists, size, matches, local and
 * target type IDs) on a struct, a union, an enum, an enum64, a typedef of
 * a function pointer, and on flavoured enumerators (enumval exists and
 * value). The targets have all of them, other layouts, or none.
 */
#include "patterns.h"

struct core_types_s {
	int a;
	void *p;
};
union core_types_u {
	int x;
	long y;
};
enum core_types_e {
	CORE_TYPES_A = 1,
	CORE_TYPES_B = 2,
};
enum core_types_e64 {
	CORE_TYPES_BIG = 0xffffffff00000000ULL,
};
enum core_types_e___flavour {
	CORE_TYPES_C___flavour = 3,
};
typedef int (*core_types_fn)(const void *, struct core_types_s *);

#define ALL(slot, T)                                        \
	do {                                                \
		OUT((slot), bpf_core_type_exists(T));       \
		OUT((slot) + 1, bpf_core_type_size(T));     \
		OUT((slot) + 2, bpf_core_type_matches(T));  \
		OUT((slot) + 3, bpf_core_type_id_kernel(T)); \
		OUT((slot) + 4, bpf_core_type_id_local(T)); \
	} while (0)

SEC("raw_tp/sys_enter")
int type_based(void *ctx)
{
	ALL(0, struct core_types_s);
	ALL(5, union core_types_u);
	ALL(10, enum core_types_e);
	ALL(15, enum core_types_e64);
	ALL(20, core_types_fn);
	OUT(25, bpf_core_enum_value_exists(enum core_types_e, CORE_TYPES_B));
	OUT(26, bpf_core_enum_value(enum core_types_e, CORE_TYPES_B));
	OUT(27, bpf_core_enum_value(enum core_types_e64, CORE_TYPES_BIG));
	OUT(28, bpf_core_enum_value_exists(enum core_types_e___flavour, CORE_TYPES_C___flavour));
	OUT(29, bpf_core_enum_value(enum core_types_e___flavour, CORE_TYPES_C___flavour));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
