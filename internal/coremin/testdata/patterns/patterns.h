/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared start of the pattern programs: the project's prelude (integer
 * types, libbpf's CO-RE headers), __core for local types, and OUT, which
 * stores a value so that -O2 keeps the relocation that computed it.
 */
#ifndef PATTERNS_H
#define PATTERNS_H

#include "../../../../testdata/objects/prelude.h"

#define __core __attribute__((preserve_access_index))

volatile __u64 out[64];
#define OUT(i, v) (out[(i)] = (__u64)(v))

/* A pattern target's types reach its .BTF as parameters of a function. */
#define TARGET(...) \
	void target(__VA_ARGS__) {}

#endif
