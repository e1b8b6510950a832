// SPDX-License-Identifier: GPL-2.0
/*
 * cgrp_storage.c: a BPF_MAP_TYPE_CGRP_STORAGE map (Linux 6.2) used with
 * bpf_cgrp_storage_get (210, 6.2) on the current task's default cgroup,
 * as the kernel's selftest cgrp_ls_tp_btf.c does. Debian 12's 6.1 kernels
 * have neither the map type nor the helper.
 */
#include "features.h"

struct cgroup;

struct css_set {
	struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

struct task_struct {
	struct css_set *cgroups;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} syscalls SEC(".maps");

SEC("tp_btf/sys_enter")
int cgrp_storage(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 *n;

	n = bpf_cgrp_storage_get(&syscalls, t->cgroups->dfl_cgrp, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
