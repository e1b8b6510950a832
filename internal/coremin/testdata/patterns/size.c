// SPDX-License-Identifier: GPL-2.0
/*
 * size.c: bpf_core_field_size of members of every kind: int, struct,
 * union, array, array element, pointer, enum, float.
 */
#include "patterns.h"

enum core_size_enum { CORE_SIZE_X };

struct core_size {
	int int_field;
	struct {
		int x;
	} struct_field;
	union {
		int x;
	} union_field;
	int arr_field[4];
	int ptr_field_pad;
	void *ptr_field;
	enum core_size_enum enum_field;
	float float_field;
} __core;

SEC("raw_tp/sys_enter")
int size(void *ctx)
{
	struct core_size *p = (void *)ctx;

	OUT(0, bpf_core_field_size(p->int_field));
	OUT(1, bpf_core_field_size(p->struct_field));
	OUT(2, bpf_core_field_size(p->union_field));
	OUT(3, bpf_core_field_size(p->arr_field));
	OUT(4, bpf_core_field_size(p->arr_field[0]));
	OUT(5, bpf_core_field_size(p->ptr_field));
	OUT(6, bpf_core_field_size(p->enum_field));
	OUT(7, bpf_core_field_size(p->float_field));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
