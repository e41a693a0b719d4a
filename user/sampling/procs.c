// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/compiler.h"
#include "lib/hashmap.h"
#include "sampling/procs.h"
#include "sampling/sampler.h"
#include "proc/stat.h"
#include "proc/tls.h"
#include "unwind/unwind.h"

/*
 * After an exec, shared libraries are mapped and relocated by the dynamic
 * loader in userspace: the TLS descriptors of a label library are only valid
 * later. These are the delays of the follow-up inspections (and of retries
 * while a descriptor is still lazy), in milliseconds.
 */
static const unsigned int retry_delays_ms[] = {5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
#define MAX_ATTEMPTS	    ARRAY_SIZE(retry_delays_ms)
#define FOLLOW_UP_WINDOW_MS 8885 /* their sum */

struct proc_entry {
	pid_t pid;
	__u8 form;     /* enum lp_label_form installed in the recipes map */
	bool otel;     /* ... or the recipe reads an OTel thread context */
	bool go;       /* ... or the recipe reads Go pprof labels */
	__u8 attempts; /* follow-ups/retries done since the last exec or hint */
	__u64 due_ns;  /* next inspection, 0: none */
	/* exec count and code pages when the unwind mappings were listed; seq 0: never */
	__u64 unwind_seq;
	__u64 unwind_vm;
};

struct procs {
	struct sampler *sampler;
	struct tls_cache *tls;
	struct unwind *unwind; /* NULL: frame pointers only */
	/* entries[0, stats.tracked), in no order: removing one moves the last into its place */
	struct proc_entry *entries;
	size_t cap;
	struct hashmap index; /* pid -> entries[id] */
	size_t max;
	size_t pending; /* entries with a due_ns */
	struct procs_stats stats;
	bool verbose;
};

static bool pid_eq(const void *ctx, __u32 id, const void *key)
{
	return ((const struct procs *)ctx)->entries[id].pid == *(const pid_t *)key;
}

static struct hashmap_slot *find(const struct procs *p, pid_t pid)
{
	return hashmap__find(&p->index, hashmap__hash_u64((__u32)pid), pid_eq, p, &pid);
}

static struct proc_entry *lookup(struct procs *p, pid_t pid)
{
	__u32 id;

	return hashmap_slot__id(find(p, pid), &id) ? &p->entries[id] : NULL;
}

static struct proc_entry *insert(struct procs *p, pid_t pid)
{
	struct proc_entry *e = lookup(p, pid);
	size_t id = p->stats.tracked;

	if (e)
		return e;
	/* the table holds at most max processes; beyond that they go untracked */
	if (id >= p->max || hashmap__reserve(&p->index, 0) ||
	    ARRAY_RESERVE(p->entries, p->cap, id + 1))
		return NULL;
	hashmap__set(&p->index, find(p, pid), hashmap__hash_u64((__u32)pid), id);
	p->entries[id] = (struct proc_entry){.pid = pid};
	p->stats.tracked++;
	return &p->entries[id];
}

static void remove_entry(struct procs *p, struct proc_entry *e)
{
	size_t id = e - p->entries, last;

	if (e->due_ns)
		p->pending--;
	if (e->form != LP_FORM_NONE || e->otel || e->go)
		p->stats.labelled--;
	hashmap__del(&p->index, find(p, e->pid));
	last = --p->stats.tracked;
	if (id != last) {
		*e = p->entries[last];
		hashmap__renumber(&p->index, hashmap__hash_u64((__u32)e->pid), last, id);
	}
}

static void schedule(struct procs *p, struct proc_entry *e, unsigned int delay_ms)
{
	if (!e->due_ns)
		p->pending++;
	e->due_ns = now_ns() + delay_ms * 1000000ull;
}

static void unschedule(struct procs *p, struct proc_entry *e)
{
	if (e->due_ns)
		p->pending--;
	e->due_ns = 0;
}

static void set_form(struct procs *p, struct proc_entry *e, __u8 form, bool otel, bool go)
{
	bool was = e->form != LP_FORM_NONE || e->otel || e->go,
	     is = form != LP_FORM_NONE || otel || go;

	if (was)
		p->stats.labelled--;
	if (is)
		p->stats.labelled++;
	if (is && !was)
		p->stats.labelled_seen++;
	e->form = form;
	e->otel = otel;
	e->go = go;
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

pid_t procs__tgid(pid_t pid)
{
	char path[64], line[256], state = 0;
	pid_t tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	/* State comes before Tgid */
	while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %d", &tgid) != 1)
		sscanf(line, "State: %c", &state);
	fclose(f);
	/* a zombie or a dead task has exited: it only waits to be reaped */
	return state == 'Z' || state == 'X' ? -ESRCH : tgid;
}

/*
 * Inspects one process and installs its recipe. A process without labels
 * gets a LP_FORM_NONE recipe too, so BPF knows it was looked at and stops
 * asking. Follow-ups stay scheduled while a process might still load its
 * label library (after exec, after a new executable mapping).
 */
static void resolve(struct procs *p, struct proc_entry *e)
{
	struct lp_recipe recipe = {};
	struct tls_diag diag = {};
	struct lp_go_ref go;
	__u64 seq, exec_vm;
	bool otel, sampled, quiet;
	int err, set_err;

	/*
	 * Read before inspecting: an exec in between makes this recipe stale in
	 * BPF, and code mapped in between makes samples ask again.
	 */
	seq = sampler__exec_seq(p->sampler, e->pid);
	exec_vm = exec_vm_pages(e->pid);
	p->stats.resolves++;
	err = tls__resolve_process(p->tls, e->pid, &recipe, &diag);
	go = recipe.go;
	if (err == -ESRCH || (err == -ENOENT && go.format == LP_GO_NONE)) {
		remove_entry(p, e);
		return;
	}
	if (err == -EAGAIN)
		p->stats.retries++;
	else if (err) {
		p->stats.errors++;
		if (p->verbose)
			fprintf(stderr, "labelprof: pid %d: %s\n", e->pid, diag.msg);
	}
	if (err)
		memset(&recipe, 0, sizeof(recipe));
	/* Go labels do not depend on the custom labels' TLS */
	recipe.go = go;
	recipe.exec_seq = seq;
	recipe.exec_vm = exec_vm;
	set_err = sampler__set_recipe(p->sampler, e->pid, &recipe);
	/*
	 * The unwind mappings follow the same inspections (exec, unknown pid, new
	 * code), not the retries that wait for a label library's relocation, and
	 * only for the processes sampled. The unwind thread builds the tables
	 * while this one goes on with inspections that are due.
	 */
	sampled = sampler__samples_tgid(p->sampler, e->pid);
	if (p->unwind && (e->unwind_seq != seq + 1 || e->unwind_vm != exec_vm || !exec_vm) &&
	    sampled) {
		if (unwind__queue_update(p->unwind, e->pid)) {
			if (p->verbose)
				fprintf(stderr, "labelprof: pid %d: no unwind tables\n", e->pid);
		} else {
			e->unwind_seq = seq + 1;
			e->unwind_vm = exec_vm;
		}
	}
	/* nothing left for an unknown-pid hint to do: the samples stop sending them */
	quiet = !err && exec_vm && recipe.form == LP_FORM_NONE &&
		recipe.otel.access == LP_TLS_NONE && recipe.go.format == LP_GO_NONE &&
		(!p->unwind || !sampled || (e->unwind_seq == seq + 1 && e->unwind_vm == exec_vm));
	if (!set_err && quiet) {
		recipe.flags |= LP_RECIPE_QUIET;
		set_err = sampler__set_recipe(p->sampler, e->pid, &recipe);
	}
	if (set_err) {
		p->stats.errors++;
		unschedule(p, e);
		return;
	}
	if (p->verbose && recipe.form != e->form && recipe.form != LP_FORM_NONE)
		fprintf(stderr, "labelprof: pid %d: %s\n", e->pid, diag.msg);
	otel = recipe.otel.access != LP_TLS_NONE;
	if (p->verbose && otel && !e->otel)
		fprintf(stderr, "labelprof: pid %d: OpenTelemetry thread context: %s\n", e->pid,
			diag.otel_msg);
	if (p->verbose && diag.go[0] && e->attempts == 0)
		fprintf(stderr, "labelprof: pid %d: %s\n", e->pid, diag.go);
	set_form(p, e, recipe.form, otel, recipe.go.format != LP_GO_NONE);

	if (recipe.form != LP_FORM_NONE || otel || e->attempts >= MAX_ATTEMPTS) {
		unschedule(p, e);
		return;
	}
	schedule(p, e, retry_delays_ms[e->attempts++]);
}

/* Whether pid started less than ms ago, or its start time cannot be read. */
static bool started_within(pid_t pid, unsigned int ms)
{
	unsigned long long start_ticks;
	const char *fields;
	struct timespec now;
	char buf[1024];

	/* starttime is the 22nd field */
	fields = proc_stat_fields(pid, buf, sizeof(buf));
	if (!fields || sscanf(fields, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				      "%*d %*d %*d %*d %llu",
			      &start_ticks) != 1)
		return true;
	clock_gettime(CLOCK_BOOTTIME, &now);
	return (now.tv_sec * 1000ull + now.tv_nsec / 1000000) <
	       start_ticks * 1000 / sysconf(_SC_CLK_TCK) + ms;
}

static void resolve_pid(struct procs *p, pid_t pid, bool follow_up)
{
	struct proc_entry *e = insert(p, pid);

	if (!e)
		return;
	if (follow_up)
		e->attempts = 0;
	resolve(p, e);
}

/*
 * A process found running at the start gets the follow-ups only if it has
 * just started: an older one loaded its libraries long ago, and code it maps
 * later is noticed by its samples (LP_ST_MAPS_CHANGED).
 */
static void scan_pid(struct procs *p, pid_t pid)
{
	struct proc_entry *e = insert(p, pid);

	if (!e)
		return;
	if (!started_within(pid, FOLLOW_UP_WINDOW_MS))
		e->attempts = MAX_ATTEMPTS;
	resolve(p, e);
}

struct procs *procs__new(struct sampler *s, unsigned int max_processes, bool verbose)
{
	struct procs *p = calloc(1, sizeof(*p));
	struct unwind_maps um;

	if (!p)
		return NULL;
	p->max = max_processes ? max_processes : SAMPLER_DEFAULT_MAX_PROCESSES;
	p->tls = tls_cache__new(TLS_CACHE_DEFAULT_ENTRIES);
	if (!p->tls) {
		procs__free(p);
		return NULL;
	}
	if (!sampler__unwind_maps(s, &um)) {
		p->unwind = unwind__new(&um, verbose);
		if (!p->unwind) {
			procs__free(p);
			return NULL;
		}
	}
	p->sampler = s;
	p->verbose = verbose;
	return p;
}

void procs__free(struct procs *p)
{
	if (!p)
		return;
	tls_cache__free(p->tls);
	unwind__free(p->unwind);
	hashmap__free(&p->index);
	free(p->entries);
	free(p);
}

int procs__scan(struct procs *p, const pid_t *pids, size_t count)
{
	struct dirent *de;
	size_t i;
	DIR *dir;

	if (count) {
		for (i = 0; i < count; i++)
			scan_pid(p, pids[i]);
	} else {
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
			scan_pid(p, pid);
		}
		closedir(dir);
	}
	/* what runs already is unwound from the first sample */
	if (p->unwind)
		unwind__wait_idle(p->unwind);
	return 0;
}

void procs__handle_event(struct procs *p, const struct lp_proc_event *ev)
{
	struct proc_entry *e;

	switch (ev->hdr.type) {
	case LP_EVENT_EXEC:
		/* BPF already dropped the old recipe; the new image needs a new one */
		e = lookup(p, ev->tgid);
		if (e)
			set_form(p, e, LP_FORM_NONE, false, false);
		resolve_pid(p, ev->tgid, true);
		break;
	case LP_EVENT_EXIT:
		if (p->unwind)
			unwind__queue_forget(p->unwind, ev->tgid);
		e = lookup(p, ev->tgid);
		if (e)
			remove_entry(p, e);
		break;
	case LP_EVENT_UNKNOWN_PID:
		resolve_pid(p, ev->tgid, false);
		break;
	case LP_EVENT_EXEC_MAP:
		/*
		 * Code mapped or unmapped since the process was inspected: maybe a
		 * label library, at startup, dlopen'd, or reloaded with other TLS.
		 */
		resolve_pid(p, ev->tgid, true);
		break;
	}
}

void procs__tick(struct procs *p)
{
	__u64 now;
	size_t i;

	if (!p->pending)
		return;
	now = now_ns();
	for (i = 0; i < p->stats.tracked && p->pending; i++) {
		struct proc_entry *e = &p->entries[i];

		if (!e->due_ns || e->due_ns > now)
			continue;
		unschedule(p, e);
		resolve(p, e);
		/* resolve may have removed the entry and moved the last one into place i */
		if (i < p->stats.tracked && p->entries[i].due_ns && p->entries[i].due_ns <= now)
			i--;
	}
}

int procs__next_due_ms(const struct procs *p)
{
	__u64 now, first = UINT64_MAX;
	size_t i;

	if (!p->pending)
		return -1;
	for (i = 0; i < p->stats.tracked; i++)
		if (p->entries[i].due_ns && p->entries[i].due_ns < first)
			first = p->entries[i].due_ns;
	now = now_ns();
	/* rounded up: waking before it is due would run nothing */
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

void procs__stats(const struct procs *p, struct procs_stats *out)
{
	*out = p->stats;
}

bool procs__unwind_stats(const struct procs *p, struct unwind_stats *out)
{
	if (!p->unwind)
		return false;
	unwind__stats(p->unwind, out);
	return true;
}

bool procs__labelled(struct procs *p, pid_t pid)
{
	struct proc_entry *e = lookup(p, pid);

	return e && (e->form != LP_FORM_NONE || e->otel || e->go);
}
