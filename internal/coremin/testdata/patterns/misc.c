// SPDX-License-Identifier: GPL-2.0
/*
 * misc.c: several local root types in one program, one of them read
 * through an array of structs that the target extends at its end (the
 * element size, and with it e[2]'s offset, changes), and the same member
 * read from two roots.
 */
#include "patterns.h"

struct core_misc_a {
	int a1;
	int a2;
} __core;

struct core_misc_b {
	int b1;
	int b2;
} __core;

struct core_misc_extensible {
	int a;
	int b;
} __core;

SEC("raw_tp/sys_enter")
int misc(void *ctx)
{
	struct core_misc_a *a = (void *)ctx;
	struct core_misc_b *b = (void *)ctx;
	struct core_misc_extensible *e = (void *)ctx;

	OUT(0, BPF_CORE_READ(a, a1));
	OUT(1, BPF_CORE_READ(a, a2));
	OUT(2, BPF_CORE_READ(b, b1));
	OUT(3, BPF_CORE_READ(b, b2));
	OUT(4, BPF_CORE_READ(&e[0], a));
	OUT(5, BPF_CORE_READ(&e[2], b));
	OUT(6, bpf_core_type_size(struct core_misc_extensible));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
