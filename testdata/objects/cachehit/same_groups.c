// SPDX-License-Identifier: GPL-2.0
/*
 * same_groups.c: ../fields.c storing into the upper half of sink. Its
 * instructions differ from fields-el.o's; its CO-RE relocations, local
 * types and their grouping by program do not.
 */
#include "../common.h"

#undef KEEP
#define KEEP(i, v) (sink[(i) + 16] = (__u64)(v))

#include "../fields.c"
