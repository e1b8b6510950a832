// SPDX-License-Identifier: GPL-2.0
/*
 * connect_unix.c: a cgroup/sock_addr program with the expected attach
 * type BPF_CGROUP_UNIX_CONNECT (Linux 6.7). The program type is old
 * (4.17), but its load checks the attach type (bpf_prog_load_check_attach),
 * so a kernel whose enum bpf_attach_type lacks it refuses the program:
 * Debian 11's 5.10 and Debian 12's 6.1 kernels; 6.12 loads it. It allows
 * every connect.
 */
#include "features.h"

SEC("cgroup/connect_unix")
int connect_unix(void *ctx)
{
	hit(1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
