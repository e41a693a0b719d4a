// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof labels: the label set every thread of a process has, now, or
 * (--watch) every label set each thread had over a few seconds.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <time.h>

#include "lib/array.h"
#include "lib/compiler.h"
#include "cli/cli.h"
#include "cmd/commands.h"
#include "format/fmt.h"
#include "profile/otel_labels.h"
#include "profile/profile.h"
#include "proc/stat.h"
#include "proc/tls.h"
#include "registry/registry.h"
#include "sampling/probe.h"
#include "sampling/sampler.h"

/* --watch without SECONDS */
#define WATCH_DEFAULT_S 5
#define WATCH_MAX_S	3600
/* Between two reads of the threads: often enough to see sets held a few ms. */
#define WATCH_PERIOD_NS 10000000L

struct labels_env {
	pid_t pid;
	bool json;
	unsigned int watch_s; /* 0: one read, now */
	unsigned int verbose; /* -v given this often */
};

enum {
	OPT_JSON = 0x100,
	OPT_WATCH,
};

static const struct argp_option labels_options[] = {
	{"json", OPT_JSON, NULL, 0, "Write one JSON object instead of text", 0},
	{"watch", OPT_WATCH, "SECONDS", OPTION_ARG_OPTIONAL,
	 "Read the threads 100 times a second for SECONDS (default 5; Ctrl-C ends it early) "
	 "and show every label set each thread had, with how often",
	 0},
	{"verbose", 'v', NULL, 0, "Say more; twice (-vv): libbpf's messages too", 0},
	{},
};

