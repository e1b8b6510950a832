// SPDX-License-Identifier: GPL-2.0
/*
 * btfid.c: programs that attach by the kernel's BTF ID (fentry, tp_btf):
 * their load names a kernel function or tracepoint by its ID in the
 * kernel's own BTF, so they cannot load on a kernel without BTF, whatever
 * BTF is embedded. fentry needs the BPF trampoline (x86_64 from 5.5,
 * arm64 from 6.0).
 */
#include "features.h"

SEC("fentry/do_nanosleep")
int fentry_nanosleep(void *ctx)
{
	hit(1);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int tp_btf_exec(void *ctx)
{
	hit(1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
