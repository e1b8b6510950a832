// SPDX-License-Identifier: GPL-2.0
/*
 * nesting___err_deep_first.c: b is a direct member, but an anonymous
 * chain 64 structs deep comes first. cilium/ebpf searches breadth first
 * and finds b; libbpf searches depth first, runs into the chain and gives
 * up (-E2BIG). A minimized BTF must keep the chain for libbpf's sake.
 */
#include "patterns.h"

#define N1(x) struct { x; }
#define N2(x) N1(N1(x))
#define N4(x) N2(N2(x))
#define N8(x) N4(N4(x))
#define N16(x) N8(N8(x))
#define N32(x) N16(N16(x))
#define N64(x) N32(N32(x))

struct core_nesting___err_deep_first {
	N64(int deep);
	struct {
		int a;
		int c;
	} a;
	union {
		int b;
	} b;
};

TARGET(struct core_nesting___err_deep_first *t)
