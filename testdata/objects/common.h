/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared prelude of the test objects: the fixed-width integer types that
 * libbpf's headers expect (normally from <linux/types.h>, which needs the
 * host's <asm/types.h>; these objects must not depend on the build host),
 * then libbpf's headers themselves.
 *
 * Every kernel type an object reads is declared in that object, with only
 * the members it uses and __attribute__((preserve_access_index)), so that
 * clang records a CO-RE relocation for each access.
 */
#ifndef BTFEMBED_TESTDATA_COMMON_H
#define BTFEMBED_TESTDATA_COMMON_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#define __core __attribute__((preserve_access_index))

/*
 * Every value a program computes is stored into sink so that -O2 keeps the
 * instructions, and with them the relocations, that produced it.
 */
volatile __u64 sink[32];
#define KEEP(i, v) (sink[(i)] = (__u64)(v))

#endif
