// SPDX-License-Identifier: GPL-2.0
/*
 * strings.c: string helpers.
 *
 *   bpf_strncmp (182)  Linux 5.17
 *   bpf_snprintf (165) Linux 5.13
 *
 * Debian 11's 5.10 has neither.
 */
#include "features.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[16]);
} names SEC(".maps");

SEC("kprobe/do_nanosleep")
int uses_strncmp(void *ctx)
{
	char comm[16];
	__u32 zero = 0;

	bpf_get_current_comm(comm, sizeof(comm));
	if (bpf_strncmp(comm, sizeof(comm), "sleep") == 0)
		bpf_map_update_elem(&names, &zero, comm, BPF_ANY);
	return 0;
}

SEC("kprobe/do_nanosleep")
int uses_snprintf(void *ctx)
{
	static const char fmt[] = "pid %d";
	char out[16];
	__u64 args[] = {bpf_get_current_pid_tgid() >> 32};
	__u32 zero = 0;

	bpf_snprintf(out, sizeof(out), fmt, args, sizeof(args));
	bpf_map_update_elem(&names, &zero, out, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
