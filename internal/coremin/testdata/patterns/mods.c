// SPDX-License-Identifier: GPL-2.0
/*
 * mods.c: members behind typedefs and const/volatile/restrict, locally
 * and in the targets, differently on each side.
 */
#include "patterns.h"

typedef int core_mods_int_t;
typedef const core_mods_int_t *core_mods_cintp_t;
typedef struct {
	int x;
	int y;
} core_mods_pair_t;

struct core_mods {
	core_mods_int_t a;
	const volatile int b;
	core_mods_cintp_t c;
	int *restrict d;
	core_mods_pair_t e;
	const core_mods_pair_t *f;
} __core;

SEC("raw_tp/sys_enter")
int mods(void *ctx)
{
	struct core_mods *p = (void *)ctx;

	OUT(0, BPF_CORE_READ(p, a));
	OUT(1, BPF_CORE_READ(p, b));
	OUT(2, (__u64)BPF_CORE_READ(p, c));
	OUT(3, (__u64)BPF_CORE_READ(p, d));
	OUT(4, BPF_CORE_READ(p, e.y));
	OUT(5, BPF_CORE_READ(p, f, x));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
