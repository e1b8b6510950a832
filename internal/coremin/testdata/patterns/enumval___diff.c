// SPDX-License-Identifier: GPL-2.0
/* enumval___diff.c: other values, other order, and FOUR. */
#include "patterns.h"

enum core_enumval___diff {
	CORE_EV_THREE = 30,
	CORE_EV_FOUR = 40,
	CORE_EV_TWO = 20,
	CORE_EV_ONE = 10,
};

TARGET(enum core_enumval___diff e)
