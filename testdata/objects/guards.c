// SPDX-License-Identifier: GPL-2.0
/*
 * guards.c: programs that do and do not load where a relocation is
 * poisoned, for the load prediction (internal/predict), checked against
 * the verifier. Unlike the other objects, these programs are meant to
 * load, on the kernels where the prediction says they do.
 *
 *   task_struct.mm_cid exists on 6.12 and 6.18, not on 6.1.
 *   task_struct___fake.btfembed_missing exists on no kernel.
 *   struct btfembed_missing exists on no kernel.
 *   enum bpf_prog_type BPF_PROG_TYPE_NETFILTER exists on 6.12+ only.
 *
 * Each guarded program reads the missing member only behind a CO-RE
 * existence check, which clang compiles to a relocated constant that a
 * conditional jump tests: the verifier prunes the read where the constant
 * is 0. Each unguarded one reads it on a path the verifier follows. The
 * guards come in the shapes compiled code has: in the function, in a
 * static function whose return value is tested, spilled to the stack,
 * combined arithmetically or with a runtime condition, in a loop, in a
 * bpf_loop callback; and two the prediction cannot decide, a .rodata
 * variable and LINUX_KERNEL_VERSION (.kconfig), both set at load time.
 */
#include "common.h"

struct task_struct {
	int pid;
	int mm_cid;
} __core;

struct task_struct___fake {
	int btfembed_missing;
} __core;

struct btfembed_missing {
	int x;
} __core;

enum bpf_prog_type {
	BPF_PROG_TYPE_NETFILTER = 32,
};

/* Not static, so that it stays a global function: the verifier checks
 * global functions on their own, from 6.8 only where a call is reached. */
const volatile int read_cid = 0;

static struct task_struct *current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

SEC("kprobe/do_nanosleep")
int field_guarded(void *ctx)
{
	struct task_struct *t = current_task();

	if (bpf_core_field_exists(t->mm_cid))
		KEEP(0, BPF_CORE_READ(t, mm_cid));
	return 0;
}

