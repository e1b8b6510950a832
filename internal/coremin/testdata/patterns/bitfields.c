// SPDX-License-Identifier: GPL-2.0
/*
 * bitfields.c: bitfields of several widths and signs, read with
 * BPF_CORE_READ_BITFIELD_PROBED (byte offset, byte size, signedness, left
 * and right shift), and plain integers read the same way.
 */
#include "patterns.h"

struct core_bitfields {
	__u8 ub1 : 1;
	__u8 ub2 : 2;
	__u32 ub7 : 7;
	__s8 sb4 : 4;
	__s32 sb20 : 20;
	__u32 u32;
	__s32 s32;
} __core;

SEC("raw_tp/sys_enter")
int bitfields(void *ctx)
{
	struct core_bitfields *p = (void *)ctx;

	OUT(0, BPF_CORE_READ_BITFIELD_PROBED(p, ub1));
	OUT(1, BPF_CORE_READ_BITFIELD_PROBED(p, ub2));
	OUT(2, BPF_CORE_READ_BITFIELD_PROBED(p, ub7));
	OUT(3, BPF_CORE_READ_BITFIELD_PROBED(p, sb4));
	OUT(4, BPF_CORE_READ_BITFIELD_PROBED(p, sb20));
	OUT(5, BPF_CORE_READ_BITFIELD_PROBED(p, u32));
	OUT(6, BPF_CORE_READ_BITFIELD_PROBED(p, s32));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
