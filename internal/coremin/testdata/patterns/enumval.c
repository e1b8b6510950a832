// SPDX-License-Identifier: GPL-2.0
/*
 * enumval.c: bpf_core_enum_value_exists and bpf_core_enum_value on a
 * named enum and on a flavour of it.
 */
#include "patterns.h"

enum core_enumval {
	CORE_EV_ONE = 1,
	CORE_EV_TWO = 2,
	CORE_EV_THREE = 3,
};

enum core_enumval___flavour {
	CORE_EV_ONE___flavour = 1,
	CORE_EV_FOUR___flavour = 4,
};

SEC("raw_tp/sys_enter")
int enumval(void *ctx)
{
	OUT(0, bpf_core_enum_value_exists(enum core_enumval, CORE_EV_ONE));
	OUT(1, bpf_core_enum_value_exists(enum core_enumval, CORE_EV_THREE));
	OUT(2, bpf_core_enum_value(enum core_enumval, CORE_EV_ONE));
	OUT(3, bpf_core_enum_value(enum core_enumval, CORE_EV_TWO));
	OUT(4, bpf_core_enum_value(enum core_enumval, CORE_EV_THREE));
	OUT(5, bpf_core_enum_value_exists(enum core_enumval___flavour, CORE_EV_FOUR___flavour));
	OUT(6, bpf_core_enum_value(enum core_enumval___flavour, CORE_EV_ONE___flavour));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
