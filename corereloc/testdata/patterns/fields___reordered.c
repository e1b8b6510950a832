// SPDX-License-Identifier: GPL-2.0
/*
 * fields___reordered.c: members moved and resized (c is an int, u16 a
 * 64-bit integer, s32 unsigned), modifiers dropped, other bitfield widths
 * and positions; maybe is gone; the ___old flavour exists too.
 */
#include "patterns.h"

struct core_fields___reordered {
	unsigned long long u16;
	struct core_fields___reordered *next;
	unsigned int s32;
	int c;
	int pad : 7;
	unsigned int bf_u : 9;
	int bf_s : 11;
	int cv;
	unsigned long long u64;
};

struct core_fields___old {
	int old_only;
};

TARGET(struct core_fields___reordered *t, struct core_fields___old *o)
