/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread's label set: the recipe userspace made for its process (how to
 * find each label source), then each source the recipe names, merged.
 */
#ifndef LABELPROF_LABELS_BPF_H
#define LABELPROF_LABELS_BPF_H

#include "maps.bpf.h"
#include "arch.h"
#include "labels_custom.bpf.h"
#include "labels_otel.bpf.h"
#include "labels_node.bpf.h"
#include "labels_go.bpf.h"

/* The recipe that applies to tgid now, or NULL. */
static __always_inline struct lp_recipe *lookup_recipe(__u32 tgid)
{
	struct lp_recipe *r = bpf_map_lookup_elem(&recipes, &tgid);
	__u64 *seq;

	if (!r)
		return NULL;
	/* exec'd since userspace looked: the recipe describes the old image */
	seq = bpf_map_lookup_elem(&execs, &tgid);
	return r->exec_seq == (seq ? *seq : 0) ? r : NULL;
}

/* lookup_recipe, through this CPU's cache (the sampler's: remote is not cached). */
static __always_inline struct lp_recipe *find_recipe(struct lp_scratch *sc, __u32 tgid, bool remote)
{
	struct lp_rcache *rc = &sc->rc;
	struct lp_recipe *r;
	__u64 gen;

	if (remote)
		return lookup_recipe(tgid);
	/* the lookups below must see every change made before gen was bumped */
	gen = arch_load_acquire(&recipes_gen);
	if (rc->gen == gen + 1 && rc->tgid == tgid)
		return rc->found ? &rc->recipe : NULL;
	r = lookup_recipe(tgid);
	rc->tgid = tgid;
	rc->found = r != NULL;
	if (r)
		rc->recipe = *r;
	rc->gen = gen + 1;
	return r ? &rc->recipe : NULL;
}

/*
 * The recipe of task's process now (remote: not the current thread, see
 * read_user), or NULL, the status bits saying why. Samples need it with
 * labels off too: code mapped since userspace inspected the process gets
 * unwind tables as well as a new look for a label library.
 */
static __always_inline struct lp_recipe *sample_recipe(struct task_struct *task, bool remote,
						       __u32 task_flags, struct lp_scratch *sc,
						       struct lp_sample *s, struct lp_counters *c)
{
	struct lp_recipe *r;

	/*
	 * Once a thread exits, glibc may hand its stack and TLS block to a new
	 * thread while the old task still runs kernel exit code.
	 */
	if (task_flags & PF_EXITING) {
		s->status |= LP_ST_EXITING;
		return NULL;
	}
	/*
	 * io_uring and vhost workers start with their creator's thread pointer:
	 * their TLS is the creator's, whose labels they would carry as they are
	 * now. The process's own labels (userspace's) still apply.
	 */
	if (task_flags & (PF_IO_WORKER | PF_USER_WORKER)) {
		s->status |= LP_ST_WORKER;
		return NULL;
	}
	r = find_recipe(sc, s->tgid, remote);
	if (!r) {
		s->status |= LP_ST_NO_RECIPE;
		c->unknown_pids++;
		return NULL;
	}
	/* code mapped or unmapped since userspace inspected the process */
	if (!remote && r->exec_vm && task->mm->exec_vm != r->exec_vm)
		s->status |= LP_ST_MAPS_CHANGED;
	return r;
}

/* Reads the label set of task by its process's recipe r into the record s at *off. */
static __always_inline void read_label_set(struct task_struct *task, bool remote,
					   const struct lp_recipe *r, struct lp_scratch *sc,
					   struct lp_sample *s, __u32 *off, struct lp_counters *c)
{
	if (r->form == LP_FORM_NONE && r->otel.access == LP_TLS_NONE &&
	    r->go.format == LP_GO_NONE) {
		s->status |= LP_ST_NO_RECIPE;
		return;
	}
	/*
	 * One merged set, in the order of precedence (docs/design.md section 1):
	 * the reader keeps a key's first occurrence.
	 */
	if (r->form != LP_FORM_NONE)
		read_custom_labels(task, remote, r, sc, s, off, c);
	if (r->otel.access != LP_TLS_NONE && r->node.format == LP_NODE_V1)
		read_node_thread(task, remote, r, sc, s, off);
	else if (r->otel.access != LP_TLS_NONE)
		read_otel_thread(task, remote, r, sc, s, off);
	if (r->go.format != LP_GO_NONE)
		read_go_labels(task, remote, r, sc, s, off);
}

/*
 * The sampler's read_label_set: the interrupted thread's label set by its
 * process's recipe r into the record at off; the record's new end. A
 * function of its own, verified once.
 */
__noinline int sample_labels(struct lp_scratch *sc, const struct lp_recipe *r,
			     struct lp_counters *c, __u32 off)
{
	if (!sc || !r || !c)
		return off;
	read_label_set(bpf_get_current_task_btf(), false, r, sc, (struct lp_sample *)sc->rec, &off,
		       c);
	return off;
}

#endif /* LABELPROF_LABELS_BPF_H */
