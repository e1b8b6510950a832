// SPDX-License-Identifier: GPL-2.0
/* enumval___val3_missing.c: no THREE. */
#include "patterns.h"

enum core_enumval___val3_missing {
	CORE_EV_ONE = 111,
	CORE_EV_TWO = 222,
};

TARGET(enum core_enumval___val3_missing e)
