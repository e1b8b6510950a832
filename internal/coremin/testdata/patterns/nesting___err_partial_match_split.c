// SPDX-License-Identifier: GPL-2.0
/*
 * nesting___err_partial_match_split.c: two candidates, one with a, the
 * other with b. libbpf narrows a local type's candidates to those that
 * fit each relocation in turn: a.a keeps the first, and b.b then finds
 * none (exists 0, read poisoned). cilium/ebpf scores both candidates per
 * program and local type, finds a tie whose fixups disagree, and refuses
 * the program.
 */
#include "patterns.h"

struct core_nesting___err_partial_match_split {
	struct {
		int a;
		int c;
	} a;
};

struct core_nesting___err_partial_match_split__2 {
	long pad;
	union {
		int b;
	} b;
};

TARGET(struct core_nesting___err_partial_match_split *t1,
       struct core_nesting___err_partial_match_split__2 *t2)
