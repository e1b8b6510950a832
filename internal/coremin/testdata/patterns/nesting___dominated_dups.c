// SPDX-License-Identifier: GPL-2.0
/*
 * nesting___dominated_dups.c: two candidates; the first has only a, at
 * the same offsets as the second, which also has b. The second fits every
 * relocation the first fits, with the same fixups, and more: it wins for
 * cilium/ebpf, and libbpf's answers do not depend on the first either.
 * A minimized BTF needs the second only.
 */
#include "patterns.h"

struct core_nesting___dominated_dups__2 {
	struct {
		int a;
		int c;
	} a;
};

struct core_nesting___dominated_dups {
	struct {
		int a;
		int c;
	} a;
	union {
		int b;
	} b;
};

TARGET(struct core_nesting___dominated_dups__2 *t2,
       struct core_nesting___dominated_dups *t1)
