// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The process registry (registry.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/clock.h"
#include "lib/compiler.h"
#include "lib/hashmap.h"
#include "proc/maps.h"
#include "proc/stat.h"
#include "proc/tls.h"
#include "registry/module.h"
#include "registry/registry.h"

/*
 * After an exec, shared libraries are mapped and relocated by the dynamic
 * loader in userspace: the TLS descriptors of a label library are only valid
 * later. These are the delays of the follow-up inspections (and of retries
 * while a descriptor is still lazy), in milliseconds.
 */
static const unsigned int retry_delays_ms[] = {5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
#define MAX_ATTEMPTS	    ARRAY_SIZE(retry_delays_ms)
#define FOLLOW_UP_WINDOW_MS 8885 /* their sum */
#define GONE_GRACE_MS	    2000 /* a gone process's queued samples are resolved by then */

struct proc_entry {
	pid_t pid;
	bool labelled; /* a module found labels at the last inspection */
	bool named;    /* named to the scan (-p) */
	__u8 attempts; /* follow-ups/retries done since the last exec or hint */
	bool inspected; /* its modules have looked at its current image */
	bool gone;     /* an inspection found it gone: ended when due */
	__u64 due_ns;  /* next inspection (gone: its end), 0: none */
	void *state[REGISTRY_MAX_MODULES];
};

struct registry {
	struct registry_target target;
	struct registry_env env; /* what every module may use */
	const struct proc_module *mods[REGISTRY_MAX_MODULES];
	void *mod[REGISTRY_MAX_MODULES]; /* each one's module-wide state */
	size_t nr_mods;
	struct tls_cache *tls;
	/* entries[0, stats.tracked), in no order: removing one moves the last into its place */
	struct proc_entry *entries;
	size_t cap;
	struct hashmap index; /* pid -> entries[id] */
	size_t max;
	size_t pending; /* entries with a due_ns */
	__u64 sampling_ns; /* when sampling started (CLOCK_MONOTONIC) */
	struct registry_stats stats;
	bool verbose;
	struct registry_probe *probe; /* registry__inspect_one's, while it runs */
};

/* What registry__inspect_one takes from its inspection. */
struct registry_probe {
	struct lp_recipe *recipe;
	struct tls_diag *diag;
	int err;
};

/* A view and the label sources' shared reading of it (registry__tls). */
struct view_ctx {
	struct proc_view v;
	struct tls_diag diag;
};

static bool pid_eq(const void *ctx, __u32 id, const void *key)
{
	return ((const struct registry *)ctx)->entries[id].pid == *(const pid_t *)key;
}

static struct hashmap_slot *find(const struct registry *r, pid_t pid)
{
	return hashmap__find(&r->index, hashmap__hash_u64((__u32)pid), pid_eq, r, &pid);
}

static struct proc_entry *lookup(struct registry *r, pid_t pid)
{
	__u32 id;

	return hashmap_slot__id(find(r, pid), &id) ? &r->entries[id] : NULL;
}

static struct proc_entry *insert(struct registry *r, pid_t pid, bool *created)
{
	struct proc_entry *e = lookup(r, pid);
	size_t id = r->stats.tracked, i;

	*created = false;
	if (e)
		return e;
	/* the table holds at most max processes; beyond that they go untracked */
	if (id >= r->max || hashmap__reserve(&r->index, 0) ||
	    ARRAY_RESERVE(r->entries, r->cap, id + 1))
		return NULL;
	e = &r->entries[id];
	*e = (struct proc_entry){.pid = pid};
	for (i = 0; i < r->nr_mods; i++) {
		if (!r->mods[i]->state_size)
			continue;
		e->state[i] = calloc(1, r->mods[i]->state_size);
		if (!e->state[i]) {
			while (i-- > 0)
				free(e->state[i]);
			return NULL;
		}
	}
	hashmap__set(&r->index, find(r, pid), hashmap__hash_u64((__u32)pid), id);
	r->stats.tracked++;
	*created = true;
	return e;
}

static void schedule(struct registry *r, struct proc_entry *e, unsigned int delay_ms)
{
	if (!e->due_ns)
		r->pending++;
	e->due_ns = now_ns() + delay_ms * 1000000ull;
}

static void unschedule(struct registry *r, struct proc_entry *e)
{
	if (e->due_ns)
		r->pending--;
	e->due_ns = 0;
}

/* Tells every module that e's image ended; an exit drops the entry. */
static void end_image(struct registry *r, struct proc_entry *e, enum proc_end how)
{
	size_t id = e - r->entries, last, i;

	for (i = 0; i < r->nr_mods; i++) {
		if (r->mods[i]->end)
			r->mods[i]->end(r->mod[i], e->state[i], e->pid, how);
		if (e->state[i])
			memset(e->state[i], 0, r->mods[i]->state_size);
	}
	if (e->labelled)
		r->stats.labelled--;
	e->labelled = false;
	if (how != PROC_END_EXIT) {
		/* a new image (the pid was found gone before its exec was read: it is not) */
		if (e->gone)
			unschedule(r, e);
		e->gone = false;
		e->inspected = false;
		return;
	}
	if (e->due_ns)
		r->pending--;
	for (i = 0; i < r->nr_mods; i++)
		free(e->state[i]);
	hashmap__del(&r->index, find(r, e->pid));
	last = --r->stats.tracked;
	if (id != last) {
		*e = r->entries[last];
		hashmap__renumber(&r->index, hashmap__hash_u64((__u32)e->pid), last, id);
	}
}

static void set_labelled(struct registry *r, struct proc_entry *e, bool labelled)
{
	if (e->labelled)
		r->stats.labelled--;
	if (labelled)
		r->stats.labelled++;
	if (labelled && !e->labelled)
		r->stats.labelled_seen++;
	e->labelled = labelled;
}

/*
 * The pages of executable mappings of pid (mm->exec_vm, which BPF compares
 * with the recipe's), from VmExe + VmLib of /proc/PID/status; 0 if unknown.
 */
static __u64 exec_vm_pages(pid_t pid)
{
	unsigned long long kb, sum = 0;
	char path[64], line[128];
	int seen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (seen < 2 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmExe: %llu kB", &kb) == 1 ||
		    sscanf(line, "VmLib: %llu kB", &kb) == 1) {
			sum += kb;
			seen++;
		}
	}
	fclose(f);
	return seen == 2 ? sum * 1024 / sysconf(_SC_PAGESIZE) : 0;
}

