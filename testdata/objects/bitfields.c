// SPDX-License-Identifier: GPL-2.0
/*
 * bitfields.c: BPF_CORE_READ_BITFIELD_PROBED and BPF_CORE_READ_BITFIELD on
 * real kernel bitfields. Each read emits the byte offset, byte size,
 * lshift_u64, rshift_u64 and signed relocation kinds for its field.
 *
 *   task_struct.in_execve      unsigned :1, every kernel, at a bit offset
 *                               that differs between builds
 *   task_struct.in_user_fault  unsigned :1, 6.1 and 6.18, gone in 6.12
 *   task_struct.sched_rt_mutex unsigned :1, 6.12 and later only
 *   task_struct.__mce_reserved u64 :62, x86 kernels with CONFIG_X86_MCE
 *                               (6.1.0-47-amd64, 6.12), not cloud/arm64
 *   ipv6_pinfo.hop_limit       signed __s16 :9 on 6.1, a plain __s16 on
 *                               6.12 (a bitfield read of a non-bitfield)
 *   printf_spec.field_width    signed int :24 on 6.1/6.12, a plain int on
 *                               6.18
 */
#include "common.h"

struct task_struct {
	unsigned int in_execve : 1;
	unsigned int in_user_fault : 1;
	unsigned int sched_rt_mutex : 1;
	__u64 : 1; // mce_whole_page, not read
	__u64 __mce_reserved : 62;
} __core;

struct ipv6_pinfo {
	__s16 hop_limit : 9;
	__s16 mcast_hops : 9;
} __core;

struct printf_spec {
	int field_width : 24;
	int precision : 16;
} __core;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(probed, struct task_struct *task)
{
	KEEP(0, BPF_CORE_READ_BITFIELD_PROBED(task, in_execve));
	KEEP(1, BPF_CORE_READ_BITFIELD_PROBED(task, in_user_fault));
	KEEP(2, BPF_CORE_READ_BITFIELD_PROBED(task, sched_rt_mutex));
	KEEP(3, BPF_CORE_READ_BITFIELD_PROBED(task, __mce_reserved));
	return 0;
}

/* Never loaded (the arguments are made up): it only carries relocations. */
SEC("fentry/ip6_datagram_connect")
int BPF_PROG(direct, struct ipv6_pinfo *np, struct printf_spec *spec)
{
	/* BPF_CORE_READ_BITFIELD dereferences directly: fine for BTF pointers. */
	KEEP(0, BPF_CORE_READ_BITFIELD(np, hop_limit));
	KEEP(1, BPF_CORE_READ_BITFIELD(np, mcast_hops));
	KEEP(2, BPF_CORE_READ_BITFIELD(spec, field_width));
	KEEP(3, BPF_CORE_READ_BITFIELD_PROBED(spec, precision));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
