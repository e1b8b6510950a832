// SPDX-License-Identifier: GPL-2.0
/*
 * ptr_as_arr.c: a pointer to a struct indexed as an array: p[2].a moves
 * with the size of the target struct, not only with a's offset.
 */
#include "patterns.h"

struct core_ptr_as_arr {
	int a;
} __core;

SEC("raw_tp/sys_enter")
int ptr_as_arr(void *ctx)
{
	struct core_ptr_as_arr *p = (void *)ctx;

	OUT(0, BPF_CORE_READ(&p[0], a));
	OUT(1, BPF_CORE_READ(&p[2], a));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
