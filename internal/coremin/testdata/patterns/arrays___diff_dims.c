// SPDX-License-Identifier: GPL-2.0
/* arrays___diff_dims.c: larger arrays, moved members. */
#include "patterns.h"

struct core_arrays___diff_dims {
	long pad;
	struct {
		int d;
		int c;
		int e;
	} s[4];
	char b[3][4];
	int a[8];
	int flex[0];
};

TARGET(struct core_arrays___diff_dims *t)
