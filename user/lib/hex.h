/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Hex digits, for the parsers of every layer (maps, JSON, protobuf text). */
#ifndef LABELPROF_HEX_H
#define LABELPROF_HEX_H

/* The value of the hex digit c (0-9, a-f, A-F), or -1. */
static inline int hex__digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* LABELPROF_HEX_H */
