// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "unwind_lib.h"
#include "workload.h"

WL_BURN uint64_t unwind_lib_step(uint64_t x)
{
	return wl_spin(2, x);
}

WL_BURN static uint64_t lib_burn(uint64_t x, uint64_t iters)
{
	return wl_spin(iters, x);
}

WL_BURN uint64_t unwind_lib_work(uint64_t x, uint64_t iters)
{
	/* Used after the call: lib_burn is not a tail call. */
	volatile uint64_t keep[3] = {x, iters, x ^ iters};

	return lib_burn(x + keep[2], iters) ^ keep[0];
}
