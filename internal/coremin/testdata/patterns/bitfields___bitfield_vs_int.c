// SPDX-License-Identifier: GPL-2.0
/* bitfields___bitfield_vs_int.c: bitfields become integers and back. */
#include "patterns.h"

struct core_bitfields___bitfield_vs_int {
	__u64 ub1;
	__u8 ub2;
	__s64 ub7;
	__s64 sb4;
	__u8 sb20;
	__u32 u32 : 20;
	__s32 s32 : 10;
};

TARGET(struct core_bitfields___bitfield_vs_int *t)
