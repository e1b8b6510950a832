// SPDX-License-Identifier: GPL-2.0
/*
 * type_id.c: local and target type IDs of a struct, a union, an enum, a
 * typedef, a pointer typedef, a function-pointer typedef and an int
 * typedef, as programs use them to tag records or pass BTF IDs.
 */
#include "patterns.h"

struct core_type_id_s {
	int a;
};
union core_type_id_u {
	int a;
};
enum core_type_id_e {
	CORE_TYPE_ID_X,
};
typedef struct core_type_id_s core_type_id_typedef;
typedef struct core_type_id_s *core_type_id_ptr;
typedef void (*core_type_id_fn)(struct core_type_id_s *);
typedef int core_type_id_int;

#define IDS(slot, T)                                      \
	do {                                              \
		OUT((slot), bpf_core_type_id_local(T));   \
		OUT((slot) + 1, bpf_core_type_id_kernel(T)); \
	} while (0)

SEC("raw_tp/sys_enter")
int type_id(void *ctx)
{
	IDS(0, struct core_type_id_s);
	IDS(2, union core_type_id_u);
	IDS(4, enum core_type_id_e);
	IDS(6, core_type_id_typedef);
	IDS(8, core_type_id_ptr);
	IDS(10, core_type_id_fn);
	IDS(12, core_type_id_int);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
