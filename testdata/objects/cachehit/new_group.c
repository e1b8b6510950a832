// SPDX-License-Identifier: GPL-2.0
/*
 * new_group.c: ../fields.c and a program reading task_struct.__state on
 * its own, a relocation group (local type and access set) fields.c does
 * not have.
 */
#include "../fields.c"

SEC("tp_btf/sched_process_exit")
int BPF_PROG(read_state, struct task_struct *task)
{
	KEEP(0, BPF_CORE_READ(task, __state));
	return 0;
}
