// SPDX-License-Identifier: GPL-2.0
/* enum64val___val3_missing.c: no THREE, no signed enum. */
#include "patterns.h"

enum core_enum64val___val3_missing {
	CORE_E64_ONE = 0x1111111111ULL,
	CORE_E64_TWO = 0x2222222222ULL,
};

TARGET(enum core_enum64val___val3_missing e)
