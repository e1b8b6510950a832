// SPDX-License-Identifier: GPL-2.0
/* ints___bool.c: u8 is a _Bool. */
#include "patterns.h"

struct core_ints___bool {
	_Bool u8;
	__s8 s8;
	__u16 u16;
	__s16 s16;
	__u32 u32;
	__s32 s32;
	__u64 u64;
	__s64 s64;
};

TARGET(struct core_ints___bool *t)
