// SPDX-License-Identifier: GPL-2.0
/*
 * arrays___err_bad_zero_sz_arr.c: flex is a zero-length array that is not
 * the last member, so indexing it is an error, not a flexible array.
 */
#include "patterns.h"

struct core_arrays___err_bad_zero_sz_arr {
	int a[5];
	char b[2][3];
	struct {
		int c;
		int d;
	} s[2];
	int flex[0];
	int after;
};

TARGET(struct core_arrays___err_bad_zero_sz_arr *t)
