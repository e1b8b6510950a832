// SPDX-License-Identifier: GPL-2.0
/*
 * bitfields___err_too_big_bitfield.c: ub2 straddles an 8-byte boundary,
 * so no load of its size reaches all of it.
 */
#include "patterns.h"

struct core_bitfields___err_too_big_bitfield {
	__u64 ub1 : 1;
	__u64 pad : 62;
	__u64 ub2 : 4;
	__u32 ub7 : 7;
	__s8 sb4 : 4;
	__s32 sb20 : 20;
	__u32 u32;
	__s32 s32;
} __attribute__((packed));

TARGET(struct core_bitfields___err_too_big_bitfield *t)
