// SPDX-License-Identifier: GPL-2.0
/*
 * misc___extended.c: every root, the extensible one with more members at
 * its end, the others with members swapped.
 */
#include "patterns.h"

struct core_misc_a {
	int a2;
	int a1;
};

struct core_misc_b {
	long b0;
	int b2;
	int b1;
};

struct core_misc_extensible {
	int a;
	int b;
	long c;
	int d[3];
};

TARGET(struct core_misc_a *a, struct core_misc_b *b, struct core_misc_extensible *e)
