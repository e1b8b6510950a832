// SPDX-License-Identifier: GPL-2.0
/* nesting___anon.c: the members behind anonymous structs and unions. */
#include "patterns.h"

struct core_nesting___anon {
	long pad;
	struct {
		union {
			struct {
				int c;
				int a;
			} a;
			long x;
		};
	};
	union {
		int y;
		struct {
			union {
				int b;
			} b;
		};
	};
};

TARGET(struct core_nesting___anon *t)
