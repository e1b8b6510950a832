// SPDX-License-Identifier: GPL-2.0
/* flavors___reversed.c: the members in reverse order. */
#include "patterns.h"

struct core_flavors___reversed {
	int c;
	int b;
	int a;
};

TARGET(struct core_flavors___reversed *t)
