// SPDX-License-Identifier: GPL-2.0
/*
 * nesting___err_partial_match_dups.c: two candidates, each with only some
 * of the members the program reads; neither fits every relocation.
 */
#include "patterns.h"

struct core_nesting___err_partial_match_dups {
	struct {
		int a;
		int c;
	} a;
};

struct core_nesting___err_partial_match_dups__2 {
	union {
		int b;
	} b;
	struct {
		int c;
		int a;
	} a;
};

TARGET(struct core_nesting___err_partial_match_dups *t1,
       struct core_nesting___err_partial_match_dups__2 *t2)
