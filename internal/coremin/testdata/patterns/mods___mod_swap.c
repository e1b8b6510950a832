// SPDX-License-Identifier: GPL-2.0
/*
 * mods___mod_swap.c: modifiers where the local type has none and the
 * other way round, typedefs of typedefs, the pair as a named struct.
 */
#include "patterns.h"

typedef volatile int core_mods_vint_t;
typedef core_mods_vint_t core_mods_vint2_t;
struct core_mods_pair {
	int y;
	int x;
};

struct core_mods___mod_swap {
	const core_mods_vint2_t a;
	int b;
	int *const c;
	const volatile int *d;
	const struct core_mods_pair e;
	struct core_mods_pair *volatile f;
};

TARGET(struct core_mods___mod_swap *t)
