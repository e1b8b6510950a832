// SPDX-License-Identifier: GPL-2.0
/*
 * nesting___err_too_deep.c: b is 64 anonymous structs down. libbpf stops
 * at 64 accessor levels (-E2BIG), cilium/ebpf after searching 32
 * anonymous composites: both refuse the relocation, so a minimized BTF
 * must keep enough of the chain for both to refuse it still.
 */
#include "patterns.h"

#define N1(x) struct { x; }
#define N2(x) N1(N1(x))
#define N4(x) N2(N2(x))
#define N8(x) N4(N4(x))
#define N16(x) N8(N8(x))
#define N32(x) N16(N16(x))
#define N64(x) N32(N32(x))

struct core_nesting___err_too_deep {
	struct {
		int a;
		int c;
	} a;
	N64(union { int b; } b);
};

TARGET(struct core_nesting___err_too_deep *t)
