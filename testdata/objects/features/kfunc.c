// SPDX-License-Identifier: GPL-2.0
/*
 * kfunc.c: a program calling the kfuncs bpf_rcu_read_lock and
 * bpf_rcu_read_unlock (Linux 6.2, in the set every program type may
 * call). Debian 12's 6.1 kernels lack them: cilium/ebpf finds no such
 * FUNC in the kernel's BTF. A kfunc call is a call into the kernel by
 * BTF ID, so it needs the kernel's own BTF too.
 */
#include "features.h"

extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

SEC("tp_btf/sched_process_exec")
int rcu_kfunc(void *ctx)
{
	bpf_rcu_read_lock();
	hit(1);
	bpf_rcu_read_unlock();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
