// SPDX-License-Identifier: GPL-2.0
/*
 * voidptr.c: a type mismatch that only exists behind a pointer.
 *
 * task_struct___voidmm declares mm as void *; the kernel's is a
 * struct mm_struct *, so bpf_core_type_matches fails on every kernel
 * (void does not match a struct). The program also reads task->mm, which
 * keeps task_struct.mm in the minimized BTF; mm_struct itself is needed by
 * nothing else. A minimized BTF that pointed mm to void would make the
 * match succeed: corereloc.Minimize must notice and keep mm_struct.
 */
#include "../../../testdata/objects/prelude.h"

struct mm_struct;

struct task_struct {
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

struct task_struct___voidmm {
	void *mm;
} __attribute__((preserve_access_index));

volatile __u64 out[2];

SEC("raw_tp/sys_enter")
int voidptr(void *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();

	out[0] = (__u64)BPF_CORE_READ(task, mm);
	out[1] = bpf_core_type_matches(struct task_struct___voidmm);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
