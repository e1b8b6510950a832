// SPDX-License-Identifier: GPL-2.0
/*
 * fields.c: field byte offsets (BPF_CORE_READ), field existence and
 * field byte size against vmlinux types of Debian 6.1 and 6.12.
 *
 * Covers: plain members, pointer chains (real_parent->tgid, mm->arg_start),
 * a nested struct member (se.sum_exec_runtime), members of an anonymous
 * struct (mm_struct's whole body), a member that is direct on 6.12 but
 * sits in an anonymous union on 6.1 (task_struct.rcu_users), a member
 * reached through a typedef chain (refcount_t -> refcount_struct ->
 * atomic_t -> counter), array elements (comm[3]), a flexible array member
 * (mm_struct.cpu_bitmap[]), and fields that exist on only some kernels.
 */
#include "common.h"

typedef struct {
	int counter;
} __core atomic_t;

typedef struct refcount_struct {
	atomic_t refs;
} __core refcount_t;

struct sched_entity {
	__u64 exec_start;
	__u64 sum_exec_runtime;
} __core;

struct mm_struct {
	struct {
		unsigned long arg_start;
		unsigned long arg_end;
		atomic_t mm_users;
	};
	unsigned long cpu_bitmap[];
} __core;

struct task_struct {
	unsigned int __state;
	struct sched_entity se;
	struct mm_struct *mm;
	int pid;
	int tgid;
	struct task_struct *real_parent;
	char comm[16];
	refcount_t rcu_users;
} __core;

/* Members that only some kernels have (checked with bpf_core_field_exists). */
struct task_struct___v612 {
	unsigned int saved_state; /* 6.12 and later */
} __core;

/*
 * Declared with the wrong kind on purpose: 6.1 has a struct task_rss_stat
 * here, not a pointer, so the field is incompatible and
 * bpf_core_field_exists gives 0 even on 6.1.
 */
struct task_struct___v61 {
	void *rss_stat;
} __core;

struct task_rss_stat {
	int events;
	int count[4];
} __core;

struct task_struct___rss {
	struct task_rss_stat rss_stat; /* 6.1 only, removed in 6.2 */
} __core;

struct linux_binprm {
	const char *filename;
} __core;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(read_fields, struct task_struct *task, int old_pid, struct linux_binprm *bprm)
{
	char comm[16];

	KEEP(0, BPF_CORE_READ(task, pid));
	KEEP(1, BPF_CORE_READ(task, tgid));
	KEEP(2, BPF_CORE_READ(task, real_parent, tgid));
	BPF_CORE_READ_STR_INTO(&comm, task, comm);
	KEEP(3, comm[0]);
	KEEP(4, BPF_CORE_READ(task, comm[3]));
	KEEP(5, BPF_CORE_READ(task, mm, arg_start));
	KEEP(6, BPF_CORE_READ(task, mm, arg_end));
	KEEP(7, BPF_CORE_READ(task, mm, mm_users.counter));
	KEEP(8, BPF_CORE_READ(task, mm, cpu_bitmap[1]));
	KEEP(9, BPF_CORE_READ(task, se.sum_exec_runtime));
	KEEP(10, BPF_CORE_READ(task, rcu_users.refs.counter));
	KEEP(11, BPF_CORE_READ(bprm, filename));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(field_info, struct task_struct *task)
{
	struct task_struct___v612 *t612 = (void *)task;
	struct task_struct___rss *trss = (void *)task;

	KEEP(0, bpf_core_field_exists(task->__state));
	KEEP(1, bpf_core_field_exists(t612->saved_state));
	KEEP(2, bpf_core_field_exists(trss->rss_stat));
	KEEP(3, bpf_core_field_exists(struct task_struct___v61, rss_stat));
	KEEP(4, bpf_core_field_size(task->comm));
	KEEP(5, bpf_core_field_size(task->__state));
	KEEP(6, bpf_core_field_size(trss->rss_stat));
	KEEP(7, bpf_core_field_size(struct mm_struct, arg_start));
	KEEP(8, bpf_core_field_offset(struct task_struct, tgid));
	KEEP(9, bpf_core_field_offset(task->rcu_users));
	KEEP(10, bpf_core_field_offset(struct mm_struct, cpu_bitmap));
	if (bpf_core_field_exists(t612->saved_state))
		KEEP(11, BPF_CORE_READ(t612, saved_state));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
