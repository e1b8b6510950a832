// SPDX-License-Identifier: GPL-2.0
/*
 * kfunc_weak.c: the kfuncs of kfunc.c declared __weak and called only
 * where the kernel has them, tested as libbpf's bpf_ksym_exists does
 * (libbpf 1.2; Debian 12 ships 1.1): the address of a weak kfunc the
 * kernel lacks is 0, cilium/ebpf poisons the call, and the verifier
 * never reaches it. It loads on 6.1 and 6.12; on a kernel without its
 * own BTF its program type (tp_btf) fails it.
 */
#include "features.h"

extern void bpf_rcu_read_lock(void) __ksym __weak;
extern void bpf_rcu_read_unlock(void) __ksym __weak;

#define ksym_exists(sym) (!!(sym))

SEC("tp_btf/sched_process_exec")
int rcu_kfunc_weak(void *ctx)
{
	if (ksym_exists(bpf_rcu_read_lock) && ksym_exists(bpf_rcu_read_unlock)) {
		bpf_rcu_read_lock();
		hit(1);
		bpf_rcu_read_unlock();
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
