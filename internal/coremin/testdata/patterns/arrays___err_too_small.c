// SPDX-License-Identifier: GPL-2.0
/* arrays___err_too_small.c: a[2] is out of bounds here. */
#include "patterns.h"

struct core_arrays___err_too_small {
	int a[2];
	char b[2][3];
	struct {
		int c;
		int d;
	} s[2];
	int flex[];
};

TARGET(struct core_arrays___err_too_small *t)
