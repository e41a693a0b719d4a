// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The OpenTelemetry thread context (OTEP 4947, docs/design.md section 1) as a
 * registry module: where the process keeps its threads' context pointer, or
 * in Node.js its threads' discovery struct and the V8 layout that leads from
 * it to the record (section 13).
 */
#include <errno.h>
#include <stdio.h>

#include "proc/otel_ctx.h"
#include "proc/tls.h"
#include "registry/module.h"
#include "runtime/node/node.h"

struct otel_thread_proc {
	bool found; /* at the last inspection */
};

static int otel_thread_inspect(void *mod, void *state, struct proc_view *v,
			       struct lp_recipe *recipe)
{
	struct otel_thread_proc *p = state;
	struct tls_process *tp;
	struct tls_diag *diag;
	bool found;
	int ret;

	tp = registry__tls(v, &diag, &ret);
	if (tp)
		ret = tls_process__otel_thread(tp, &recipe->otel, diag);
	if (!ret && recipe->otel.access != LP_TLS_NONE && diag->otel_nodejs &&
	    node__thread_ctx(v->pid, v->maps, &recipe->node, diag->otel_msg,
			     sizeof(diag->otel_msg)))
		recipe->otel.access = LP_TLS_NONE;
	found = !ret && recipe->otel.access != LP_TLS_NONE;
	if (found && !p->found && v->env->verbose)
		fprintf(stderr, "labelprof: pid %d: OpenTelemetry thread context: %s\n", v->pid,
			diag->otel_msg);
	p->found = found;
	if (ret)
		return ret;
	return found ? PROC_LABELS | PROC_SETTLED : 0;
}

const struct proc_module otel_thread_module = {
	.name = "OpenTelemetry thread context",
	.state_size = sizeof(struct otel_thread_proc),
	.inspect = otel_thread_inspect,
};
