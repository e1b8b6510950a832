// SPDX-License-Identifier: GPL-2.0
/*
 * A kprobe that reads its first two arguments through bpf_tracing.h's
 * PT_REGS_PARM*_CORE, as bpf2go users write it. Compiled once per
 * architecture, like bpf2go -target amd64,arm64 does, the macro reads
 * different kernel types: struct pt_regs' di and si on x86, struct
 * user_pt_regs' regs[0] and regs[1] on arm64. Each object's relocations
 * resolve only on kernels of its architecture, which is what pairing
 * objects with kernels (generator/pair.go) is about.
 */
#include "../prelude.h"

/* bpf_tracing.h uses the kernel's register names, not user space's, when
 * vmlinux.h was included; the types below stand in for it. */
#define __VMLINUX_H__
#include <bpf/bpf_tracing.h>

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long di;
	unsigned long si;
} __attribute__((preserve_access_index));
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs;
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));
#endif

__u64 seen;

SEC("kprobe/do_unlinkat")
int BPF_KPROBE(kprobe_unlinkat, long dfd, void *name)
{
	seen = (__u64)dfd + (__u64)name;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
