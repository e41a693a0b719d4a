// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The OpenTelemetry process context (OTEP 4719, docs/design.md section 1) as
 * a registry module: its resource attributes become labels of every sample of
 * the process, and its key map names the thread context's attributes
 * (profile/otel_labels.h). Read when the process is inspected, from the
 * same memory map as every other module.
 */
#include <errno.h>
#include <stdlib.h>

#include "profile/otel_labels.h"
#include "registry/module.h"

struct otel_process_proc {
	bool read; /* for the current image */
	struct otel_labels_proc labels;
};

static int otel_process_open(const struct registry_env *env, void **mod)
{
	*mod = otel_labels__new();
	return *mod ? 0 : -ENOMEM;
}

static void otel_process_close(void *mod)
{
	otel_labels__free(mod);
}

static int otel_process_inspect(void *mod, void *state, struct proc_view *v,
				struct lp_recipe *recipe)
{
	struct otel_process_proc *p = state;

	/* later publications are found by the checks of otel_labels__extra */
	if (!p->read) {
		otel_labels__proc_init(&p->labels, v->pid, v->maps);
		p->read = true;
	}
	return 0;
}

static void otel_process_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct otel_process_proc *p = state;

	/* a new image publishes its own context, if any */
	otel_labels__proc_clear(&p->labels);
}

static size_t otel_process_extra(void *mod, void *state, const struct profile_label **labels)
{
	struct otel_process_proc *p = state;

	return otel_labels__extra(p && p->read ? &p->labels : NULL, labels);
}

static bool otel_process_label(void *mod, void *state, struct profile_label *l)
{
	struct otel_process_proc *p = state;

	return otel_labels__label(mod, p && p->read ? &p->labels : NULL, l);
}

const struct proc_module otel_process_module = {
	.name = "OpenTelemetry process context",
	.state_size = sizeof(struct otel_process_proc),
	.open = otel_process_open,
	.close = otel_process_close,
	.inspect = otel_process_inspect,
	.end = otel_process_end,
	.extra_labels = otel_process_extra,
	.label = otel_process_label,
};
