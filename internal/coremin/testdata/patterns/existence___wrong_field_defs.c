// SPDX-License-Identifier: GPL-2.0
/*
 * existence___wrong_field_defs.c: every member there, each of another
 * kind than the local one.
 */
#include "patterns.h"

struct core_existence___wrong_field_defs {
	void *a;
	int b;
	int c[3];
	int *arr;
	struct {
		int x;
	} ptr;
};

TARGET(struct core_existence___wrong_field_defs *t)
