// SPDX-License-Identifier: GPL-2.0
/*
 * bloom.c: a BPF_MAP_TYPE_BLOOM_FILTER map (Linux 5.16), filled with
 * bpf_map_push_elem and tested with bpf_map_peek_elem, helpers from 4.20.
 * On 5.10 creating the map fails ("map create: invalid argument"),
 * whatever the program does.
 */
#include "features.h"

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, 64);
	__type(value, __u32);
} seen SEC(".maps");

SEC("kprobe/do_nanosleep")
int bloom(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (bpf_map_peek_elem(&seen, &tgid) != 0)
		bpf_map_push_elem(&seen, &tgid, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
