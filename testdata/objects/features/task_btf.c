// SPDX-License-Identifier: GPL-2.0
/*
 * task_btf.c: a kprobe calling bpf_get_current_task_btf (158, Linux
 * 5.11), a helper that returns a pointer typed by the kernel's own BTF
 * (RET_PTR_TO_BTF_ID). A kernel without BTF has the helper but refuses it
 * ("invalid return type 8 of func bpf_get_current_task_btf"); 5.10 does
 * not have it. The task is read with BPF_CORE_READ (bpf_probe_read_kernel),
 * whose relocation resolves everywhere.
 */
#include "features.h"

struct task_struct {
	int pid;
} __attribute__((preserve_access_index));

SEC("kprobe/do_nanosleep")
int task_btf(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();

	hit(BPF_CORE_READ(t, pid));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
