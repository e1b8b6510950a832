/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every BPF object of the project's tests starts with: the
 * fixed-width integer types that libbpf's headers expect (normally from
 * <linux/types.h>, which needs the host's <asm/types.h>; the objects must
 * not depend on the build host), then libbpf's CO-RE headers.
 */
#ifndef BTFEMBED_TESTDATA_PRELUDE_H
#define BTFEMBED_TESTDATA_PRELUDE_H

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

#endif
