// SPDX-License-Identifier: GPL-2.0
/*
 * ctx_long.c: a tracepoint reading its context's `unsigned long args[6]`
 * directly, through a CO-RE relocated struct. On x86_64 args[0] is 8 bytes
 * at offset 16 and the 8-byte load is right. On a 32-bit kernel (i386) it
 * is 4 bytes at offset 12: cilium/ebpf's fixup moves the offset and keeps
 * the 8-byte load, and the verifier refuses it
 * ("invalid bpf_context access off=12 size=8": a tracepoint's context
 * access must be aligned to its size).
 */
#include "features.h"

struct trace_event_raw_sys_enter {
	long id;
	unsigned long args[6];
} __attribute__((preserve_access_index));

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_arg(struct trace_event_raw_sys_enter *ctx)
{
	hit(ctx->args[0]);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
