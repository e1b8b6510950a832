// SPDX-License-Identifier: GPL-2.0
/*
 * loop.c: helpers that take a callback.
 *
 *   bpf_loop (181)              Linux 5.17
 *   bpf_for_each_map_elem (164) Linux 5.13
 *
 * Debian 11's 5.10 has neither: its enum bpf_func_id ends at
 * BPF_FUNC_redirect_peer (155). Nor does it know BPF_PSEUDO_FUNC, the
 * 64-bit load that passes a callback (5.13): it refuses the program for
 * that first ("number of funcs in func_info doesn't match").
 */
#include "features.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

struct sum {
	__u64 total;
};

static long add_index(__u32 i, void *data)
{
	struct sum *s = data;

	s->total += i;
	return 0;
}

SEC("kprobe/do_nanosleep")
int loop(void *ctx)
{
	struct sum s = {};
	__u32 zero = 0;

	bpf_loop(16, add_index, &s, 0);
	bpf_map_update_elem(&totals, &zero, &s.total, BPF_ANY);
	return 0;
}

static long add_value(void *map, __u32 *key, __u64 *value, struct sum *s)
{
	s->total += *value;
	return 0;
}

SEC("kprobe/do_nanosleep")
int for_each(void *ctx)
{
	struct sum s = {};
	__u32 one = 1;

	bpf_for_each_map_elem(&totals, add_value, &s, 0);
	bpf_map_update_elem(&totals, &one, &s.total, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
