// SPDX-License-Identifier: GPL-2.0
/* ptr_as_arr___diff_sz.c: a larger struct, a moved. */
#include "patterns.h"

struct core_ptr_as_arr___diff_sz {
	long pad;
	int a;
	char more[20];
};

TARGET(struct core_ptr_as_arr___diff_sz *t)
