// SPDX-License-Identifier: GPL-2.0
/* enum64val___diff.c: other values; the signed enum fits in 32 bits here. */
#include "patterns.h"

enum core_enum64val___diff {
	CORE_E64_THREE = 0xaffffffffULL,
	CORE_E64_TWO = 0xbffffffffULL,
	CORE_E64_ONE = 0xcffffffffULL,
};

enum core_enum64val_signed___diff {
	CORE_E64_NEG = -5,
	CORE_E64_POS = 5,
};

TARGET(enum core_enum64val___diff e, enum core_enum64val_signed___diff s)
