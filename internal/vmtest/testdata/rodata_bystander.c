// SPDX-License-Identifier: GPL-2.0
/*
 * rodata_bystander.c: an object with read-only global data (.rodata) and
 * two kprobes, one that reads it and a bystander that does not. Before
 * Linux 5.2 the bystander fails too when it is loaded with its object's
 * variables (bpf2go's LoadAndAssign, runtime's Prune, the field test's
 * guest): cilium/ebpf creates .rodata with BPF_F_RDONLY_PROG, a 5.2 flag
 * the kernel refuses at map creation, before any program is loaded.
 * A .bss-only object does not fail so: cilium/ebpf creates .bss there
 * as a plain array.
 */
#include "features/features.h"

const volatile __u64 step = 1; /* .rodata: set at load time */

SEC("kprobe/do_nanosleep")
int reads_rodata(void *ctx)
{
	hit(step);
	return 0;
}

SEC("kprobe/do_nanosleep")
int bystander(void *ctx)
{
	hit(1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
