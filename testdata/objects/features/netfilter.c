// SPDX-License-Identifier: GPL-2.0
/*
 * netfilter.c: a BPF_PROG_TYPE_NETFILTER program (Linux 6.4) with its
 * expected attach type BPF_NETFILTER. Debian 12's 6.1 kernels have
 * neither in their enum bpf_prog_type and enum bpf_attach_type; 6.12 has
 * both (with CONFIG_NETFILTER_BPF_LINK). It accepts every packet.
 */
#include "features.h"

SEC("netfilter")
int accept_all(void *ctx)
{
	hit(1);
	return 1; /* NF_ACCEPT */
}

char LICENSE[] SEC("license") = "GPL";
