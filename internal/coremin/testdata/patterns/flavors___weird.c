// SPDX-License-Identifier: GPL-2.0
/* flavors___weird.c: the members inside anonymous structs and unions. */
#include "patterns.h"

struct core_flavors___weird {
	struct {
		int b;
	};
	union {
		int a;
		int c;
	};
};

TARGET(struct core_flavors___weird *t)
