// SPDX-License-Identifier: GPL-2.0
/* misc___partial.c: core_misc_a only; b2 is missing from a flavour. */
#include "patterns.h"

struct core_misc_a {
	int a1;
	int a2;
};

struct core_misc_b___no_b2 {
	int b1;
};

TARGET(struct core_misc_a *a, struct core_misc_b___no_b2 *b)
