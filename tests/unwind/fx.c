// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind-table fixture: functions whose CFI takes the forms the row
 * derivation knows (tests/unit/test_unwind.c compares its rows with
 * readelf's): stack pointer frames of many sizes, a realigned stack with a
 * dynamic allocation (a frame-pointer CFA on x86-64 as on aarch64), a
 * realigned stack with an over-aligned local beside a variable-length array
 * (on x86-64 gcc's CFA *(rbp - 8), or *(rbp - 16) below a saved register),
 * PLT calls, recursion.
 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile unsigned long fx_sink;

__attribute__((noinline)) static unsigned long fx_leaf(unsigned long x)
{
	return x * 2654435761u + 1;
}

__attribute__((noinline)) static unsigned long fx_spill(unsigned long a, unsigned long b)
{
	unsigned long v[24];
	size_t i;

	for (i = 0; i < 24; i++)
		v[i] = fx_leaf(a + i) ^ b;
	fx_sink = v[a % 24];
	return v[b % 24];
}

__attribute__((noinline)) static unsigned long fx_realign(size_t n)
{
	char aligned[64] __attribute__((aligned(64)));
	char *dyn = alloca(n + 1);

	memset(dyn, (int)n, n + 1);
	memset(aligned, dyn[n / 2], sizeof(aligned));
	fx_sink = aligned[n % 64];
	return fx_spill(dyn[0], n);
}

__attribute__((noinline)) static unsigned long fx_drap(unsigned long x, unsigned int n)
{
	volatile unsigned long aligned[8] __attribute__((aligned(64))) = {x};
	volatile char dyn[n];

	dyn[0] = (char)x;
	return fx_leaf(aligned[0] + dyn[0]);
}

/* a callee whose register use its callers do not know of */
__attribute__((noipa)) static unsigned long fx_opaque(unsigned long x)
{
	return x * 2654435761u + 3;
}

/* x and n live across the call: one callee-saved register is pushed before the CFA's */
__attribute__((noinline)) static unsigned long fx_drap_saved(unsigned long x, unsigned int n)
{
	volatile unsigned long aligned[8] __attribute__((aligned(64))) = {x};
	volatile char dyn[n];

	dyn[0] = (char)x;
	return fx_opaque(aligned[0] + dyn[0]) * x + n;
}

__attribute__((noinline)) static unsigned long fx_recurse(unsigned long depth)
{
	if (!depth)
		return fx_realign(fx_sink % 100) + fx_drap(fx_sink, fx_sink % 50 + 1) +
		       fx_drap_saved(fx_sink, fx_sink % 30 + 1);
	return fx_recurse(depth - 1) + fx_leaf(depth);
}

int main(int argc, char **argv)
{
	printf("%lu\n", fx_recurse(argc > 1 ? strtoul(argv[1], NULL, 0) : 3));
	return 0;
}