static error_t parse_labels_opt(int key, char *arg, struct argp_state *state)
{
	struct labels_env *env = state->input;
	unsigned long long v;

	switch (key) {
	case OPT_JSON:
		env->json = true;
		break;
	case OPT_WATCH:
		if (!arg)
			v = WATCH_DEFAULT_S;
		else if (cli_parse_uint(arg, WATCH_MAX_S, &v) || !v)
			argp_error(state, "--watch takes 1 to %d seconds, not '%s'", WATCH_MAX_S,
				   arg);
		env->watch_s = v;
		break;
	case 'v':
		env->verbose++;
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num)
			argp_error(state, "one PID only");
		if (cli_parse_uint(arg, INT_MAX, &v) || !v)
			argp_error(state, "invalid pid '%s'", arg);
		env->pid = v;
		break;
	case ARGP_KEY_END:
		if (!env->pid)
			argp_error(state, "a PID is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* A thread's outcome, the most telling first; its word is the status flag's name. */
static const struct {
	__u32 bit;
	const char *why;
} outcomes[] = {
	{LP_ST_EXITING, "the thread is exiting: its TLS may already belong to another thread"},
	{LP_ST_WORKER, "an io_uring or kernel (vhost) worker: its TLS is its creator's, it has no "
		       "thread labels of its own"},
	{LP_ST_TLS_PENDING, "the dynamic loader has not relocated the labels library yet"},
	{LP_ST_DTV_UNALLOCATED,
	 "the thread never touched the labels library's TLS (its DTV slot is unallocated)"},
	{LP_ST_READ_FAULT, "reading the thread's memory failed: the source being read gives no "
			   "label"},
	{LP_ST_TRUNCATED, "a key, a value or the number of labels hit a limit"},
	{LP_ST_MALFORMED, "a damaged label (a NULL pointer with a non-zero length) was skipped"},
};

static const char *outcome(__u32 status, const char **why)
{
	size_t i;

	*why = NULL;
	for (i = 0; i < ARRAY_SIZE(outcomes); i++) {
		if (status & outcomes[i].bit) {
			*why = outcomes[i].why;
			return fmt__status_name(ffs(outcomes[i].bit) - 1);
		}
	}
	return "ok";
}

struct labels_run {
	const struct labels_env *env;
	const struct tls_diag *diag;
	__u32 form;
	bool otel; /* the recipe reads an OTel thread context */
	struct profile *profile;
	size_t threads;
	size_t unallocated;
	/* --watch: the reads, how long they took, and each (thread, label set) seen */
	unsigned long long reads;
	size_t read_threads; /* records of the current read */
	double watched_s;
	struct profile_sample *sets;
	size_t nsets, sets_cap;
};

static int on_thread(void *ctx, const void *data, size_t size)
{
	struct labels_run *run = ctx;
	int err = profile__add_sample(run->profile, data, size);

	run->read_threads++;
	/* a malformed record is counted by the profile and left out */
	return err == -EINVAL ? 0 : err;
}

/* One '  KEY=VALUE' line per label after indent, '[SOURCE] ' before other sources' keys. */
static void put_label_lines(const struct profile_sample *s, const char *indent)
{
	size_t i;

	for (i = 0; i < s->label_count; i++) {
		fputs(indent, stdout);
		if (s->labels[i].source != LP_SRC_CUSTOM_LABELS)
			printf("[%s] ", fmt__label_source_name(s->labels[i].source));
		/* a key's '=' is escaped: the first '=' of the line ends the key */
		fmt__text_bytes(stdout, s->labels[i].key, s->labels[i].key_len, "=", SIZE_MAX);
		putchar('=');
		fmt__text_bytes(stdout, s->labels[i].value, s->labels[i].value_len, NULL, SIZE_MAX);
		putchar('\n');
	}
}

/* "STATUS, N labels" of a thread's read (or of reads that gave one label set). */
static const char *put_outcome(const struct profile_sample *s, struct labels_run *run)
{
	const char *why, *word = outcome(s->status, &why);

	run->threads++;
	if (s->status & LP_ST_DTV_UNALLOCATED)
		run->unallocated++;
	fputs(word, stdout);
	if (s->status & LP_ST_LABELS_READ)
		printf(", %zu label%s", s->label_count, s->label_count == 1 ? "" : "s");
	return why;
}

static int put_thread_text(const struct profile_sample *s, void *ctx)
{
	const char *why;

	printf("tid %" PRIu32 " comm ", s->tid);
	fmt__text_bytes(stdout, s->comm, s->comm_len, " :", SIZE_MAX);
	fputs(": ", stdout);
	why = put_outcome(s, ctx);
	if (why)
		printf(" (%s)", why);
	putchar('\n');
	put_label_lines(s, "  ");
	return ferror(stdout) ? -EIO : 0;
}

/* The fields of a label set and its outcome, after a JSON object's other fields. */
static void put_set_json(const struct profile_sample *s, struct labels_run *run)
{
	const char *why;

	if (s->status & LP_ST_DTV_UNALLOCATED)
		run->unallocated++;
	fputs("\"labels\":", stdout);
	fmt__json_labels(stdout, s->labels, s->label_count);
	fputs(",\"label_sources\":", stdout);
	fmt__json_label_sources(stdout, s->labels, s->label_count);
	printf(",\"status\":\"%s\",\"flags\":", outcome(s->status, &why));
	fmt__json_status(stdout, s->status);
}

static int put_thread_json(const struct profile_sample *s, void *ctx)
{
	struct labels_run *run = ctx;

	if (run->threads++)
		putchar(',');
	printf("\n{\"tid\":%" PRIu32 ",\"comm\":", s->tid);
	fmt__json_bytes(stdout, s->comm, s->comm_len);
	putchar(',');
	put_set_json(s, run);
	putchar('}');
	return ferror(stdout) ? -EIO : 0;
}

static int collect_set(const struct profile_sample *s, void *ctx)
{
	struct labels_run *run = ctx;

	if (ARRAY_RESERVE_MIN(run->sets, run->sets_cap, run->nsets + 1, 64))
		return -ENOMEM;
	run->sets[run->nsets++] = *s;
	return 0;
}

/* By thread, then the sets seen most often first. */
static int set_cmp(const void *a, const void *b)
{
	const struct profile_sample *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->label_set > y->label_set) - (x->label_set < y->label_set);
}

/* --watch: per thread, each label set seen and in how many reads. */
static int put_watched(struct labels_run *run)
{
	const struct profile_sample *s;
	unsigned long long reads;
	size_t first, end, i;
	int err = profile__for_each(run->profile, collect_set, run);

	if (err)
		return err;
	if (run->nsets)
		qsort(run->sets, run->nsets, sizeof(*run->sets), set_cmp);
	if (!run->env->json)
		printf("pid %d: %llu reads in %.1f s\n", run->env->pid, run->reads, run->watched_s);
	for (first = 0; first < run->nsets; first = end) {
		s = &run->sets[first];
		reads = 0;
		for (end = first; end < run->nsets && run->sets[end].tid == s->tid; end++)
			reads += run->sets[end].count;
		if (run->env->json) {
			printf("%s\n{\"tid\":%" PRIu32 ",\"comm\":", first ? "," : "", s->tid);
			fmt__json_bytes(stdout, s->comm, s->comm_len);
			printf(",\"reads\":%llu,\"sets\":[", reads);
		} else {
			printf("tid %" PRIu32 " comm ", s->tid);
			fmt__text_bytes(stdout, s->comm, s->comm_len, " :", SIZE_MAX);
			printf(": %zu label set%s in %llu reads\n", end - first,
			       end - first == 1 ? "" : "s", reads);
		}
		for (i = first; i < end; i++) {
			s = &run->sets[i];
			if (run->env->json) {
				printf("%s{\"reads\":%llu,", i > first ? "," : "",
				       (unsigned long long)s->count);
				put_set_json(s, run);
				putchar('}');
				run->threads++;
				continue;
			}
			printf("  %5.1f%% %6llu  ", 100.0 * s->count / reads,
			       (unsigned long long)s->count);
			put_outcome(s, run);
			putchar('\n');
			put_label_lines(s, "    ");
		}
		if (run->env->json)
			fputs("]}", stdout);
	}
	return ferror(stdout) ? -EIO : 0;
}

static int put_labels(struct labels_run *run)
{
	const struct tls_diag *diag = run->diag;
	int err;

	if (run->env->json) {
		printf("{\"pid\":%d,\"form\":", run->env->pid);
		if (run->form != LP_FORM_NONE)
			printf("\"%s\"", tls__form_name(run->form));
		else
			fputs("null", stdout);
		fputs(",\"otel_thread\":", stdout);
		if (run->otel)
			fmt__json_bytes(stdout, diag->otel_object, strlen(diag->otel_object));
		else
			fputs("null", stdout);
		fputs(",\"object\":", stdout);
		fmt__json_bytes(stdout, diag->object, strlen(diag->object));
		fputs(",\"recipe\":", stdout);
		fmt__json_bytes(stdout, diag->msg, strlen(diag->msg));
		fputs(",\"go\":", stdout);
		fmt__json_bytes(stdout, diag->go, strlen(diag->go));
		if (run->env->watch_s)
			printf(",\"reads\":%llu,\"seconds\":%.3f", run->reads, run->watched_s);
		fputs(",\"threads\":[", stdout);
		err = run->env->watch_s ? put_watched(run)
					: profile__for_each(run->profile, put_thread_json, run);
		fputs("\n]}\n", stdout);
	} else {
		/* one header line: the sources read, and where from */
		if (run->form != LP_FORM_NONE && run->otel)
			fmt__text_line(stdout,
				       "pid %d: %s from %s (%s); OpenTelemetry thread context from "
				       "%s (%s)",
				       run->env->pid, tls__form_name(run->form), diag->object,
				       diag->msg, diag->otel_object, diag->otel_msg);
		else if (run->form != LP_FORM_NONE)
			fmt__text_line(stdout, "pid %d: %s from %s (%s)", run->env->pid,
				       tls__form_name(run->form), diag->object, diag->msg);
		else if (run->otel)
			fmt__text_line(stdout, "pid %d: OpenTelemetry thread context from %s (%s)",
				       run->env->pid, diag->otel_object, diag->otel_msg);
		if (diag->go[0])
			fmt__text_line(stdout, "pid %d: go_pprof (%s)", run->env->pid, diag->go);
		err = run->env->watch_s ? put_watched(run)
					: profile__for_each(run->profile, put_thread_text, run);
	}
	if (!err && fflush(stdout))
		err = -errno;
	return err;
}

/* The recipe of env->pid, or a one-line reason on stderr why there is none. */
static int find_recipe(const struct labels_env *env, struct lp_recipe *r, struct tls_diag *diag)
{
	pid_t tgid = proc_tgid(env->pid);
	struct registry *reg;
	int err;

	if (tgid == -ESRCH) {
		fprintf(stderr, "labelprof: no such process: %d\n", env->pid);
		return tgid;
	}
	if (tgid < 0) {
		fprintf(stderr, "labelprof: pid %d: %s\n", env->pid, strerror(-tgid));
		return tgid;
	}
	if (tgid != env->pid) {
		fprintf(stderr, "labelprof: %d is a thread of process %d: give the process id\n",
			env->pid, tgid);
		return -EINVAL;
	}
	if (proc_is_kernel_thread(env->pid)) {
		fprintf(stderr,
			"labelprof: pid %d is a kernel thread: no user memory, so no labels "
			"(labelprof record -p %d samples its kernel stacks)\n",
			env->pid, env->pid);
		return -ENOENT;
	}
	/* what the modules of a recording find; diag quotes the process's file names: escaped */
	reg = probe__process(env->pid, r, diag, &err);
	if (!reg) {
		fprintf(stderr, "labelprof: pid %d: %s\n", env->pid, strerror(-err));
		return err;
	}
	registry__free(reg);
	/* a Go program's labels are read whatever became of custom labels */
	if (r->go.format != LP_GO_NONE && err != -ESRCH && err != -EACCES && err != -EPERM)
		return 0;
	if (err == -ESRCH)
		fprintf(stderr, "labelprof: no such process: %d\n", env->pid);
	else if (err == -EACCES || err == -EPERM)
		fmt__text_line(stderr, "labelprof: pid %d: not permitted: %s", env->pid, diag->msg);
	else if (err == -EAGAIN)
		fmt__text_line(stderr, "labelprof: pid %d: %s: %s; try again in a moment", env->pid,
			       diag->object, diag->msg);
	else if (err)
		fmt__text_line(stderr, "labelprof: pid %d: the labels%s%s cannot be located: %s",
			       env->pid, diag->object[0] ? " of " : "", diag->object, diag->msg);
	else if (r->form == LP_FORM_NONE && r->otel.access == LP_TLS_NONE)
		fmt__text_line(stderr, "labelprof: pid %d publishes no labels: %s%s%s; %s%s%s",
			       env->pid, diag->object, diag->object[0] ? ": " : "", diag->msg,
			       diag->otel_msg, diag->go[0] ? "; " : "", diag->go);
	else
		return 0;
	return err ? err : -ENOENT;
}

static volatile sig_atomic_t watch_stop;

static void on_stop(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static double since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * Reads the threads until --watch's seconds are over, Ctrl-C or the process
 * exits: the profile counts each (thread, label set) once per read.
 */
static int watch(struct labels_run *run, const struct lp_recipe *r, char *err, size_t err_len)
{
	/* no SA_RESTART: the pause between reads ends at once */
	struct sigaction sa = {.sa_handler = on_stop};
	const struct timespec pause = {0, WATCH_PERIOD_NS};
	struct sampler_threads *t;
	struct timespec start;
	int ret = 0;

	t = sampler__threads_open(run->env->pid, r, run->env->verbose >= 2, err, err_len);
	if (!t)
		return -errno;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		run->read_threads = 0;
		ret = sampler__threads_read(t, on_thread, run, err, err_len);
		if (ret || !run->read_threads)
			break;
		run->reads++;
		nanosleep(&pause, NULL);
	} while (!watch_stop && since(&start) < run->env->watch_s);
	run->watched_s = since(&start);
	sampler__threads_close(t);
	return ret;
}

int cmd_labels(int argc, char **argv)
{
	static struct labels_env env;
	static const struct argp argp = {
		.options = labels_options,
		.parser = parse_labels_opt,
		.args_doc = "PID",
		.doc = "Shows the custom labels (and a Go program's goroutine pprof labels) every "
		       "thread of process PID has set right now; with --watch, every label set "
		       "each thread had over SECONDS, read 100 times a second (a thread that "
		       "serves requests has none between them, so one instant says little). "
		       "A BPF task iterator reads them where the threads keep them, with the "
		       "recipe 'labelprof record' uses, without stopping the process.\v"
		       "Text output: a line naming the label form and the file that publishes "
		       "it, then per thread 'tid TID comm COMM: STATUS, N labels' and one "
		       "'  KEY=VALUE' line per label, sorted by key, '  [SOURCE] KEY=VALUE' for "
		       "a label that does not come from custom labels (otel_thread: the "
		       "OpenTelemetry thread context; otel_process: the process context's "
		       "resource attributes, on every thread; go_pprof). Bytes that are not "
		       "printable UTF-8, '\\', '=' in keys and ' ' or ':' in COMM are written "
		       "as \\xHH. With --watch, a line 'pid PID: N reads in S s', then per "
		       "thread 'tid TID comm COMM: N label sets in R reads' and per label set, "
		       "most often seen first, 'SHARE% READS  STATUS, N labels' and its "
		       "'    KEY=VALUE' lines.\n\n"
		       "STATUS: ok; dtv_unallocated (the thread never touched the labels "
		       "library's thread-local storage: it has set no label yet); tls_pending "
		       "(the library is not relocated yet); read_fault (the thread's memory "
		       "could not be read: the source being read gives no label, never part of "
		       "its set); truncated (more than 16 labels, a key over 128 bytes or a "
		       "value over 256 bytes, the limits 'labelprof record' reads with, or an "
		       "OpenTelemetry thread context record over 640 bytes); malformed (a label "
		       "with a NULL key or value pointer but a non-zero length was skipped; a "
		       "NULL value of length 0 is a label not in use and is skipped silently); "
		       "exiting; worker (an io_uring or vhost worker thread: its TLS is its "
		       "creator's, so it has no thread labels of its own, only the process "
		       "context's).\n\n"
		       "--json writes {\"pid\", \"form\", \"otel_thread\", \"object\", \"recipe\", "
		       "\"go\", \"threads\": [{\"tid\", \"comm\", \"labels\": {KEY: VALUE}, "
		       "\"label_sources\": {KEY: SOURCE}, \"status\", \"flags\"}]} "
		       "with byte strings escaped as in docs/json-format.md; with --watch, "
		       "\"reads\" and \"seconds\" besides, and per thread {\"tid\", \"comm\", "
		       "\"reads\", \"sets\": [{\"reads\", \"labels\", \"label_sources\", "
		       "\"status\", \"flags\"}]}.\n\n"
		       "Exit status: 0 when the labels were read; 1 when they could not be "
		       "(no such process, not permitted, no labels published, and why); 2 on "
		       "usage errors. Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE.",
	};
	struct labels_run run = {.env = &env};
	struct otel_labels_proc otel_proc = {0};
	struct otel_labels *otel = NULL;
	struct profile_resolver resolver;
	struct profile_stats st;
	struct lp_recipe recipe;
	struct tls_diag diag;
	char errbuf[512];
	int err, ret = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (sampler__check_system(errbuf, sizeof(errbuf))) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		return 1;
	}
	if (find_recipe(&env, &recipe, &diag))
		return 1;
	run.diag = &diag;
	run.form = recipe.form;
	run.otel = recipe.otel.access != LP_TLS_NONE;
	run.profile = profile__new(NULL, NULL);
	otel = otel_labels__new();
	if (!run.profile || !otel) {
		fprintf(stderr, "labelprof: out of memory\n");
		goto out_free;
	}
	otel_labels__proc_init(&otel_proc, env.pid, NULL);
	otel_labels__resolver(otel, &otel_proc, &resolver);
	profile__set_resolver(run.profile, &resolver);
	if (env.watch_s)
		err = watch(&run, &recipe, errbuf, sizeof(errbuf));
	else
		err = sampler__read_threads(env.pid, &recipe, env.verbose >= 2, on_thread, &run,
					    errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		goto out_free;
	}
	profile__stats(run.profile, &st);
	if (!st.entries) {
		/* it exited after its recipe was found */
		fprintf(stderr, "labelprof: no such process: %d\n", env.pid);
		goto out_free;
	}
	err = put_labels(&run);
	if (err) {
		fprintf(stderr, "labelprof: cannot write the labels: %s\n", strerror(-err));
		goto out_free;
	}
	if (run.unallocated == run.threads)
		fprintf(stderr,
			"labelprof: no thread of pid %d has touched the labels library's TLS yet: "
			"none has set a label\n",
			env.pid);
	ret = 0;

out_free:
	profile__free(run.profile);
	free(run.sets);
	otel_labels__proc_clear(&otel_proc);
	otel_labels__free(otel);
	return ret;
}