struct tls_process *registry__tls(struct proc_view *v, struct tls_diag **diag, int *err)
{
	struct view_ctx *vc = container_of(v, struct view_ctx, v);

	*diag = &vc->diag;
	if (!v->tls_tried) {
		v->tls_tried = true;
		v->tls_err =
			tls_process__open(v->registry->tls, v->pid, v->maps, &v->tls, &vc->diag);
	}
	*err = v->tls_err;
	return v->tls;
}

/*
 * Inspects one process: its maps read once, every module's part of the
 * recipe, the recipe installed. A process without labels gets a recipe too,
 * so BPF knows it was looked at and stops asking. Follow-ups stay scheduled
 * while a process might still load its label library (after exec, after a
 * new executable mapping).
 */
/*
 * A process an inspection found gone: its last samples may still be queued
 * behind the inspection, and its modules' state names them. It ends with
 * its exit event (which follows them), or GONE_GRACE_MS later.
 */
static void set_gone(struct registry *r, struct proc_entry *e)
{
	if (!e->inspected) { /* nothing known of it to keep */
		end_image(r, e, PROC_END_EXIT);
		return;
	}
	if (e->gone)
		return;
	e->gone = true;
	unschedule(r, e);
	schedule(r, e, GONE_GRACE_MS);
}

