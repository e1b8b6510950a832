// SPDX-License-Identifier: GPL-2.0
/*
 * guarded_helper.c: bpf_strncmp (182, Linux 5.17) called only where the
 * kernel's enum bpf_func_id has it: bpf_core_enum_value_exists is a CO-RE
 * relocation (enumval_exists) whose constant is 0 on a kernel without
 * the helper, so the verifier never reaches the call there, and a
 * privileged load removes the dead call before it would look it up.
 * It loads on every kernel; the unguarded call of strings.c fails on 5.10.
 */
#include "features.h"

enum bpf_func_id {
	BPF_FUNC_strncmp = 182,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[16]);
} matched SEC(".maps");

SEC("kprobe/do_nanosleep")
int guarded_strncmp(void *ctx)
{
	char comm[16];
	__u32 zero = 0;

	bpf_get_current_comm(comm, sizeof(comm));
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_strncmp) &&
	    bpf_strncmp(comm, sizeof(comm), "sleep") == 0)
		bpf_map_update_elem(&matched, &zero, comm, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
