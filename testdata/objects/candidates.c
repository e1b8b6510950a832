// SPDX-License-Identifier: GPL-2.0
/*
 * candidates.c: relocations whose type name matches several kernel types.
 * Kernels carry distinct structs with the same name from different
 * compilation units; CO-RE tries each and needs them to agree.
 *
 *   syscall_tp_t.syscall_nr     two kernel structs named syscall_tp_t
 *                               (enter and exit tracepoints), same offset:
 *                               the candidates agree
 *   elf_thread_core_info.task   two candidates (native and compat ELF core
 *                               dumper), same offset: agree
 *   elf_thread_core_info.notes  the same two candidates, at different
 *                               offsets: ambiguous on every kernel
 *   elf_thread_core_info___chars.notes
 *                               as above, but declared as char[] where the
 *                               kernel has struct memelfnote[]: libbpf
 *                               compares array element types and finds no
 *                               candidate; cilium/ebpf does not, and finds
 *                               the ambiguity
 *   irq_info.irq                three kernel structs named irq_info; two
 *                               have an int irq, at different offsets, on
 *                               the Debian kernels (ambiguous), and only
 *                               one does on 6.18 (resolves)
 *
 * libbpf, and so bpftool gen min_core_btf, gives up on a kernel at the
 * first ambiguous relocation.
 */
#include "common.h"

struct syscall_tp_t {
	unsigned long long syscall_nr;
} __core;

struct memelfnote {
	const char *name;
} __core;

struct elf_thread_core_info {
	void *task;
	struct memelfnote notes[];
} __core;

struct elf_thread_core_info___chars {
	char notes[0];
} __core;

struct irq_info {
	int irq;
} __core;

SEC("raw_tp/sys_enter")
int agree(void *ctx)
{
	struct syscall_tp_t *tp = ctx;
	struct elf_thread_core_info *info = ctx;

	KEEP(0, BPF_CORE_READ(tp, syscall_nr));
	KEEP(1, BPF_CORE_READ(info, task));
	return 0;
}

SEC("raw_tp/sys_enter")
int disagree(void *ctx)
{
	struct elf_thread_core_info *info = ctx;
	struct elf_thread_core_info___chars *chars = ctx;
	struct irq_info *irq = ctx;

	KEEP(0, bpf_core_field_offset(info->notes));
	KEEP(1, bpf_core_field_offset(chars->notes));
	KEEP(2, BPF_CORE_READ(irq, irq));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
