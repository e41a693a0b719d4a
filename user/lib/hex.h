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

/* n bytes as 2n lowercase hex digits at out (no NUL added). */
static inline void hex__encode(char *out, const void *p, unsigned long n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = p;
	unsigned long i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
}

#endif /* LABELPROF_HEX_H */
