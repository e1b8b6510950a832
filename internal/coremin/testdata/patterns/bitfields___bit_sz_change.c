// SPDX-License-Identifier: GPL-2.0
/* bitfields___bit_sz_change.c: other widths, signs and positions. */
#include "patterns.h"

struct core_bitfields___bit_sz_change {
	__u16 ub1 : 3;
	__u32 ub2 : 20;
	__u8 ub7 : 1;
	__s8 sb4 : 1;
	__s32 sb20 : 30;
	__u16 u32;
	__s64 s32;
};

TARGET(struct core_bitfields___bit_sz_change *t)
