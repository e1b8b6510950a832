// SPDX-License-Identifier: GPL-2.0
/*
 * ints.c: integer members of every size and sign, with their size and
 * signedness asked too, as BPF_CORE_READ_BITFIELD_PROBED does.
 */
#include "patterns.h"

struct core_ints {
	__u8 u8;
	__s8 s8;
	__u16 u16;
	__s16 s16;
	__u32 u32;
	__s32 s32;
	__u64 u64;
	__s64 s64;
} __core;

#define INT(slot, f)                                                              \
	do {                                                                      \
		OUT((slot), BPF_CORE_READ(p, f));                                 \
		OUT((slot) + 1, bpf_core_field_size(p->f));                       \
		OUT((slot) + 2, __builtin_preserve_field_info(p->f, BPF_FIELD_SIGNED)); \
	} while (0)

SEC("raw_tp/sys_enter")
int ints(void *ctx)
{
	struct core_ints *p = (void *)ctx;

	INT(0, u8);
	INT(3, s8);
	INT(6, u16);
	INT(9, s16);
	INT(12, u32);
	INT(15, s32);
	INT(18, u64);
	INT(21, s64);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
