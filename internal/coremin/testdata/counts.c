// SPDX-License-Identifier: GPL-2.0
/*
 * counts.c: type matches that compare member and enumerator counts.
 *
 * cilium/ebpf's type match fails when the local struct or enum has more
 * members or enumerators than the target. Here several local ones map to
 * one target one, so keeping only the target members and enumerators the
 * match looked up would make the count check fail:
 *
 *   sk_buff___anon    two empty anonymous unions; both map to the kernel
 *                     sk_buff's last anonymous member (a union)
 *   pid_type___dup    two enumerators whose essential name is PIDTYPE_PID
 *
 * Both match on every testdata kernel; corereloc.Minimize must keep as
 * many target members and enumerators as the local types have.
 */
#include "../../../testdata/objects/prelude.h"

struct sk_buff___anon {
	union {};
	union {};
} __attribute__((preserve_access_index));

enum pid_type___dup {
	PIDTYPE_PID___a,
	PIDTYPE_PID___b,
};

volatile __u64 out[2];

SEC("raw_tp/sys_enter")
int counts(void *ctx)
{
	out[0] = bpf_core_type_matches(struct sk_buff___anon);
	out[1] = bpf_core_type_matches(enum pid_type___dup);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
