// SPDX-License-Identifier: GPL-2.0
/* existence___minimal.c: a alone. */
#include "patterns.h"

struct core_existence___minimal {
	int a;
};

TARGET(struct core_existence___minimal *t)
