// SPDX-License-Identifier: GPL-2.0
/*
 * globals.c: a kprobe using global data, which libbpf and cilium/ebpf turn
 * into array maps (.rodata frozen after the user sets it, .data, .bss)
 * referred to by BPF_PSEUDO_MAP_VALUE loads. Linux 5.2 added them
 * (commit d8eca5bbb2be, "bpf: implement lookup-free direct value access
 * for maps"); older verifiers refuse the load ("unrecognized
 * bpf_ld_imm64 insn").
 */
#include "features.h"

const volatile __u32 only_tgid = 0; /* .rodata: set at load time */
__u64 calls = 0;                    /* .bss */
__u64 step = 1;                     /* .data */

SEC("kprobe/do_nanosleep")
int globals(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (only_tgid && tgid != only_tgid)
		return 0;
	__sync_fetch_and_add(&calls, step);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
