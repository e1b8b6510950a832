// SPDX-License-Identifier: GPL-2.0
/*
 * nesting.c: members reached through nested and anonymous structs and
 * unions. The targets (nesting___*.c) move the same members into
 * anonymous wrappers, declare the type three times compatibly, nest one
 * member deeper than libbpf (64 accessor levels) and cilium/ebpf (32
 * anonymous composites searched) accept, or split the members over two
 * candidates that each have only one of them.
 */
#include "patterns.h"

struct core_nesting {
	struct core_nesting_inner {
		int a;
		int c;
	} a;
	union core_nesting_u {
		int b;
	} b;
} __core;

SEC("raw_tp/sys_enter")
int nesting(void *ctx)
{
	struct core_nesting *p = (void *)ctx;

	OUT(0, BPF_CORE_READ(p, a.a));
	OUT(1, BPF_CORE_READ(p, a.c));
	if (bpf_core_field_exists(p->b.b))
		OUT(2, BPF_CORE_READ(p, b.b));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
