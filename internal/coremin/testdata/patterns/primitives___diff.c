// SPDX-License-Identifier: GPL-2.0
/*
 * primitives___diff.c: other enum values, a pointer to a struct, a
 * prototype with other parameters, members moved.
 */
#include "patterns.h"

enum core_primitives_enum {
	CORE_PRIM_TWO = 20,
	CORE_PRIM_THREE = 30,
};

struct core_primitives___diff {
	int (*f)(int, long);
	struct core_primitives___diff *d;
	enum core_primitives_enum c;
	int b;
	char a;
};

TARGET(struct core_primitives___diff *t)
