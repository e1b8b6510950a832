// SPDX-License-Identifier: GPL-2.0
/*
 * primitives.c: members of primitive kinds: char, int, enum, pointer,
 * function pointer. Targets change the enum's values and the pointers'
 * targets (allowed), or the kinds (not allowed).
 */
#include "patterns.h"

enum core_primitives_enum {
	CORE_PRIM_ONE = 1,
	CORE_PRIM_TWO = 2,
};

struct core_primitives {
	char a;
	int b;
	enum core_primitives_enum c;
	void *d;
	int (*f)(const char *);
} __core;

SEC("raw_tp/sys_enter")
int primitives(void *ctx)
{
	struct core_primitives *p = (void *)ctx;

	OUT(0, BPF_CORE_READ(p, a));
	OUT(1, BPF_CORE_READ(p, b));
	OUT(2, BPF_CORE_READ(p, c));
	OUT(3, (__u64)BPF_CORE_READ(p, d));
	OUT(4, (__u64)BPF_CORE_READ(p, f));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
