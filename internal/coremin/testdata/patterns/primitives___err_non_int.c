// SPDX-License-Identifier: GPL-2.0
/* primitives___err_non_int.c: b is a pointer. */
#include "patterns.h"

enum core_primitives_enum {
	CORE_PRIM_ONE = 1,
};

struct core_primitives___err_non_int {
	char a;
	int *b;
	enum core_primitives_enum c;
	void *d;
	int (*f)(const char *);
};

TARGET(struct core_primitives___err_non_int *t)
