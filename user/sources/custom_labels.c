// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Custom labels v0 and v1 (docs/design.md sections 1 and 3) as a registry
 * module: where the process keeps its threads' label sets.
 */
#include <errno.h>
#include <stdio.h>

#include "proc/tls.h"
#include "registry/module.h"

struct custom_labels_proc {
	__u32 form; /* enum lp_label_form found last */
};

static int custom_labels_inspect(void *mod, void *state, struct proc_view *v,
				 struct lp_recipe *recipe)
{
	struct custom_labels_proc *p = state;
	struct tls_process *tp;
	struct tls_diag *diag;
	int ret;

	tp = registry__tls(v, &diag, &ret);
	if (tp)
		ret = tls_process__custom_labels(tp, recipe, diag);
	if (ret && ret != -EAGAIN && ret != -ESRCH && v->env->verbose)
		fprintf(stderr, "labelprof: pid %d: %s\n", v->pid, diag->msg);
	if (!ret && v->env->verbose && recipe->form != p->form && recipe->form != LP_FORM_NONE)
		fprintf(stderr, "labelprof: pid %d: %s\n", v->pid, diag->msg);
	p->form = ret ? LP_FORM_NONE : recipe->form;
	if (ret)
		return ret;
	return recipe->form != LP_FORM_NONE ? PROC_LABELS | PROC_SETTLED : 0;
}

const struct proc_module custom_labels_module = {
	.name = "custom labels",
	.state_size = sizeof(struct custom_labels_proc),
	.inspect = custom_labels_inspect,
};
