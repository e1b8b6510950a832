/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The UAPI constants the feature objects use, with the values of
 * <linux/bpf.h> (ABI: they never change). The objects do not include the
 * host's kernel headers, which may predate the constants, as ../prelude.h
 * explains.
 */
#ifndef BTFEMBED_TESTDATA_FEATURES_H
#define BTFEMBED_TESTDATA_FEATURES_H

#include "../prelude.h"

enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_BLOOM_FILTER = 30,
	BPF_MAP_TYPE_CGRP_STORAGE = 32,
};

enum {
	BPF_ANY = 0,
	BPF_F_NO_PREALLOC = 1,
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

/*
 * hits counts what a program saw, in a map rather than in global data,
 * which needs Linux 5.2 (globals.c is the object about that).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void hit(__u64 n)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &zero);

	if (v)
		__sync_fetch_and_add(v, n);
}

#endif
