// SPDX-License-Identifier: GPL-2.0
/*
 * flavours.c: flavoured type names (name___suffix), typedef/const/volatile
 * chains, relocations that resolve on no kernel or on one architecture
 * only.
 *
 *   task_struct___old.state     exists on no kernel (renamed __state in
 *                               5.14): the read is poisoned everywhere
 *   task_struct___new.__state   every kernel
 *   task_struct (no flavour)    read through a const volatile pointer,
 *                               members of type const volatile pid_t
 *                               (typedef -> typedef -> int), a const
 *                               restrict pointer to a type_tag("rcu")
 *                               struct (kernel BTF has no such tags) and
 *                               a const char array
 *   refcount_t, atomic_t        relocations rooted at kernel typedefs (of a
 *                               named and of an anonymous struct)
 *   task_t                      a typedef only this object has: reads
 *                               rooted at it resolve on no kernel
 *   pt_regs___x86.di            x86_64 kernels only
 *   pt_regs___arm64.regs[0]     arm64 only, through an anonymous union and
 *                               an anonymous struct in the kernel's pt_regs
 */
#include "common.h"

typedef int __kernel_pid_t;
typedef __kernel_pid_t pid_t;

struct task_struct___new {
	unsigned int __state;
} __core;

struct task_struct___old {
	long state;
} __core;

/*
 * The kernel's task_struct with members behind typedef and qualifier
 * chains; read through a const volatile pointer.
 */
/*
 * Relocations rooted at a typedef look for a kernel typedef of that name:
 * refcount_t (a named struct behind it) and atomic_t (an anonymous struct
 * behind it) exist in every kernel; task_t exists only here, so reads
 * rooted at it resolve on no kernel.
 */
typedef struct {
	int counter;
} __core atomic_t;
typedef struct refcount_struct {
	atomic_t refs;
} __core refcount_t;
typedef struct task_struct task_t;

struct task_struct {
	const volatile pid_t tgid;
	struct task_struct __attribute__((btf_type_tag("rcu"))) *const restrict real_parent;
	const char comm[16];
	refcount_t usage;
} __core;

struct pt_regs___x86 {
	unsigned long di;
} __core;

struct pt_regs___arm64 {
	struct {
		__u64 regs[31];
		__u64 sp;
	};
} __core;

SEC("raw_tp/sys_enter")
int flavours(void *ctx)
{
	void *task = (void *)bpf_get_current_task();
	struct task_struct___new *tnew = task;
	struct task_struct___old *told = task;

	if (bpf_core_field_exists(tnew->__state))
		KEEP(0, BPF_CORE_READ(tnew, __state));
	else
		KEEP(0, BPF_CORE_READ(told, state));
	KEEP(1, bpf_core_field_exists(told->state));
	KEEP(2, bpf_core_type_size(struct task_struct___new));
	return 0;
}

SEC("raw_tp/sys_enter")
int qualifiers(void *ctx)
{
	const volatile struct task_struct *task = (void *)bpf_get_current_task();
	const volatile struct task_struct *parent;
	const volatile refcount_t *usage = (const void *)&task->usage;
	const atomic_t *refs = (const void *)&usage->refs;
	task_t *t = (void *)task;

	KEEP(0, BPF_CORE_READ(task, tgid));
	parent = BPF_CORE_READ(task, real_parent);
	KEEP(1, BPF_CORE_READ(parent, tgid));
	KEEP(2, BPF_CORE_READ(task, comm[0]));
	KEEP(3, bpf_core_field_size(task->tgid));
	KEEP(4, BPF_CORE_READ(usage, refs.counter));
	KEEP(5, bpf_core_field_exists(refs->counter));
	KEEP(6, bpf_core_type_size(refcount_t));
	KEEP(7, BPF_CORE_READ(t, tgid));
	return 0;
}

SEC("kprobe/do_nanosleep")
int arch_regs(struct pt_regs___x86 *regs)
{
	struct pt_regs___arm64 *aregs = (void *)regs;

	if (bpf_core_type_exists(struct pt_regs___arm64) &&
	    bpf_core_field_exists(aregs->regs))
		KEEP(0, BPF_CORE_READ(aregs, regs[0]));
	else
		KEEP(0, BPF_CORE_READ(regs, di));
	KEEP(1, bpf_core_field_offset(aregs->sp));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
