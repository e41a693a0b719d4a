// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A shared library that publishes labels; built in several TLS dialects. */
#include "labels.h"

void *fx_lib_labels_addr(void);

__attribute__((visibility("default"))) void *fx_lib_labels_addr(void)
{
	return fx_labels_addr();
}