static void inspect(struct registry *r, struct proc_entry *e, enum proc_cause cause)
{
	struct view_ctx vc = {.v = {.pid = e->pid,
				    .cause = cause,
				    .named = e->named,
				    .env = &r->env,
				    .registry = r}};
	struct proc_view *v = &vc.v;
	struct lp_recipe recipe = {};
	bool labelled = false, settled = false, pending = false, failed = false, again = false;
	int ret = 0, err;
	size_t i;

	/*
	 * Read before the maps: an exec in between makes this recipe stale in
	 * BPF, and code mapped in between makes samples ask again.
	 */
	v->exec_seq = r->target.exec_seq(r->target.ctx, e->pid);
	v->exec_vm = exec_vm_pages(e->pid);
	v->sampled = r->target.samples(r->target.ctx, e->pid);
	r->stats.resolves++;
	r->stats.maps_reads++;
	if (e->gone)
		return;
	err = maps__read(e->pid, 0, &v->maps);
	if (r->probe)
		r->probe->err = err;
	if (err == -ESRCH) {
		set_gone(r, e);
		return;
	}
	if (err) {
		r->stats.errors++;
		if (r->verbose)
			fprintf(stderr, "labelprof: pid %d: cannot read its memory map: %s\n",
				e->pid, strerror(-err));
		unschedule(r, e);
		return;
	}
	for (i = 0; i < r->nr_mods; i++) {
		ret = r->mods[i]->inspect(r->mod[i], e->state[i], v, &recipe);
		if (ret < 0 && r->probe && !r->probe->err)
			r->probe->err = ret;
		if (ret == -ESRCH)
			break;
		if (ret == -EAGAIN) {
			again = pending = true;
		} else if (ret < 0) {
			failed = pending = true;
		} else {
			labelled |= ret & PROC_LABELS;
			settled |= ret & PROC_SETTLED;
			pending |= ret & PROC_PENDING;
		}
	}
	tls_process__close(v->tls);
	maps__free(v->maps);
	if (r->probe) {
		*r->probe->recipe = recipe;
		*r->probe->diag = vc.diag;
		/* one source found is a recipe: the others' failures do not count */
		if (labelled && ret != -ESRCH)
			r->probe->err = 0;
	}
	if (ret == -ESRCH) {
		set_gone(r, e);
		return;
	}
	e->inspected = true;
	/* one source found is a recipe: the others' failures do not make it an error */
	if (failed && !labelled)
		r->stats.errors++;
	else if (again)
		r->stats.retries++;
	recipe.exec_seq = v->exec_seq;
	recipe.exec_vm = v->exec_vm;
	/* nothing left for an unknown-pid hint to do: the samples stop sending them */
	if (!pending && !labelled && v->exec_vm)
		recipe.flags |= LP_RECIPE_QUIET;
	if (r->target.set_recipe(r->target.ctx, e->pid, &recipe)) {
		r->stats.errors++;
		unschedule(r, e);
		return;
	}
	set_labelled(r, e, labelled);
	if (settled || e->attempts >= MAX_ATTEMPTS) {
		unschedule(r, e);
		return;
	}
	schedule(r, e, retry_delays_ms[e->attempts++]);
}

/* Whether pid started less than ms ago, or its start time cannot be read. */
static bool started_within(pid_t pid, unsigned int ms)
{
	unsigned long long start_ticks;
	const char *fields;
	char buf[1024];

	/* starttime is the 22nd field */
	fields = proc_stat_fields(pid, buf, sizeof(buf));
	if (!fields || sscanf(fields,
			      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			      "%*d %*d %*d %*d %llu",
			      &start_ticks) != 1)
		return true;
	return clock_ns(CLOCK_BOOTTIME) / 1000000 < start_ticks * 1000 / sysconf(_SC_CLK_TCK) + ms;
}

static void inspect_pid(struct registry *r, pid_t pid, enum proc_cause cause)
{
	bool created;
	struct proc_entry *e = insert(r, pid, &created);

	if (!e)
		return;
	/*
	 * A process found running at the start gets the follow-ups only if it
	 * has just started: an older one loaded its libraries long ago, and
	 * code it maps later is noticed by its samples (LP_ST_MAPS_CHANGED).
	 */
	if (cause == PROC_SCAN && !started_within(pid, FOLLOW_UP_WINDOW_MS))
		e->attempts = MAX_ATTEMPTS;
	else if (cause == PROC_EXEC || cause == PROC_MAPPED)
		e->attempts = 0;
	inspect(r, e, cause);
}

struct registry *registry__new(const struct registry_opts *opts, int *err)
{
	struct registry *r = calloc(1, sizeof(*r));
	const struct proc_module *const *m;
	int ret;

