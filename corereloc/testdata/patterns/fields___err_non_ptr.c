// SPDX-License-Identifier: GPL-2.0
/*
 * fields___err_non_ptr.c: next is an integer, s32 a struct, u64 an enum:
 * kinds that cannot stand for the local fields.
 */
#include "patterns.h"

enum core_fields_e { CORE_FIELDS_X };

struct core_fields___err_non_ptr {
	char c;
	unsigned short u16;
	struct {
		int x;
	} s32;
	enum core_fields_e u64;
	int cv;
	unsigned int bf_u : 3;
	int bf_s : 5;
	long next;
	int maybe;
};

TARGET(struct core_fields___err_non_ptr *t)
