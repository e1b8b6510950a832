// SPDX-License-Identifier: GPL-2.0
/*
 * existence.c: bpf_core_field_exists on members of every kind, with reads
 * guarded by it, as programs written for several kernels do.
 */
#include "patterns.h"

struct core_existence {
	int a;
	struct {
		int x;
	} b;
	int c;
	int arr[1];
	int *ptr;
} __core;

SEC("raw_tp/sys_enter")
int existence(void *ctx)
{
	struct core_existence *p = (void *)ctx;

	OUT(0, bpf_core_field_exists(p->a));
	OUT(1, bpf_core_field_exists(p->b));
	OUT(2, bpf_core_field_exists(p->c));
	OUT(3, bpf_core_field_exists(p->arr));
	OUT(4, bpf_core_field_exists(p->ptr));
	if (bpf_core_field_exists(p->c))
		OUT(5, BPF_CORE_READ(p, c));
	if (bpf_core_field_exists(p->b.x))
		OUT(6, BPF_CORE_READ(p, b.x));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
