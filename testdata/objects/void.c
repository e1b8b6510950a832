// SPDX-License-Identifier: GPL-2.0
/*
 * void.c: type-based relocations whose type graph reaches void, in every
 * way a kernel type can: through a typedef of a pointer (acpi_handle,
 * fl_owner_t: void *), through const and volatile qualifiers on both
 * sides of the pointer (local flavours declared const void *const and
 * volatile void *), through a function prototype's void return type
 * (smp_call_func_t, rcu_callback_t, the tracepoint prototype
 * btf_trace_block_rq_insert), through a void * parameter (smp_call_func_t,
 * btf_trace_block_rq_insert) or const void * parameters (cmp_func_t), an
 * empty parameter list (initcall_t: int (*)(void)), and through a struct
 * member (file.private_data, callback_head.func).
 *
 * Every one is asked as type_exists, type_size, type_matches and
 * target_type_id. Matches that fail on every kernel: a prototype whose
 * void * parameter is an int * locally (smp_call_func_t___intp), a
 * tracepoint prototype of the wrong shape (btf_trace_block_rq_insert___old),
 * and a struct whose void * member is a long locally (file___long). Field
 * relocations on the void * members are there too.
 */
#include "common.h"

struct request;
struct callback_head___void;

typedef void *acpi_handle;
typedef const void *const acpi_handle___const;
typedef volatile void *fl_owner_t;
typedef void (*smp_call_func_t)(void *info);
typedef void (*smp_call_func_t___intp)(int *info);
typedef void (*rcu_callback_t)(struct callback_head___void *head);
typedef int (*cmp_func_t)(const void *a, const void *b);
typedef int (*initcall_t)(void);
typedef void (*btf_trace_block_rq_insert___new)(void *ctx, struct request *rq);
typedef void (*btf_trace_block_rq_insert___old)(void *ctx, struct request *rq, int at_head);

struct file {
	void *private_data;
} __core;

struct file___long {
	long private_data;
} __core;

struct callback_head___void {
	struct callback_head___void *next;
	void (*func)(struct callback_head___void *head);
} __core;

/* Four slots per type: exists, size, matches, kernel type ID. */
#define ALL_KINDS(slot, T)                                    \
	do {                                                  \
		KEEP((slot), bpf_core_type_exists(T));        \
		KEEP((slot) + 1, bpf_core_type_size(T));      \
		KEEP((slot) + 2, bpf_core_type_matches(T));   \
		KEEP((slot) + 3, bpf_core_type_id_kernel(T)); \
	} while (0)

SEC("raw_tp/sys_enter")
int void_typedefs(void *ctx)
{
	ALL_KINDS(0, acpi_handle);
	ALL_KINDS(4, acpi_handle___const);
	ALL_KINDS(8, fl_owner_t);
	ALL_KINDS(12, smp_call_func_t);
	ALL_KINDS(16, smp_call_func_t___intp);
	ALL_KINDS(20, rcu_callback_t);
	ALL_KINDS(24, cmp_func_t);
	ALL_KINDS(28, initcall_t);
	return 0;
}

SEC("raw_tp/block_rq_insert")
int void_structs(void *ctx)
{
	struct file *f = (void *)ctx;
	struct callback_head___void *head = (void *)ctx;

	ALL_KINDS(0, btf_trace_block_rq_insert___new);
	ALL_KINDS(4, btf_trace_block_rq_insert___old);
	ALL_KINDS(8, struct file);
	ALL_KINDS(12, struct file___long);
	ALL_KINDS(16, struct callback_head___void);
	KEEP(20, BPF_CORE_READ(f, private_data));
	KEEP(21, bpf_core_field_size(f->private_data));
	KEEP(22, BPF_CORE_READ(head, func));
	KEEP(23, bpf_core_field_exists(head->func));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
