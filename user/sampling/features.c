// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sampling/features.h"
#include "sampling/sampler.h"

static struct feature *add(struct features *f, const char *name, const char *title,
			   const char *used_by, enum feature_need need)
{
	struct feature *x = &f->list[f->count++];

	x->name = name;
	x->title = title;
	x->used_by = used_by;
	x->need = need;
	x->state = FEATURE_UNCHECKED;
	x->detail[0] = '\0';
	return x;
}

static void set(struct feature *x, bool yes, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set(struct feature *x, bool yes, const char *fmt, ...)
{
	va_list ap;

	x->state = yes ? FEATURE_YES : FEATURE_NO;
	va_start(ap, fmt);
	vsnprintf(x->detail, sizeof(x->detail), fmt, ap);
	va_end(ap);
}

/* One of the sampler's kernel features, by its own probe. */
static struct feature *add_kernel(struct features *f, const char *name,
				  enum sampler_kernel_feature kf, const char *used_by,
				  enum feature_need need)
{
	return add(f, name, sampler__kernel_feature_title(kf), used_by, need);
}

static void set_kernel(struct feature *x, enum sampler_kernel_feature kf)
{
	char why[200];
	int ret = sampler__probe_kernel(kf, why, sizeof(why));

	if (ret < 0)
		set(x, false, "the probe failed: %s", strerror(-ret));
	else
		set(x, ret == 1, "%s", why);
}

static void set_mounted(struct feature *x, const char *fstype)
{
	char line[1024], type[64];
	const char *sep;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	if (!f) {
		set(x, false, "/proc/self/mountinfo: %s", strerror(errno));
		return;
	}
	/* "... - FSTYPE SOURCE OPTIONS": the type follows the separator */
	while (!found && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		found = sep && sscanf(sep + 3, "%63s", type) == 1 && !strcmp(type, fstype);
	}
	fclose(f);
	set(x, found, "%s", "");
}

static void set_cpu_clock(struct feature *x)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = 1000000000ull,
		.disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		set(x, false, "perf_event_open(cpu-clock, CPU 0): %s", strerror(errno));
		return;
	}
	close(fd);
	set(x, true, "%s", "");
}

static int ignore_record(void *ctx, const void *data, size_t size)
{
	return 0;
}

static int count_record(void *ctx, const void *data, size_t size)
{
	++*(unsigned int *)ctx;
	return 0;
}

/* The real sampler, loaded, attached and sampling this process for an instant. */
static void set_sampler(struct feature *x, bool verbose)
{
	pid_t self = getpid();
	struct sampler_opts o = SAMPLER_OPTS_INIT(1);
	struct sampler *s;
	char err[512];

	o.filter_mode = LP_FILTER_PIDS;
	o.pids = &self;
	o.pid_count = 1;
	o.libbpf_messages = verbose;

	s = sampler__open(&o, ignore_record, NULL, err, sizeof(err));
	if (!s) {
		set(x, false, "%s", err);
		return;
	}
	if (sampler__start(s, err, sizeof(err)))
		set(x, false, "%s", err);
	else
		set(x, true, "%s", "");
	sampler__close(s);
}

static void set_task_iter(struct feature *x, bool verbose)
{
	struct lp_recipe none = {.form = LP_FORM_NONE};
	unsigned int threads = 0;
	char err[512];

	if (sampler__read_threads(getpid(), &none, verbose, count_record, &threads, err,
				  sizeof(err)))
		set(x, false, "%s", err);
	else if (!threads)
		set(x, false, "the iterator saw no thread of this process");
	else
		set(x, true, "%s", "");
}

void features__probe(struct features *f, bool verbose)
{
	struct feature *btf, *priv, *ringbuf, *loop, *lifecycle, *clock, *sampler, *iter, *hash;
	struct utsname u;
	char err[512];
	unsigned int i;

	memset(f, 0, sizeof(*f));
	if (!uname(&u)) {
		snprintf(f->release, sizeof(f->release), "%s", u.release);
		snprintf(f->machine, sizeof(f->machine), "%s", u.machine);
	}
	btf = add(f, "btf", "BTF (/sys/kernel/btf/vmlinux)",
		  "CO-RE relocation and every attach point", FEATURE_REQUIRED);
	priv = add(f, "privileges", "root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE",
		   "BPF, perf events, other processes' memory", FEATURE_REQUIRED);
	ringbuf = add_kernel(f, "ringbuf", SAMPLER_KF_RINGBUF, "samples and process events",
			     FEATURE_REQUIRED);
	loop = add_kernel(f, "bpf_loop", SAMPLER_KF_LOOP, "label and stack walks",
			  FEATURE_REQUIRED);
	lifecycle = add_kernel(f, "lifecycle_tracepoints", SAMPLER_KF_LIFECYCLE,
			       "process lifecycle", FEATURE_REQUIRED);
	clock = add(f, "cpu_clock", "cpu-clock perf events", "sampling", FEATURE_REQUIRED);
	sampler = add(f, "sampler", "labelprof's BPF sampler loads, attaches and samples",
		      "record, top, agent", FEATURE_REQUIRED);
	iter = add(f, "task_iterator", "sleepable BPF task iterator of one process (6.1)",
		   "labelprof labels", FEATURE_OPTIONAL);
	hash = add_kernel(f, "runtime_hash_maps", SAMPLER_KF_RUNTIME_HASH,
			  "CFI unwinding's mapping lists of any number of processes",
			  FEATURE_OPTIONAL);
	set_mounted(add(f, "tracefs", "tracefs mounted", "nothing (programs attach through BTF)",
			FEATURE_UNUSED),
		    "tracefs");
	set_mounted(add(f, "debugfs", "debugfs mounted", "nothing", FEATURE_UNUSED), "debugfs");

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		set(btf, false, "%s (CONFIG_DEBUG_INFO_BTF=y is needed)", strerror(errno));
	} else {
		set(btf, true, "%s", "");
		set_kernel(lifecycle, SAMPLER_KF_LIFECYCLE);
	}
	if (btf->state == FEATURE_YES && sampler__check_system(err, sizeof(err))) {
		set(priv, false, "%s", err);
	} else if (btf->state == FEATURE_YES) {
		set(priv, true, "%s", "");
		set_kernel(ringbuf, SAMPLER_KF_RINGBUF);
		set_kernel(loop, SAMPLER_KF_LOOP);
		set_kernel(hash, SAMPLER_KF_RUNTIME_HASH);
		if (hash->state == FEATURE_NO && !hash->detail[0])
			set(hash, false,
			    "preallocated instead, for %u processes at most (8 KiB each); the "
			    "stacks of others are walked by frame pointers",
			    SAMPLER_UNWIND_PREALLOC_PROCS);
		set_cpu_clock(clock);
	}
	if (ringbuf->state == FEATURE_YES && loop->state == FEATURE_YES &&
	    lifecycle->state == FEATURE_YES && clock->state == FEATURE_YES) {
		set_sampler(sampler, verbose);
		set_task_iter(iter, verbose);
	}
	f->ready = true;
	for (i = 0; i < f->count; i++)
		if (f->list[i].need == FEATURE_REQUIRED && f->list[i].state != FEATURE_YES)
			f->ready = false;
}

const char *features__state_name(enum feature_state s)
{
	return s == FEATURE_YES ? "yes" : s == FEATURE_NO ? "no" : "unchecked";
}

const char *features__need_name(enum feature_need n)
{
	return n == FEATURE_REQUIRED ? "required" : n == FEATURE_OPTIONAL ? "optional" : "unused";
}
