// SPDX-License-Identifier: GPL-2.0
/* enum64val___err_missing.c: neither enum is there. */
#include "patterns.h"

enum core_enum64val_other {
	CORE_E64_ONE = 0x1ffffffffULL,
};

TARGET(enum core_enum64val_other e)
