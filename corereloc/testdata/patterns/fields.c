// SPDX-License-Identifier: GPL-2.0
/*
 * fields.c: field relocations of every kind on one local type, read the
 * ways the selftests read them: flavours (core_fields___old), typedef and
 * const/volatile modifiers, a pointer indexed as an array (ptr_as_arr),
 * integers of every size and sign, field sizes, existence checks, and
 * bitfields (offset, size, signedness, shifts).
 */
#include "patterns.h"

typedef const volatile int core_cvint;

struct core_fields {
	char c;
	unsigned short u16;
	int s32;
	unsigned long long u64;
	core_cvint cv;
	unsigned int bf_u : 3;
	int bf_s : 5;
	struct core_fields *next;
	int maybe;
} __core;

struct core_fields___old {
	int old_only;
} __core;

SEC("raw_tp/sys_enter")
int fields(void *ctx)
{
	struct core_fields *p = (void *)ctx;
	struct core_fields___old *o = (void *)ctx;

	OUT(0, BPF_CORE_READ(p, c));
	OUT(1, BPF_CORE_READ(p, u16));
	OUT(2, BPF_CORE_READ(p, s32));
	OUT(3, BPF_CORE_READ(p, u64));
	OUT(4, BPF_CORE_READ(p, cv));
	OUT(5, BPF_CORE_READ_BITFIELD_PROBED(p, bf_u));
	OUT(6, BPF_CORE_READ_BITFIELD_PROBED(p, bf_s));
	OUT(7, BPF_CORE_READ(&p[2], s32));
	OUT(8, BPF_CORE_READ(p, next, u64));
	OUT(9, bpf_core_field_size(p->u64));
	OUT(10, bpf_core_field_size(p->s32));
	OUT(11, bpf_core_field_exists(p->maybe));
	OUT(12, bpf_core_field_exists(o->old_only));
	OUT(13, __builtin_preserve_field_info(p->s32, BPF_FIELD_SIGNED));
	OUT(14, bpf_core_field_offset(p->cv));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
