// SPDX-License-Identifier: GPL-2.0
/*
 * nesting___dup_compat_types.c: three candidates that differ only where
 * no relocation looks; every decision is the same whichever one wins.
 */
#include "patterns.h"

struct core_nesting___dup_compat_types {
	struct {
		int a;
		int c;
	} a;
	union {
		int b;
	} b;
	int extra;
};

struct core_nesting___dup_compat_types__2 {
	struct {
		int a;
		int c;
	} a;
	union {
		int b;
		char bytes[4];
	} b;
};

struct core_nesting___dup_compat_types__3 {
	struct {
		int a;
		int c;
	} a;
	union {
		int b;
	} b;
	long more[2];
};

TARGET(struct core_nesting___dup_compat_types *t1,
       struct core_nesting___dup_compat_types__2 *t2,
       struct core_nesting___dup_compat_types__3 *t3)
