// SPDX-License-Identifier: GPL-2.0
/*
 * size___err_ambiguous.c: two candidates that disagree on int_field's
 * size, and agree on the rest.
 */
#include "patterns.h"

enum core_size_enum { CORE_SIZE_X };

struct core_size___err_ambiguous {
	int int_field;
	struct {
		int x;
	} struct_field;
	union {
		int x;
	} union_field;
	int arr_field[4];
	int ptr_field_pad;
	void *ptr_field;
	enum core_size_enum enum_field;
	float float_field;
};

struct core_size___err_ambiguous__2 {
	long int_field;
	struct {
		int x;
	} struct_field;
	union {
		int x;
	} union_field;
	int arr_field[4];
	int ptr_field_pad;
	void *ptr_field;
	enum core_size_enum enum_field;
	float float_field;
};

TARGET(struct core_size___err_ambiguous *t1, struct core_size___err_ambiguous__2 *t2)
