// SPDX-License-Identifier: GPL-2.0
/*
 * type_id___missing_targets.c: some types missing, others of another
 * shape (the pointer typedef to an int, the function taking an int).
 */
#include "patterns.h"

struct core_type_id_s {
	int a;
};
typedef int *core_type_id_ptr;
typedef void (*core_type_id_fn)(int);
typedef long core_type_id_int;

TARGET(struct core_type_id_s *s, core_type_id_ptr ptr, core_type_id_fn fn, core_type_id_int i)