	*err = -ENOMEM;
	if (!r)
		return NULL;
	r->env = (struct registry_env){
		.symbolizer = opts->symbolizer,
		.unwind = opts->unwind,
		.bpf_counters = opts->target.bpf_counters,
		.bpf_ctx = opts->target.ctx,
		.describe_only = opts->describe_only,
		.verbose = opts->verbose,
	};
	r->target = opts->target;
	r->max = opts->max_processes;
	r->verbose = opts->verbose;
	r->tls = tls_cache__new(TLS_CACHE_DEFAULT_ENTRIES);
	if (!r->tls)
		goto out_free;
	for (m = opts->modules; *m; m++) {
		if (r->nr_mods == REGISTRY_MAX_MODULES) {
			*err = -E2BIG;
			goto out_free;
		}
		ret = (*m)->open ? (*m)->open(&r->env, &r->mod[r->nr_mods]) : 0;
		if (ret == -ENODEV)
			continue;
		if (ret) {
			*err = ret;
			goto out_free;
		}
		r->mods[r->nr_mods++] = *m;
	}
	return r;

out_free:
	registry__free(r);
	return NULL;
}

void registry__free(struct registry *r)
{
	size_t i;

	if (!r)
		return;
	while (r->stats.tracked)
		end_image(r, &r->entries[r->stats.tracked - 1], PROC_END_EXIT);
	for (i = 0; i < r->nr_mods; i++)
		if (r->mods[i]->close)
			r->mods[i]->close(r->mod[i]);
	tls_cache__free(r->tls);
	hashmap__free(&r->index);
	free(r->entries);
	free(r);
}

int registry__scan(struct registry *r, const pid_t *pids, size_t count)
{
	struct dirent *de;
	size_t i;
	DIR *dir;

	if (count) {
		for (i = 0; i < count; i++) {
			bool created;
			struct proc_entry *e = insert(r, pids[i], &created);

			if (e)
				e->named = true;
			inspect_pid(r, pids[i], PROC_SCAN);
		}
		return 0;
	}
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char *end;
		long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > 0x7fffffff)
			continue;
		inspect_pid(r, pid, PROC_SCAN);
	}
	closedir(dir);
	return 0;
}

void registry__sampling_started(struct registry *r)
{
	r->sampling_ns = now_ns();
}

/* exec_ns: the exec's CLOCK_MONOTONIC time, taken by BPF */
static void count_exec_delay(struct registry *r, __u64 exec_ns)
{
	__u64 now = now_ns(), from = exec_ns > r->sampling_ns ? exec_ns : r->sampling_ns;
	__u64 delay = now > from ? now - from : 0;

	if (!r->sampling_ns) /* no sample waited for it */
		return;

	r->stats.execs++;
	r->stats.exec_delay_sum_ns += delay;
	if (delay > r->stats.exec_delay_max_ns)
		r->stats.exec_delay_max_ns = delay;
}

void registry__handle_record(struct registry *r, const void *rec, size_t size)
{
	const struct lp_event_hdr *h = rec;
	const struct lp_proc_event *ev = rec;
	struct proc_entry *e;
	size_t i;

	switch (h->type) {
	case LP_EVENT_EXEC:
	case LP_EVENT_EXIT:
	case LP_EVENT_UNKNOWN_PID:
	case LP_EVENT_EXEC_MAP:
		if (size < sizeof(*ev))
			return;
		break;
	default:
		for (i = 0; i < r->nr_mods; i++)
			if (r->mods[i]->record_type == h->type && r->mods[i]->handle_record)
				r->mods[i]->handle_record(r->mod[i], rec, size);
		return;
	}
	switch (h->type) {
	case LP_EVENT_EXEC:
		/* BPF already dropped the old recipe; the new image needs a new one */
		e = lookup(r, ev->tgid);
		if (e)
			end_image(r, e, PROC_END_EXEC);
		inspect_pid(r, ev->tgid, PROC_EXEC);
		count_exec_delay(r, ev->ktime_ns);
		break;
	case LP_EVENT_EXIT:
		e = lookup(r, ev->tgid);
		if (e)
			end_image(r, e, PROC_END_EXIT);
		break;
	case LP_EVENT_UNKNOWN_PID:
		inspect_pid(r, ev->tgid, PROC_UNKNOWN);
		break;
	case LP_EVENT_EXEC_MAP:
		/*
		 * Code mapped or unmapped since the process was inspected: maybe a
		 * label library, at startup, dlopen'd, or reloaded with other TLS.
		 */
		inspect_pid(r, ev->tgid, PROC_MAPPED);
		break;
	}
}

