// SPDX-License-Identifier: GPL-2.0
/*
 * conntrack_kprobe.c: a program that loads on a kernel without BTF and
 * reads nf_conntrack's module types, for the VM test of the module path.
 *
 * ../../../testdata/objects/conntrack.c reads the same module types from
 * fentry programs, which need the kernel's BTF to attach and so cannot load
 * where /sys/kernel/btf is hidden. A kprobe attaches by symbol name: only
 * its CO-RE relocations need BTF, and the embedded BTF serves them.
 *
 * struct nf_conn and nf_ct_ext are vmlinux types on the Debian kernels;
 * nf_conn_acct, nf_conn_counter, nf_conn_tstamp and enum
 * ip_conntrack_events exist only in nf_conntrack.ko's split BTF.
 */
#include "common.h"

typedef struct {
	__s64 counter;
} __core atomic64_t;

struct nf_ct_ext {
	__u8 offset[10];
} __core;

struct nf_conn {
	unsigned long status;
	__u32 mark;
	struct nf_ct_ext *ext;
} __core;

enum nf_ct_ext_id {
	NF_CT_EXT_ACCT = 1,
	NF_CT_EXT_TSTAMP = 2,
};

struct nf_conn_counter {
	atomic64_t packets;
	atomic64_t bytes;
} __core;

struct nf_conn_acct {
	struct nf_conn_counter counter[2];
} __core;

struct nf_conn_tstamp {
	__u64 start;
} __core;

enum ip_conntrack_events {
	IPCT_DESTROY = 2,
};

/* The first argument of the probed function, on x86_64 and arm64. */
struct pt_regs___x86 {
	unsigned long di;
} __core;

struct pt_regs___arm64 {
	__u64 regs[31];
} __core;

static __always_inline void *first_arg(void *ctx)
{
	struct pt_regs___arm64 *a = ctx;
	struct pt_regs___x86 *x = ctx;

	if (bpf_core_type_exists(struct pt_regs___arm64) && bpf_core_field_exists(a->regs))
		return (void *)BPF_CORE_READ(a, regs[0]);
	return (void *)BPF_CORE_READ(x, di);
}

/* Address of extension id in ct->ext, or NULL when it is absent. */
static __always_inline void *ct_ext(struct nf_ct_ext *ext, __u32 id)
{
	__u8 off = 0;

	bpf_probe_read_kernel(&off, sizeof(off), (void *)ext + bpf_core_field_offset(ext->offset) + id);
	return off ? (void *)ext + off : (void *)0;
}

SEC("kprobe/nf_ct_delete")
int ct_delete_kprobe(void *ctx)
{
	struct nf_conn *ct = first_arg(ctx);
	struct nf_ct_ext *ext = BPF_CORE_READ(ct, ext);
	struct nf_conn_acct *acct;
	struct nf_conn_tstamp *ts;

	KEEP(0, BPF_CORE_READ(ct, status));
	KEEP(1, BPF_CORE_READ(ct, mark));
	acct = ct_ext(ext, bpf_core_enum_value(enum nf_ct_ext_id, NF_CT_EXT_ACCT));
	if (acct)
		KEEP(2, BPF_CORE_READ(acct, counter[1].bytes.counter));
	ts = ct_ext(ext, bpf_core_enum_value(enum nf_ct_ext_id, NF_CT_EXT_TSTAMP));
	if (ts)
		KEEP(3, BPF_CORE_READ(ts, start));
	KEEP(4, bpf_core_type_size(struct nf_conn_acct));
	KEEP(5, bpf_core_enum_value(enum ip_conntrack_events, IPCT_DESTROY));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
