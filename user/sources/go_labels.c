// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Go pprof labels (docs/design.md section 8) as a registry module: Go
 * programs need nothing added, their goroutine labels are read from the
 * runtime's own structures, besides any custom labels.
 */
#include <errno.h>
#include <stdio.h>

#include "proc/golang.h"
#include "proc/tls.h"
#include "registry/module.h"

struct go_labels_proc {
	bool reported; /* what was found was said (-v) for this image */
};

static int go_labels_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct go_labels_proc *p = state;
	const struct tls_file_info *exe;
	struct tls_process *tp;
	struct tls_diag *diag;
	int ret;

	tp = registry__tls(v, &diag, &ret);
	exe = tp ? tls_process__main_program(tp) : NULL;
	if (!exe)
		return ret == -ESRCH ? ret : 0;
	ret = golang__recipe(exe, &recipe->go, diag->go, sizeof(diag->go));
	/* the executable does not change until the next exec: said once */
	if (v->env->verbose && diag->go[0] && !p->reported)
		fprintf(stderr, "labelprof: pid %d: %s\n", v->pid, diag->go);
	p->reported |= diag->go[0] != '\0';
	return ret ? 0 : PROC_LABELS;
}

const struct proc_module go_labels_module = {
	.name = "Go labels",
	.state_size = sizeof(struct go_labels_proc),
	.inspect = go_labels_inspect,
};
