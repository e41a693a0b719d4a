/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One process looked at now by every module a session has (modules.c),
 * without sampling: what inspect and labels show is what record finds.
 */
#ifndef LABELPROF_SAMPLING_PROBE_H
#define LABELPROF_SAMPLING_PROBE_H

#include <sys/types.h>

#include "labelprof.h"

struct registry;
struct tls_diag;

/*
 * A registry that inspected pid once (registry__inspect_one: *err, recipe,
 * diag), for registry__describe; NULL when out of memory (*err -ENOMEM).
 * registry__free frees it.
 */
struct registry *probe__process(pid_t pid, struct lp_recipe *recipe, struct tls_diag *diag,
				int *err);

#endif /* LABELPROF_SAMPLING_PROBE_H */
