// SPDX-License-Identifier: GPL-2.0
/*
 * conntrack.c: relocations against kernel-module types (nf_conntrack.ko)
 * mixed with vmlinux types.
 *
 * struct nf_conn, nf_conntrack_tuple(_hash), nf_ct_ext, enum nf_ct_ext_id
 * and task_struct live in vmlinux BTF on the Debian kernels. The module's
 * split BTF holds nf_conn_acct, nf_conn_counter, nf_conn_tstamp,
 * nf_conn_help, nf_conntrack_helper (vmlinux has only a FWD of it),
 * bpf_ct_opts (ct_zone_id only on 6.12) and enum ip_conntrack_events.
 * Those resolve only when the module's BTF is a relocation target.
 */
#include "common.h"

typedef struct {
	int counter;
} __core atomic_t;

typedef struct {
	__s64 counter;
} __core atomic64_t;

typedef struct refcount_struct {
	atomic_t refs;
} __core refcount_t;

/* vmlinux types */

struct nf_conntrack {
	refcount_t use;
} __core;

struct nf_conntrack_tuple {
	struct {
		__u8 protonum;
		__u8 dir;
	} dst;
} __core;

struct nf_conntrack_tuple_hash {
	struct nf_conntrack_tuple tuple;
} __core;

struct nf_ct_ext {
	__u8 offset[10];
	__u8 len;
	char data[];
} __core;

struct nf_conn {
	struct nf_conntrack ct_general;
	struct nf_conntrack_tuple_hash tuplehash[2];
	unsigned long status;
	__u32 mark;
	struct nf_ct_ext *ext;
} __core;

enum nf_ct_ext_id {
	NF_CT_EXT_HELPER,
	NF_CT_EXT_ACCT,
	NF_CT_EXT_TSTAMP,
	NF_CT_EXT_ACT_CT,
};

struct task_struct {
	char comm[16];
} __core;

/* nf_conntrack.ko types */

struct nf_conn_counter {
	atomic64_t packets;
	atomic64_t bytes;
} __core;

struct nf_conn_acct {
	struct nf_conn_counter counter[2];
} __core;

struct nf_conn_tstamp {
	__u64 start;
	__u64 stop;
} __core;

struct nf_conntrack_helper {
	char name[16];
} __core;

struct nf_conn_help {
	struct nf_conntrack_helper *helper;
} __core;

struct bpf_ct_opts {
	__s32 netns_id;
	__u8 l4proto;
	__u16 ct_zone_id;
} __core;

enum ip_conntrack_events {
	IPCT_NEW,
	IPCT_DESTROY = 2,
};

/* Address of the extension id in ct->ext, or NULL when it is absent. */
static __always_inline void *ct_ext(struct nf_ct_ext *ext, __u32 id)
{
	__u8 off = 0;

	bpf_probe_read_kernel(&off, sizeof(off),
			      (void *)ext + bpf_core_field_offset(ext->offset) + id);
	return off ? (void *)ext + off : (void *)0;
}

SEC("fentry/nf_ct_delete")
int BPF_PROG(ct_delete, struct nf_conn *ct)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct nf_ct_ext *ext = BPF_CORE_READ(ct, ext);
	struct nf_conn_acct *acct;
	struct nf_conn_tstamp *ts;
	struct nf_conn_help *help;
	char name[16];

	KEEP(0, BPF_CORE_READ(ct, status));
	KEEP(1, BPF_CORE_READ(ct, mark));
	KEEP(2, BPF_CORE_READ(ct, ct_general.use.refs.counter));
	KEEP(3, BPF_CORE_READ(ct, tuplehash[1].tuple.dst.protonum));
	KEEP(4, BPF_CORE_READ(task, comm[0]));
	KEEP(5, bpf_core_field_offset(ext->data));

	acct = ct_ext(ext, bpf_core_enum_value(enum nf_ct_ext_id, NF_CT_EXT_ACCT));
	if (acct)
		KEEP(6, BPF_CORE_READ(acct, counter[1].bytes.counter));
	ts = ct_ext(ext, bpf_core_enum_value(enum nf_ct_ext_id, NF_CT_EXT_TSTAMP));
	if (ts)
		KEEP(7, BPF_CORE_READ(ts, start));
	help = ct_ext(ext, bpf_core_enum_value(enum nf_ct_ext_id, NF_CT_EXT_HELPER));
	if (help) {
		BPF_CORE_READ_STR_INTO(&name, help, helper, name);
		KEEP(8, name[0]);
	}
	KEEP(9, bpf_core_enum_value_exists(enum nf_ct_ext_id, NF_CT_EXT_ACT_CT));
	return 0;
}

SEC("fentry/nf_ct_delete")
int BPF_PROG(module_types, struct nf_conn *ct)
{
	KEEP(0, bpf_core_type_exists(struct nf_conntrack_helper));
	KEEP(1, bpf_core_type_size(struct nf_conn_acct));
	KEEP(2, bpf_core_field_exists(struct bpf_ct_opts, ct_zone_id));
	KEEP(3, bpf_core_type_size(struct bpf_ct_opts));
	KEEP(4, bpf_core_enum_value(enum ip_conntrack_events, IPCT_DESTROY));
	KEEP(5, bpf_core_type_id_kernel(struct nf_conn_tstamp));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
