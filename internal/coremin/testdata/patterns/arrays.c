// SPDX-License-Identifier: GPL-2.0
/*
 * arrays.c: array members: an element of a fixed array, of a 2D array,
 * a member of a struct in an array, and of a trailing flexible array. The
 * targets change the dimensions, or put a zero-length array before other
 * members, where it is no flexible array but an error.
 */
#include "patterns.h"

struct core_arrays_elem {
	int c;
	int d;
};

struct core_arrays {
	int a[5];
	char b[2][3];
	struct core_arrays_elem s[2];
	int flex[];
} __core;

SEC("raw_tp/sys_enter")
int arrays(void *ctx)
{
	struct core_arrays *p = (void *)ctx;

	OUT(0, BPF_CORE_READ(p, a[2]));
	OUT(1, BPF_CORE_READ(p, b[1][2]));
	OUT(2, BPF_CORE_READ(p, s[1].d));
	OUT(3, BPF_CORE_READ(p, flex[3]));
	OUT(4, bpf_core_field_size(p->a));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
