// SPDX-License-Identifier: GPL-2.0
/* size___diff_sz.c: every member resized. */
#include "patterns.h"

enum core_size_enum { CORE_SIZE_X, CORE_SIZE_BIG = 0x100000000ULL };

struct core_size___diff_sz {
	long int_field;
	struct {
		long x;
		long y;
	} struct_field;
	union {
		char x;
	} union_field;
	short arr_field[3];
	int ptr_field_pad;
	void *ptr_field;
	enum core_size_enum enum_field;
	double float_field;
};

TARGET(struct core_size___diff_sz *t)
