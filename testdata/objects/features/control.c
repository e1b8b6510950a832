// SPDX-License-Identifier: GPL-2.0
/*
 * control.c: programs that load on every kernel the feature objects are
 * checked on (Linux 4.x and up): a kprobe and a tracepoint that count
 * into a hash map with helpers every such kernel has
 * (bpf_get_current_pid_tgid, bpf_map_lookup_elem, bpf_map_update_elem).
 * They do not read their context, whose layout differs between
 * architectures.
 */
#include "features.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void count(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 one = 1, *n = bpf_map_lookup_elem(&counts, &tgid);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&counts, &tgid, &one, BPF_ANY);
}

SEC("kprobe/do_nanosleep")
int control_kprobe(void *ctx)
{
	count();
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int control_tracepoint(void *ctx)
{
	count();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
