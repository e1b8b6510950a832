// SPDX-License-Identifier: GPL-2.0
/* enumval___err_missing.c: the enum is not there; another one is. */
#include "patterns.h"

enum core_enumval_other {
	CORE_EV_ONE = 1,
};

TARGET(enum core_enumval_other e)
