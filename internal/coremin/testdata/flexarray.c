// SPDX-License-Identifier: GPL-2.0
/*
 * flexarray.c: a zero-length array that is not the last member.
 *
 * The kernel's sk_buff has __u8 __cloned_offset[0] in the middle, as an
 * offset marker. Indexing it is an error for cilium/ebpf (an array of no
 * elements is only valid as the last member), so the program fails to
 * relocate. If the minimized BTF dropped the members after it, it would
 * become the last member and the access valid: corereloc.Minimize must
 * keep the member that follows.
 */
#include "../../../testdata/objects/prelude.h"

struct sk_buff {
	__u8 __cloned_offset[0];
} __attribute__((preserve_access_index));

volatile __u64 out;

SEC("raw_tp/sys_enter")
int flexarray(void *ctx)
{
	struct sk_buff *skb = ctx;

	out = bpf_core_field_offset(skb->__cloned_offset[0]);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
