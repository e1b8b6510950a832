// SPDX-License-Identifier: GPL-2.0
/*
 * type_based___diff.c: the same names, other shapes: a member of another type,
 * a missing enumerator, a 4-byte enum where the local one has 8 bytes,
 * a prototype with another parameter.
 */
#include "patterns.h"

struct core_types_s {
	int a;
	long p;
};
union core_types_u {
	int x;
};
enum core_types_e {
	CORE_TYPES_A = 1,
};
enum core_types_e64 {
	CORE_TYPES_BIG = 7,
};
typedef int (*core_types_fn)(void *, int);

TARGET(struct core_types_s *s, union core_types_u *u, enum core_types_e e,
       enum core_types_e64 e64, core_types_fn fn)