SEC("kprobe/do_nanosleep")
int field_unguarded(void *ctx)
{
	KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

SEC("kprobe/do_nanosleep")
int missing_guarded(void *ctx)
{
	struct task_struct___fake *t = (void *)current_task();

	if (bpf_core_field_exists(t->btfembed_missing))
		KEEP(0, BPF_CORE_READ(t, btfembed_missing));
	else
		KEEP(0, BPF_CORE_READ(current_task(), pid));
	return 0;
}

SEC("kprobe/do_nanosleep")
int missing_unguarded(void *ctx)
{
	struct task_struct___fake *t = (void *)current_task();

	KEEP(0, BPF_CORE_READ(t, btfembed_missing));
	return 0;
}

/* The existence check in one function, the read in another. */
static __noinline int cid_exists(void)
{
	struct task_struct *t = 0;

	return bpf_core_field_exists(t->mm_cid);
}

static __noinline int cid_of(struct task_struct *t)
{
	return BPF_CORE_READ(t, mm_cid);
}

SEC("kprobe/do_nanosleep")
int subprog_guarded(void *ctx)
{
	if (cid_exists())
		KEEP(0, cid_of(current_task()));
	return 0;
}

SEC("kprobe/do_nanosleep")
int subprog_unguarded(void *ctx)
{
	KEEP(0, cid_of(current_task()));
	return 0;
}

/* A global function that reads unguarded, called behind a guard. Its
 * argument is a scalar: the verifier checks a global function alone,
 * and accepts only context, scalar or BTF-typed pointer arguments. */
__noinline int global_cid(__u64 task)
{
	return BPF_CORE_READ((struct task_struct *)task, mm_cid);
}

SEC("kprobe/do_nanosleep")
int global_guarded(void *ctx)
{
	if (bpf_core_field_exists(((struct task_struct *)0)->mm_cid))
		KEEP(0, global_cid(bpf_get_current_task()));
	return 0;
}

SEC("kprobe/do_nanosleep")
int type_guarded(void *ctx)
{
	if (bpf_core_type_exists(struct btfembed_missing))
		KEEP(0, bpf_core_type_size(struct btfembed_missing));
	return 0;
}

SEC("kprobe/do_nanosleep")
int type_unguarded(void *ctx)
{
	KEEP(0, bpf_core_type_size(struct btfembed_missing));
	return 0;
}

SEC("kprobe/do_nanosleep")
int enum_guarded(void *ctx)
{
	if (bpf_core_enum_value_exists(enum bpf_prog_type, BPF_PROG_TYPE_NETFILTER))
		KEEP(0, bpf_core_enum_value(enum bpf_prog_type, BPF_PROG_TYPE_NETFILTER));
	return 0;
}

SEC("kprobe/do_nanosleep")
int enum_unguarded(void *ctx)
{
	KEEP(0, bpf_core_enum_value(enum bpf_prog_type, BPF_PROG_TYPE_NETFILTER));
	return 0;
}

/* The existence answer goes through the stack before it is tested. */
SEC("kprobe/do_nanosleep")
int spilled_guard(void *ctx)
{
	volatile int exists = bpf_core_field_exists(((struct task_struct *)0)->mm_cid);

	if (exists)
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* Both answers combined arithmetically, then tested. */
SEC("kprobe/do_nanosleep")
int combined_guard(void *ctx)
{
	int n = bpf_core_field_exists(((struct task_struct *)0)->mm_cid) +
		bpf_core_enum_value_exists(enum bpf_prog_type, BPF_PROG_TYPE_NETFILTER);

	if (n == 2)
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* Guarded by a value set at load time: the analysis cannot know it. */
SEC("kprobe/do_nanosleep")
int rodata_guarded(void *ctx)
{
	if (read_cid)
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* A guard and a runtime condition together. */
SEC("kprobe/do_nanosleep")
int runtime_and_guard(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid();

	if (pid > 100 && bpf_core_field_exists(((struct task_struct *)0)->mm_cid))
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* A runtime condition alone does not guard. */
SEC("kprobe/do_nanosleep")
int runtime_only(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid();

	if (pid > 100)
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* The member's size is no guard: where the member does not exist, the
 * size relocation is poisoned, not 0. */
SEC("kprobe/do_nanosleep")
int size_not_a_guard(void *ctx)
{
	if (bpf_core_field_size(((struct task_struct *)0)->mm_cid) == 4)
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* A guard in a bounded loop. */
SEC("kprobe/do_nanosleep")
int loop_guard(void *ctx)
{
	for (int i = 0; i < 4; i++) {
		if (bpf_core_field_exists(((struct task_struct *)0)->mm_cid))
			KEEP(i, BPF_CORE_READ(current_task(), mm_cid));
		else
			KEEP(i, i);
	}
	return 0;
}

static int loop_body(__u32 i, void *data)
{
	if (bpf_core_field_exists(((struct task_struct *)0)->mm_cid))
		KEEP(1, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

static int loop_body_unguarded(__u32 i, void *data)
{
	KEEP(1, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

/* Guarded and unguarded reads in bpf_loop callbacks. */
SEC("kprobe/do_nanosleep")
int callback_guarded(void *ctx)
{
	bpf_loop(2, loop_body, 0, 0);
	return 0;
}

SEC("kprobe/do_nanosleep")
int callback_unguarded(void *ctx)
{
	bpf_loop(2, loop_body_unguarded, 0, 0);
	return 0;
}

/* The kernel version as the guard: cilium/ebpf fills .kconfig from the
 * running kernel, which the prediction does not know. */
extern int LINUX_KERNEL_VERSION __kconfig;

SEC("kprobe/do_nanosleep")
int version_guarded(void *ctx)
{
	if (LINUX_KERNEL_VERSION >= KERNEL_VERSION(6, 4, 0))
		KEEP(0, BPF_CORE_READ(current_task(), mm_cid));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
