// SPDX-License-Identifier: GPL-2.0
/* primitives___err_non_enum.c: c is an int. */
#include "patterns.h"

struct core_primitives___err_non_enum {
	char a[1];
	int b;
	int c;
	void *d;
	int (*f)(const char *);
};

TARGET(struct core_primitives___err_non_enum *t)