void registry__tick(struct registry *r)
{
	__u64 now;
	size_t i;

	if (!r->pending)
		return;
	now = now_ns();
	for (i = 0; i < r->stats.tracked && r->pending; i++) {
		struct proc_entry *e = &r->entries[i];

		if (!e->due_ns || e->due_ns > now)
			continue;
		unschedule(r, e);
		if (e->gone)
			end_image(r, e, PROC_END_EXIT);
		else
			inspect(r, e, PROC_FOLLOW_UP);
		/* inspect may have dropped the entry and moved the last one into place i */
		if (i < r->stats.tracked && r->entries[i].due_ns && r->entries[i].due_ns <= now)
			i--;
	}
}

int registry__next_due_ms(const struct registry *r)
{
	__u64 now, first = UINT64_MAX;
	size_t i;

	if (!r->pending)
		return -1;
	for (i = 0; i < r->stats.tracked; i++)
		if (r->entries[i].due_ns && r->entries[i].due_ns < first)
			first = r->entries[i].due_ns;
	now = now_ns();
	/* rounded up: waking before it is due would run nothing */
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

/* ---- what profiles ask ------------------------------------------------------ */

size_t registry__extra_labels(struct registry *r, pid_t pid, const struct profile_label **labels)
{
	struct proc_entry *e = lookup(r, pid);
	size_t i;

	for (i = 0; i < r->nr_mods; i++)
		if (r->mods[i]->extra_labels)
			return r->mods[i]->extra_labels(r->mod[i], e ? e->state[i] : NULL, labels);
	*labels = NULL;
	return 0;
}

bool registry__label(struct registry *r, pid_t pid, struct profile_label *l)
{
	struct proc_entry *e = lookup(r, pid);
	size_t i;

	for (i = 0; i < r->nr_mods; i++)
		if (r->mods[i]->label && !r->mods[i]->label(r->mod[i], e ? e->state[i] : NULL, l))
			return false;
	return true;
}

/* pid's entry; a pid first seen in a sample (a forked child) is inspected now. */
static struct proc_entry *lookup_sampled(struct registry *r, pid_t pid)
{
	struct proc_entry *e = lookup(r, pid);

	if (!e) {
		inspect_pid(r, pid, PROC_FIRST_SAMPLE);
		e = lookup(r, pid);
	}
	return e;
}

__u32 registry__snapshot(struct registry *r, pid_t pid)
{
	struct proc_entry *e = lookup_sampled(r, pid);
	size_t i;

	for (i = 0; e && i < r->nr_mods; i++)
		if (r->mods[i]->snapshot)
			return r->mods[i]->snapshot(r->mod[i], e->state[i], pid);
	return 0;
}

size_t registry__frames(struct registry *r, pid_t pid, __u64 *ips, size_t n, size_t cap)
{
	struct proc_entry *e = lookup_sampled(r, pid);
	size_t i;

	for (i = 0; e && i < r->nr_mods; i++)
		if (r->mods[i]->frames)
			n = r->mods[i]->frames(r->mod[i], e->state[i], pid, ips, n, cap);
	return n;
}

int registry__inspect_one(struct registry *r, pid_t pid, struct lp_recipe *recipe,
			  struct tls_diag *diag)
{
	struct registry_probe probe = {recipe, diag, -ENOMEM};

	memset(recipe, 0, sizeof(*recipe));
	memset(diag, 0, sizeof(*diag));
	r->probe = &probe;
	inspect_pid(r, pid, PROC_SCAN);
	r->probe = NULL;
	return probe.err;
}

void registry__describe(struct registry *r, pid_t pid, const struct proc_report *rep)
{
	struct proc_entry *e = lookup(r, pid);
	size_t i;

	for (i = 0; e && i < r->nr_mods; i++)
		if (r->mods[i]->describe)
			r->mods[i]->describe(r->mod[i], e->state[i], pid, rep);
}

size_t registry__counters(struct registry *r, struct proc_counters *out, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr_mods && n < cap; i++) {
		if (!r->mods[i]->counters)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		if (!r->mods[i]->counters(r->mod[i], &out[n]))
			n++;
	}
	return n;
}

bool registry__labelled(struct registry *r, pid_t pid)
{
	struct proc_entry *e = lookup(r, pid);

	return e && e->labelled;
}

void registry__stats(const struct registry *r, struct registry_stats *out)
{
	*out = r->stats;
}
