// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* labelprof labels: the label set every thread of a process has, now. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "lib/compiler.h"
#include "cli/cli.h"
#include "cmd/commands.h"
#include "format/fmt.h"
#include "profile/otel_labels.h"
#include "profile/profile.h"
#include "proc/stat.h"
#include "sampling/sampler.h"
#include "proc/tls.h"

struct labels_env {
	pid_t pid;
	bool json;
	unsigned int verbose; /* -v given this often */
};

enum {
	OPT_JSON = 0x100,
};

static const struct argp_option labels_options[] = {
	{"json", OPT_JSON, NULL, 0, "Write one JSON object instead of text", 0},
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
};

static int on_thread(void *ctx, const void *data, size_t size)
{
	struct labels_run *run = ctx;
	int err = profile__add_sample(run->profile, data, size);

	/* a malformed record is counted by the profile and left out */
	return err == -EINVAL ? 0 : err;
}

static int put_thread_text(const struct profile_sample *s, void *ctx)
{
	struct labels_run *run = ctx;
	const char *why, *word = outcome(s->status, &why);
	size_t i;

	run->threads++;
	if (s->status & LP_ST_DTV_UNALLOCATED)
		run->unallocated++;
	printf("tid %" PRIu32 " comm ", s->tid);
	fmt__text_bytes(stdout, s->comm, s->comm_len, " :", SIZE_MAX);
	printf(": %s", word);
	if (s->status & LP_ST_LABELS_READ)
		printf(", %zu label%s", s->label_count, s->label_count == 1 ? "" : "s");
	if (why)
		printf(" (%s)", why);
	putchar('\n');
	for (i = 0; i < s->label_count; i++) {
		fputs("  ", stdout);
		if (s->labels[i].source != LP_SRC_CUSTOM_LABELS)
			printf("[%s] ", fmt__label_source_name(s->labels[i].source));
		/* a key's '=' is escaped: the first '=' of the line ends the key */
		fmt__text_bytes(stdout, s->labels[i].key, s->labels[i].key_len, "=", SIZE_MAX);
		putchar('=');
		fmt__text_bytes(stdout, s->labels[i].value, s->labels[i].value_len, NULL, SIZE_MAX);
		putchar('\n');
	}
	return ferror(stdout) ? -EIO : 0;
}

static int put_thread_json(const struct profile_sample *s, void *ctx)
{
	struct labels_run *run = ctx;
	const char *why;

	if (run->threads++)
		putchar(',');
	if (s->status & LP_ST_DTV_UNALLOCATED)
		run->unallocated++;
	printf("\n{\"tid\":%" PRIu32 ",\"comm\":", s->tid);
	fmt__json_bytes(stdout, s->comm, s->comm_len);
	fputs(",\"labels\":", stdout);
	fmt__json_labels(stdout, s->labels, s->label_count);
	fputs(",\"label_sources\":", stdout);
	fmt__json_label_sources(stdout, s->labels, s->label_count);
	printf(",\"status\":\"%s\",\"flags\":", outcome(s->status, &why));
	fmt__json_status(stdout, s->status);
	putchar('}');
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
		fputs(",\"threads\":[", stdout);
		err = profile__for_each(run->profile, put_thread_json, run);
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
		err = profile__for_each(run->profile, put_thread_text, run);
	}
	if (!err && fflush(stdout))
		err = -errno;
	return err;
}

/* The recipe of env->pid, or a one-line reason on stderr why there is none. */
static int find_recipe(const struct labels_env *env, struct lp_recipe *r, struct tls_diag *diag)
{
	pid_t tgid = proc_tgid(env->pid);
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
	/* diag quotes the process's file names: escaped */
	err = tls__resolve_process(NULL, env->pid, r, diag);
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

int cmd_labels(int argc, char **argv)
{
	static struct labels_env env;
	static const struct argp argp = {
		.options = labels_options,
		.parser = parse_labels_opt,
		.args_doc = "PID",
		.doc = "Shows the custom labels (and a Go program's goroutine pprof labels) every "
		       "thread of process PID has set right now. "
		       "A BPF task iterator reads them where the threads keep them, with the "
		       "recipe 'labelprof record' uses, without stopping the process.\v"
		       "Text output: a line naming the label form and the file that publishes "
		       "it, then per thread 'tid TID comm COMM: STATUS, N labels' and one "
		       "'  KEY=VALUE' line per label, sorted by key, '  [SOURCE] KEY=VALUE' for "
		       "a label that does not come from custom labels (otel_thread: the "
		       "OpenTelemetry thread context; otel_process: the process context's "
		       "resource attributes, on every thread; go_pprof). Bytes that are not "
		       "printable UTF-8, '\\', '=' in keys and ' ' or ':' in COMM are written "
		       "as \\xHH.\n\n"
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
		       "with byte strings escaped as in docs/json-format.md.\n\n"
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
	err = sampler__read_threads(env.pid, &recipe, env.verbose >= 2, on_thread, &run, errbuf,
				    sizeof(errbuf));
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
	otel_labels__proc_clear(&otel_proc);
	otel_labels__free(otel);
	return ret;
}
