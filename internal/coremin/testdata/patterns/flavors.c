// SPDX-License-Identifier: GPL-2.0
/*
 * flavors.c: one kernel type read through two local flavours, each
 * declaring only some members, in another order.
 */
#include "patterns.h"

struct core_flavors___ab {
	int a;
	int b;
} __core;

struct core_flavors___cb {
	int c;
	int b;
} __core;

SEC("raw_tp/sys_enter")
int flavors(void *ctx)
{
	struct core_flavors___ab *ab = (void *)ctx;
	struct core_flavors___cb *cb = (void *)ctx;

	OUT(0, BPF_CORE_READ(ab, a));
	OUT(1, BPF_CORE_READ(ab, b));
	OUT(2, BPF_CORE_READ(cb, c));
	OUT(3, BPF_CORE_READ(cb, b));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
