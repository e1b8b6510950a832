/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared start of the test objects: prelude.h (integer types, libbpf's
 * CO-RE headers), bpf_tracing.h, the __core attribute and the sink that
 * keeps computed values alive.
 *
 * Every kernel type an object reads is declared in that object, with only
 * the members it uses and __attribute__((preserve_access_index)), so that
 * clang records a CO-RE relocation for each access.
 */
#ifndef BTFEMBED_TESTDATA_COMMON_H
#define BTFEMBED_TESTDATA_COMMON_H

#include "prelude.h"
#include <bpf/bpf_tracing.h>

#define __core __attribute__((preserve_access_index))

/*
 * Every value a program computes is stored into sink so that -O2 keeps the
 * instructions, and with them the relocations, that produced it.
 */
volatile __u64 sink[32];
#define KEEP(i, v) (sink[(i)] = (__u64)(v))

#endif
