// SPDX-License-Identifier: GPL-2.0
/* flavors___err_wrong_name.c: b is called something else. */
#include "patterns.h"

struct core_flavors___err_wrong_name {
	int a;
	int b_renamed;
	int c;
};

TARGET(struct core_flavors___err_wrong_name *t)
