// SPDX-License-Identifier: GPL-2.0
/*
 * types.c: type-based relocations: type exists, type size, type matches,
 * local type ID and target (kernel) type ID.
 *
 *   struct task_struct     every kernel, size differs between builds
 *   struct mm_rss_stat     6.1 only (removed in 6.2)
 *   struct bpf_arena       6.12 and later only, size differs (336, 400)
 *   struct sched_ext_entity on none of the testdata kernels
 *   union bpf_attr         a union, size 144/152/168
 *   struct pt_regs         size 168 on x86_64, 336 on arm64
 *   enum pid_type, typedef pid_t (-> __kernel_pid_t -> int)
 *
 * type_matches: list_head, pid_type and pid_t match everywhere; a flavour
 * with saved_state matches only 6.12+; a flavour whose pid is a long never
 * matches (int name and size differ). pt_regs never matches, not even on
 * x86_64 where di and si exist: type matching compares integer type names,
 * and clang calls the type "unsigned long" where the kernel's BTF (built
 * from gcc's DWARF) says "long unsigned int".
 */
#include "common.h"

typedef int __kernel_pid_t;
typedef __kernel_pid_t pid_t;

struct list_head {
	struct list_head *next, *prev;
} __core;

enum pid_type {
	PIDTYPE_PID,
	PIDTYPE_TGID,
};

struct task_struct {
	pid_t pid;
} __core;

struct task_struct___saved {
	unsigned int saved_state;
} __core;

struct task_struct___bad {
	long pid;
} __core;

struct mm_rss_stat {
	long count[4];
} __core;

struct bpf_arena {
	__u64 user_vm_start;
} __core;

struct sched_ext_entity {
	__u32 dsq_vtime;
} __core;

union bpf_attr {
	__u32 map_type;
} __core;

struct pt_regs {
	unsigned long di;
	unsigned long si;
} __core;

SEC("raw_tp/sys_enter")
int type_exists_size(void *ctx)
{
	KEEP(0, bpf_core_type_exists(struct task_struct));
	KEEP(1, bpf_core_type_exists(struct mm_rss_stat));
	KEEP(2, bpf_core_type_exists(struct bpf_arena));
	KEEP(3, bpf_core_type_exists(struct sched_ext_entity));
	KEEP(4, bpf_core_type_exists(union bpf_attr));
	KEEP(5, bpf_core_type_exists(enum pid_type));
	KEEP(6, bpf_core_type_exists(pid_t));
	KEEP(7, bpf_core_type_size(struct task_struct));
	KEEP(8, bpf_core_type_size(struct bpf_arena));
	KEEP(9, bpf_core_type_size(union bpf_attr));
	KEEP(10, bpf_core_type_size(struct pt_regs));
	KEEP(11, bpf_core_type_size(enum pid_type));
	KEEP(12, bpf_core_type_size(pid_t));
	KEEP(13, bpf_core_type_size(struct mm_rss_stat));
	return 0;
}

SEC("raw_tp/sys_enter")
int type_matches(void *ctx)
{
	KEEP(0, bpf_core_type_matches(struct list_head));
	KEEP(1, bpf_core_type_matches(enum pid_type));
	KEEP(2, bpf_core_type_matches(struct task_struct___saved));
	KEEP(3, bpf_core_type_matches(struct task_struct___bad));
	KEEP(4, bpf_core_type_matches(struct pt_regs));
	KEEP(5, bpf_core_type_matches(pid_t));
	return 0;
}

SEC("raw_tp/sys_enter")
int type_ids(void *ctx)
{
	KEEP(0, bpf_core_type_id_local(struct task_struct));
	KEEP(1, bpf_core_type_id_local(struct bpf_arena));
	KEEP(2, bpf_core_type_id_kernel(struct task_struct));
	KEEP(3, bpf_core_type_id_kernel(struct bpf_arena));
	KEEP(4, bpf_core_type_id_kernel(pid_t));
	KEEP(5, bpf_core_type_id_kernel(union bpf_attr));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
