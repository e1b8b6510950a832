// SPDX-License-Identifier: GPL-2.0
/* type_based___all.c: every type, with other values and extra members. */
#include "patterns.h"

struct core_types_s {
	long pad;
	void *p;
	int a;
};
union core_types_u {
	long y;
	int x;
};
enum core_types_e {
	CORE_TYPES_B = 20,
	CORE_TYPES_A = 10,
	CORE_TYPES_C = 30,
};
enum core_types_e64 {
	CORE_TYPES_BIG = 0xfffffffe00000000ULL,
};
typedef int (*core_types_fn)(const void *, struct core_types_s *);

TARGET(struct core_types_s *s, union core_types_u *u, enum core_types_e e,
       enum core_types_e64 e64, core_types_fn fn)
