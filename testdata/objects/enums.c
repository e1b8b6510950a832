// SPDX-License-Identifier: GPL-2.0
/*
 * enums.c: enum value and enum value existence relocations, on 32-bit
 * ENUM and 64-bit ENUM64 kernel enums.
 *
 *   enum pageflags: PG_active is 5 on 6.1 and 8 on 6.12; PG_hwpoison is
 *     23 (6.1.0-47-amd64), 22 (arm64), 20 (6.12) and absent on
 *     6.1.0-50-cloud-amd64 and 6.18; PG_slab exists on 6.1 only.
 *   enum bpf_prog_type: BPF_PROG_TYPE_NETFILTER exists on 6.12+ only.
 *   enum perf_callchain_context: ENUM64 on every kernel, values near 2^64.
 *   enum ib_uverbs_device_cap_flags: ENUM64; IB_UVERBS_DEVICE_ATOMIC_WRITE
 *     (1 << 40) only on 6.12+.
 *   enum netdev_priv_flags: ENUM64 on 6.1, a 4-byte ENUM on 6.12+; the
 *     local declaration is a 4-byte ENUM. IFF_LIVE_RENAME_OK exists on 6.1
 *     only, IFF_NO_ADDRCONF on 6.12+ only, both with value 1 << 30.
 *   enum pid_type___missing: a flavour of an enum whose value exists on no
 *     kernel.
 */
#include "common.h"

enum pageflags {
	PG_locked,
	PG_active,
	PG_slab,
	PG_hwpoison,
};

enum bpf_prog_type {
	BPF_PROG_TYPE_SYSCALL = 31,
	BPF_PROG_TYPE_NETFILTER = 32,
};

enum perf_callchain_context {
	PERF_CONTEXT_KERNEL = (__u64)-128,
	PERF_CONTEXT_MAX = (__u64)-4095,
};

enum ib_uverbs_device_cap_flags {
	IB_UVERBS_DEVICE_RESIZE_MAX_WR = 1ULL << 0,
	IB_UVERBS_DEVICE_ATOMIC_WRITE = 1ULL << 40,
};

enum netdev_priv_flags {
	IFF_BONDING = 1 << 2,
	IFF_LIVE_RENAME_OK = 1 << 30,
	IFF_NO_ADDRCONF = 1 << 30,
};

enum pid_type___missing {
	PIDTYPE_PID,
	PIDTYPE_NONE,
};

SEC("raw_tp/sys_enter")
int enum_values(void *ctx)
{
	KEEP(0, bpf_core_enum_value(enum pageflags, PG_locked));
	KEEP(1, bpf_core_enum_value(enum pageflags, PG_active));
	KEEP(2, bpf_core_enum_value(enum pageflags, PG_hwpoison));
	KEEP(3, bpf_core_enum_value(enum perf_callchain_context, PERF_CONTEXT_MAX));
	KEEP(4, bpf_core_enum_value(enum perf_callchain_context, PERF_CONTEXT_KERNEL));
	KEEP(5, bpf_core_enum_value(enum ib_uverbs_device_cap_flags, IB_UVERBS_DEVICE_ATOMIC_WRITE));
	KEEP(6, bpf_core_enum_value(enum netdev_priv_flags, IFF_BONDING));
	KEEP(7, bpf_core_enum_value(enum bpf_prog_type, BPF_PROG_TYPE_NETFILTER));
	return 0;
}

SEC("raw_tp/sys_enter")
int enum_exists(void *ctx)
{
	KEEP(0, bpf_core_enum_value_exists(enum pageflags, PG_slab));
	KEEP(1, bpf_core_enum_value_exists(enum pageflags, PG_hwpoison));
	KEEP(2, bpf_core_enum_value_exists(enum bpf_prog_type, BPF_PROG_TYPE_NETFILTER));
	KEEP(3, bpf_core_enum_value_exists(enum ib_uverbs_device_cap_flags, IB_UVERBS_DEVICE_ATOMIC_WRITE));
	KEEP(4, bpf_core_enum_value_exists(enum ib_uverbs_device_cap_flags, IB_UVERBS_DEVICE_RESIZE_MAX_WR));
	KEEP(5, bpf_core_enum_value_exists(enum netdev_priv_flags, IFF_LIVE_RENAME_OK));
	KEEP(6, bpf_core_enum_value_exists(enum netdev_priv_flags, IFF_NO_ADDRCONF));
	KEEP(7, bpf_core_enum_value_exists(enum pid_type___missing, PIDTYPE_NONE));
	KEEP(8, bpf_core_enum_value_exists(enum pid_type___missing, PIDTYPE_PID));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
