// SPDX-License-Identifier: GPL-2.0
/*
 * execsnoop: one event per successful exec, from the sched_process_exec
 * tracepoint. Reads the task through bpf_get_current_task and CO-RE
 * (BPF_CORE_READ), so the object loads on any kernel for which the loader
 * has BTF: the kernel's own or an embedded one. bpf_get_current_task_btf
 * would tie the program to the kernel's own BTF, which is what embedded
 * BTF exists to replace.
 *
 * Kernel types are declared here, only with the members used and
 * preserve_access_index; there is no vmlinux.h.
 *
 * count_exec is an optional feature: it counts execs per cgroup in a
 * BPF_MAP_TYPE_CGRP_STORAGE map with bpf_cgrp_storage_get, both new in
 * Linux 6.2. Older kernels cannot load it; btfembed predicts so from
 * their BTF, and the agent skips it there while handle_exec runs.
 */

typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define TASK_COMM_LEN 16
#define FILENAME_LEN 256

/* From the kernel's UAPI <linux/bpf.h>. */
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_MAP_TYPE_CGRP_STORAGE 32
#define BPF_F_NO_PREALLOC 1
#define BPF_LOCAL_STORAGE_GET_F_CREATE 1

struct cgroup;

struct css_set {
	struct cgroup *dfl_cgrp; /* the task's cgroup v2 */
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	struct task_struct *real_parent;
	char comm[TASK_COMM_LEN];
	struct css_set *cgroups;
} __attribute__((preserve_access_index));

/* The tracepoint's record: a fixed header, then dynamic data. */
struct trace_event_raw_sched_process_exec {
	/* low 16 bits: offset of the filename from the record start; high 16: length */
	__u32 __data_loc_filename;
	int pid;
	int old_pid;
} __attribute__((preserve_access_index));

/* The record sent to user space; Go mirrors it field by field. */
struct event {
	__u32 pid;  /* thread group id of the process that exec'd */
	__u32 tid;  /* its thread id (the kernel's task pid) */
	__u32 ppid; /* thread group id of real_parent */
	__u32 uid;
	char comm[TASK_COMM_LEN];
	char filename[FILENAME_LEN];
};

/* Puts struct event in the object's BTF, so bpf2go -type event writes its
 * Go twin (bpfEvent). */
const struct event *unused_event __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int handle_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 loc = ctx->__data_loc_filename;
	struct event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;

	e->pid = BPF_CORE_READ(task, tgid);
	e->tid = BPF_CORE_READ(task, pid);
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = (__u32)bpf_get_current_uid_gid();
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_probe_read_kernel_str(&e->filename, sizeof(e->filename),
				  (void *)ctx + (loc & 0xffff));

	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Execs per cgroup v2, keyed by cgroup (user space looks a cgroup up by
 * the fd of its directory). */
struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} execs_per_cgroup SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int count_exec(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 *n;

	n = bpf_cgrp_storage_get(&execs_per_cgroup, task->cgroups->dfl_cgrp, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
