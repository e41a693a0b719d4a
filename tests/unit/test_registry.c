// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The process registry on real processes: one memory-map read per event
 * shared by every module, the lifecycle records, follow-up inspections,
 * quiet recipes, forgetting, records owned by a module, and a sample's
 * unknown process. Recipes go to a recording target instead of BPF.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/clock.h"
#include "proc/maps.h"
#include "registry/module.h"
#include "registry/registry.h"

#define TEST_RECORD_TYPE 200

/* What the recording target was told. */
struct target_log {
	unsigned int recipes;
	pid_t last_pid;
	struct lp_recipe last;
	__u64 exec_seq; /* what exec_seq answers */
};

/* What the test modules saw, and what they answer. */
struct module_log {
	unsigned int inspections[PROC_FIRST_SAMPLE + 1];
	unsigned int ends[2];
	unsigned int opens, closes, records, states_seen;
	struct maps *maps_seen[2]; /* the views' maps of the last inspection, per module */
	int answer;		   /* inspect's return value */
	pid_t last_pid;
};

static struct target_log tlog;
static struct module_log mlog;

static int set_recipe(void *ctx, pid_t pid, const struct lp_recipe *r)
{
	tlog.recipes++;
	tlog.last_pid = pid;
	tlog.last = *r;
	return 0;
}

static __u64 exec_seq(void *ctx, pid_t pid)
{
	return tlog.exec_seq;
}

static bool samples(void *ctx, pid_t pid)
{
	return true;
}

struct test_state {
	unsigned int inspections; /* of this process, by this module */
};

static int mod_open(const struct registry_env *env, void **mod)
{
	mlog.opens++;
	*mod = &mlog;
	return 0;
}

static void mod_close(void *mod)
{
	mlog.closes++;
}

static int inspect_common(int which, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct test_state *st = state;

	assert_non_null(v->maps);
	assert_true(maps__count(v->maps) > 0);
	mlog.maps_seen[which] = v->maps;
	mlog.last_pid = v->pid;
	st->inspections++;
	if (which == 0)
		mlog.states_seen = st->inspections;
	return mlog.answer;
}

static int first_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	mlog.inspections[v->cause]++;
	return inspect_common(0, state, v, recipe);
}

static int second_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	int ret = inspect_common(1, state, v, recipe);

	/* never labels: the first module's finding alone makes a process labelled */
	return ret < 0 ? ret : ret & ~PROC_LABELS;
}

static void first_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct test_state *st = state;

	mlog.ends[how]++;
	st->inspections = 0;
}

static void first_record(void *mod, const void *rec, size_t size)
{
	mlog.records++;
}

static const struct proc_module first_module = {
	.name = "first",
	.state_size = sizeof(struct test_state),
	.open = mod_open,
	.close = mod_close,
	.inspect = first_inspect,
	.end = first_end,
	.record_type = TEST_RECORD_TYPE,
	.handle_record = first_record,
};

static const struct proc_module second_module = {
	.name = "second",
	.state_size = sizeof(struct test_state),
	.inspect = second_inspect,
};

static int absent_open(const struct registry_env *env, void **mod)
{
	return -ENODEV;
}

static int absent_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	fail_msg("a module that has no part in the session was asked");
	return 0;
}

static const struct proc_module absent_module = {
	.name = "absent",
	.open = absent_open,
	.inspect = absent_inspect,
};

static const struct proc_module *const test_modules[] = {&first_module, &absent_module,
							 &second_module, NULL};

static struct registry *new_registry(void)
{
	struct registry_opts o = {
		.target = {.set_recipe = set_recipe, .exec_seq = exec_seq, .samples = samples},
		.modules = test_modules,
		.max_processes = 16,
	};
	struct registry *r;
	int err;

	memset(&tlog, 0, sizeof(tlog));
	memset(&mlog, 0, sizeof(mlog));
	r = registry__new(&o, &err);
	assert_non_null(r);
	assert_int_equal(mlog.opens, 1);
	return r;
}

