// SPDX-License-Identifier: GPL-2.0
/* type_id___all.c: every type, after other types. */
#include "patterns.h"

struct core_type_id_pad {
	long x;
};
struct core_type_id_s {
	long b;
	int a;
};
union core_type_id_u {
	char c;
};
enum core_type_id_e {
	CORE_TYPE_ID_Y = 7,
};
typedef struct core_type_id_s core_type_id_typedef;
typedef struct core_type_id_s *core_type_id_ptr;
typedef void (*core_type_id_fn)(struct core_type_id_s *);
typedef int core_type_id_int;

/* BPF functions take at most five arguments: gather the types. */
struct holder {
	struct core_type_id_pad *p;
	core_type_id_typedef *t;
	union core_type_id_u *u;
	enum core_type_id_e e;
	core_type_id_ptr ptr;
	core_type_id_fn fn;
	core_type_id_int i;
};

TARGET(struct holder *h)
