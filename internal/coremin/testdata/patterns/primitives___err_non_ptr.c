// SPDX-License-Identifier: GPL-2.0
/* primitives___err_non_ptr.c: d is an integer. */
#include "patterns.h"

enum core_primitives_enum {
	CORE_PRIM_ONE = 1,
};

struct core_primitives___err_non_ptr {
	char a;
	int b;
	enum core_primitives_enum c;
	long d;
	int (*f)(const char *);
};

TARGET(struct core_primitives___err_non_ptr *t)