static pid_t start_child(void)
{
	pid_t child = fork();

	assert_true(child >= 0);
	if (!child) {
		/* a failed assertion leaves the test without stopping its child */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	return child;
}

static void stop_child(pid_t child)
{
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
}

static void event(struct registry *r, __u32 type, pid_t pid)
{
	struct lp_proc_event ev = {.hdr = {type, sizeof(ev)}, .tgid = pid, .tid = pid};

	registry__handle_record(r, &ev, sizeof(ev));
}

static struct registry_stats stats(struct registry *r)
{
	struct registry_stats st;

	registry__stats(r, &st);
	return st;
}

/* Every module of one inspection sees the same maps, read once. */
static void test_one_read_per_event(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();

	mlog.answer = PROC_SETTLED;
	tlog.exec_seq = 7;
	assert_int_equal(registry__scan(r, &child, 1), 0);
	assert_int_equal(mlog.inspections[PROC_SCAN], 1);
	assert_ptr_equal(mlog.maps_seen[0], mlog.maps_seen[1]);
	assert_int_equal(stats(r).maps_reads, 1);
	assert_int_equal(stats(r).tracked, 1);
	assert_int_equal(tlog.recipes, 1);
	assert_int_equal(tlog.last_pid, child);
	assert_int_equal(tlog.last.exec_seq, 7);

	event(r, LP_EVENT_EXEC, child);
	assert_int_equal(mlog.ends[PROC_END_EXEC], 1);
	assert_int_equal(mlog.inspections[PROC_EXEC], 1);
	event(r, LP_EVENT_EXEC_MAP, child);
	assert_int_equal(mlog.inspections[PROC_MAPPED], 1);
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_int_equal(mlog.inspections[PROC_UNKNOWN], 1);
	/* one read per event, whatever the number of modules */
	assert_int_equal(stats(r).maps_reads, 4);
	assert_int_equal(stats(r).resolves, 4);
	/* the state lives across events of one process, emptied by the end of an image */
	assert_int_equal(mlog.states_seen, 3);
	registry__free(r);
	assert_int_equal(mlog.closes, 1);
	/* what the registry still tracked was ended with it */
	assert_int_equal(mlog.ends[PROC_END_EXIT], 1);
	stop_child(child);
}

/* An exit ends the image and forgets the process; a gone one is not tracked. */
static void test_exit_and_gone(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();

	mlog.answer = PROC_SETTLED;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_int_equal(stats(r).tracked, 1);
	event(r, LP_EVENT_EXIT, child);
	assert_int_equal(mlog.ends[PROC_END_EXIT], 1);
	assert_int_equal(stats(r).tracked, 0);
	stop_child(child);
	/* the pid no longer runs: no module is asked, nothing is installed */
	tlog.recipes = 0;
	mlog.inspections[PROC_UNKNOWN] = 0;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_int_equal(mlog.inspections[PROC_UNKNOWN], 0);
	assert_int_equal(tlog.recipes, 0);
	assert_int_equal(stats(r).tracked, 0);
	registry__free(r);
}

static void wait_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * A known process an inspection finds gone keeps its modules' state: its
 * last samples, queued behind the inspection, are still to be resolved.
 * Its exit event (after those samples) ends it.
 */
static void test_gone_until_exit(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();

	mlog.answer = PROC_SETTLED;
	memset(mlog.ends, 0, sizeof(mlog.ends));
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_int_equal(stats(r).tracked, 1);
	stop_child(child);
	event(r, LP_EVENT_EXEC_MAP, child);
	assert_int_equal(mlog.ends[PROC_END_EXIT], 0);
	assert_int_equal(stats(r).tracked, 1);
	event(r, LP_EVENT_EXIT, child);
	assert_int_equal(mlog.ends[PROC_END_EXIT], 1);
	assert_int_equal(stats(r).tracked, 0);
	registry__free(r);
}

/*
 * After an exec, follow-ups run while no module has settled (5, 10, 20 ms
 * ...), and stop once one has.
 */
static void test_follow_ups(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();
	int due;

	mlog.answer = 0;
	event(r, LP_EVENT_EXEC, child);
	due = registry__next_due_ms(r);
	assert_true(due >= 0 && due <= 5);
	wait_ms(due + 1);
	registry__tick(r);
	assert_int_equal(mlog.inspections[PROC_FOLLOW_UP], 1);
	due = registry__next_due_ms(r);
	assert_true(due > 0 && due <= 10);
	mlog.answer = PROC_LABELS | PROC_SETTLED;
	wait_ms(due + 1);
	registry__tick(r);
	assert_int_equal(mlog.inspections[PROC_FOLLOW_UP], 2);
	assert_int_equal(registry__next_due_ms(r), -1);
	assert_true(registry__labelled(r, child));
	assert_int_equal(stats(r).labelled, 1);
	assert_int_equal(stats(r).labelled_seen, 1);
	event(r, LP_EVENT_EXIT, child);
	assert_int_equal(stats(r).labelled, 0);
	assert_int_equal(stats(r).labelled_seen, 1);
	registry__free(r);
	stop_child(child);
}

static void exec_at(struct registry *r, pid_t pid, __u64 ktime_ns)
{
	struct lp_proc_event ev = {.hdr = {LP_EVENT_EXEC, sizeof(ev)},
				   .ktime_ns = ktime_ns,
				   .tgid = pid,
				   .tid = pid};

	registry__handle_record(r, &ev, sizeof(ev));
}

/*
 * An exec's delay runs from the exec, or from the start of sampling if that
 * is later; execs handled before sampling delayed no sample.
 */
static void test_exec_delays(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();
	__u64 before = now_ns(), started, t;

	mlog.answer = PROC_SETTLED;
	exec_at(r, child, before);
	assert_int_equal(stats(r).execs, 0);
	wait_ms(30);
	started = now_ns();
	registry__sampling_started(r);
	/* an exec of long ago counts from the start of sampling */
	exec_at(r, child, before);
	t = now_ns();
	assert_int_equal(stats(r).execs, 1);
	assert_true(stats(r).exec_delay_max_ns <= t - started);
	/* one 20 ms ago, after the start of sampling, counts from itself */
	wait_ms(30);
	exec_at(r, child, now_ns() - 20000000);
	assert_int_equal(stats(r).execs, 2);
	assert_true(stats(r).exec_delay_max_ns >= 20000000);
	assert_true(stats(r).exec_delay_sum_ns >= stats(r).exec_delay_max_ns);
	/* a timestamp after the handling (another clock's) is no delay, not a wrap */
	exec_at(r, child, now_ns() + 1000000000ull);
	assert_int_equal(stats(r).execs, 3);
	assert_true(stats(r).exec_delay_max_ns < 1000000000ull);
	registry__free(r);
	stop_child(child);
}

/* A process found by the scan gets follow-ups only if it has just started. */
static void test_scan_follow_ups(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child(), init = 1;

	mlog.answer = 0;
	assert_int_equal(registry__scan(r, &init, 1), 0);
	assert_int_equal(registry__next_due_ms(r), -1);
	assert_int_equal(registry__scan(r, &child, 1), 0);
	assert_true(registry__next_due_ms(r) >= 0);
	registry__free(r);
	stop_child(child);
}

/*
 * A recipe is quiet when no module found anything nor waits for anything:
 * its samples stop asking.
 */
static void test_quiet(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();

	mlog.answer = 0;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_true(tlog.last.flags & LP_RECIPE_QUIET);
	assert_true(tlog.last.exec_vm > 0);
	mlog.answer = PROC_PENDING;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_false(tlog.last.flags & LP_RECIPE_QUIET);
	mlog.answer = PROC_LABELS;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_false(tlog.last.flags & LP_RECIPE_QUIET);
	mlog.answer = -EAGAIN;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_false(tlog.last.flags & LP_RECIPE_QUIET);
	assert_int_equal(stats(r).retries, 1);
	mlog.answer = -EINVAL;
	event(r, LP_EVENT_UNKNOWN_PID, child);
	assert_int_equal(stats(r).errors, 1);
	registry__free(r);
	stop_child(child);
}

/* Records that are not lifecycle records go to the module that owns their type. */
static void test_module_records(void **state)
{
	struct registry *r = new_registry();
	struct lp_event_hdr h = {TEST_RECORD_TYPE, sizeof(h)};
	struct lp_event_hdr other = {TEST_RECORD_TYPE + 1, sizeof(h)};
	struct lp_proc_event short_exec = {.hdr = {LP_EVENT_EXEC, sizeof(short_exec)}};

	registry__handle_record(r, &h, sizeof(h));
	registry__handle_record(r, &other, sizeof(other));
	assert_int_equal(mlog.records, 1);
	/* a lifecycle record cut short is ignored */
	registry__handle_record(r, &short_exec, sizeof(short_exec) - 1);
	assert_int_equal(stats(r).resolves, 0);
	registry__free(r);
}

/* A sample's process the registry does not know is inspected on that sample. */
static void test_first_sample(void **state)
{
	struct registry *r = new_registry();
	pid_t child = start_child();

	mlog.answer = PROC_SETTLED;
	/* no module gives snapshots here */
	assert_int_equal(registry__snapshot(r, child), 0);
	assert_int_equal(mlog.inspections[PROC_FIRST_SAMPLE], 1);
	assert_int_equal(stats(r).tracked, 1);
	/* known now: no second inspection */
	registry__snapshot(r, child);
	assert_int_equal(mlog.inspections[PROC_FIRST_SAMPLE], 1);
	registry__free(r);
	stop_child(child);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_read_per_event),
		cmocka_unit_test(test_exit_and_gone),
		cmocka_unit_test(test_gone_until_exit),
		cmocka_unit_test(test_follow_ups),
		cmocka_unit_test(test_exec_delays),
		cmocka_unit_test(test_scan_follow_ups),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_module_records),
		cmocka_unit_test(test_first_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
