/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A profile resolver that names a symbolizer snapshot of one process, taken
 * at its first record, as the process registry does for a session: for
 * tests that symbolize profiles without a registry.
 */
#ifndef LABELPROF_TEST_OWN_SNAPSHOT_H
#define LABELPROF_TEST_OWN_SNAPSHOT_H

#include "profile/profile.h"
#include "symbolize/symbols.h"

struct own_snapshot {
	struct symbolizer *sym;
	__u32 pid, id;
	unsigned int calls;
};

static inline __u32 own_snapshot__of(void *ctx, __u32 pid)
{
	struct own_snapshot *o = ctx;

	o->calls++;
	if (pid != o->pid)
		return 0;
	if (!o->id)
		o->id = symbolizer__snapshot(o->sym, pid, NULL);
	return o->id;
}

/* Records of pid in p get o's snapshot (o must outlive p's records). */
static inline void own_snapshot__use(struct own_snapshot *o, struct profile *p,
				     struct symbolizer *sym, __u32 pid)
{
	struct profile_resolver r = {.snapshot = own_snapshot__of, .ctx = o};

	*o = (struct own_snapshot){.sym = sym, .pid = pid};
	profile__set_resolver(p, &r);
}

#endif /* LABELPROF_TEST_OWN_SNAPSHOT_H */
