// SPDX-License-Identifier: GPL-2.0
/* type_based___none.c: none of the types. */
#include "patterns.h"

struct core_types_other {
	int a;
};

TARGET(struct core_types_other *o)
