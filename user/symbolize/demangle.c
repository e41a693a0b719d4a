// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include <libiberty/demangle.h>

#include "symbolize/demangle.h"

char *sym_demangle(const char *name)
{
	/* Itanium and Rust legacy names start "_Z", Rust v0 names "_R": skip the rest cheaply. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') ||
	    strnlen(name, SYM_DEMANGLE_MAX + 1) > SYM_DEMANGLE_MAX)
		return NULL;
	/* perf's default too: parameters only with -v (DMGL_PARAMS) */
	return cplus_demangle(name, DMGL_AUTO);
}
