// SPDX-License-Identifier: GPL-2.0
/* ints___reverse_sign.c: every sign flipped, sizes moved around. */
#include "patterns.h"

struct core_ints___reverse_sign {
	__s64 u64;
	__u64 s64;
	__s32 u32;
	__u32 s32;
	__s16 u16;
	__u16 s16;
	__s8 u8;
	__u8 s8;
};

TARGET(struct core_ints___reverse_sign *t)
