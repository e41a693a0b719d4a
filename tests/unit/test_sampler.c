// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sampler's mapping lists of CFI unwinding (user/sampling/sampler.c)
 * against this kernel, as root: its probe of hash maps allocated at run time
 * in perf_event programs says yes from 6.1 on, and the BPF program loads and
 * samples with the lists allocated at run time (where the kernel allows it)
 * and preallocated, sized as kernels before 6.1 get them: for what a pid
 * filter lets through, else SAMPLER_UNWIND_PREALLOC_PROCS.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>

#include "sampling/sampler.h"
#include "unwind/unwind.h"
#include "skip.h"

static int ignore_record(void *ctx, const void *data, size_t size)
{
	return 0;
}

static void need_root(void)
{
	if (geteuid())
		skip_because("the sampler loads BPF programs: run as root");
}

/* Opens and starts a sampler with o, and reads its mapping lists' map. */
static void open_with(struct sampler_opts *o, struct bpf_map_info *info)
{
	struct unwind_maps m = {};
	__u32 len = sizeof(*info);
	struct lp_unwind_proc proc = {};
	struct sampler *s;
	char err[512];
	__u32 self = getpid();

	s = sampler__open(o, ignore_record, NULL, err, sizeof(err));
	if (!s)
		fail_msg("sampler__open: %s", err);
	if (sampler__start(s, err, sizeof(err)))
		fail_msg("sampler__start: %s", err);
	assert_int_equal(sampler__unwind_maps(s, &m), 0);
	memset(info, 0, sizeof(*info));
	assert_int_equal(bpf_obj_get_info_by_fd(m.procs, info, &len), 0);
	/* an empty list: the walk finds no mapping and follows frame pointers */
	assert_int_equal(bpf_map_update_elem(m.procs, &self, &proc, BPF_ANY), 0);
	usleep(50 * 1000);
	sampler__stop(s);
	sampler__close(s);
}

static void test_probe(void **state)
{
	int major = 0, minor = 0, ret;
	struct utsname u;

	need_root();
	assert_int_equal(uname(&u), 0);
	assert_int_equal(sscanf(u.release, "%d.%d", &major, &minor), 2);
	ret = sampler__probe_kernel(SAMPLER_KF_RUNTIME_HASH, NULL, 0);
	print_message("kernel %s: hash maps allocated at run time in perf_event programs: %d\n",
		      u.release, ret);
	assert_true(ret >= 0);
	/* before 6.1 a distribution may have brought the allocator back: no answer is wrong */
	if (major > 6 || (major == 6 && minor >= 1))
		assert_int_equal(ret, 1);
}

static void test_runtime_allocated(void **state)
{
	pid_t self = getpid();
	struct sampler_opts o = SAMPLER_OPTS_INIT(99);
	struct bpf_map_info info;

	need_root();
	if (sampler__probe_kernel(SAMPLER_KF_RUNTIME_HASH, NULL, 0) != 1)
		skip_because("this kernel refuses perf_event programs hash maps allocated at run "
			     "time");
	o.filter_mode = LP_FILTER_PIDS;
	o.pids = &self;
	o.pid_count = 1;
	open_with(&o, &info);
	assert_int_equal(info.map_flags, BPF_F_NO_PREALLOC);
	assert_int_equal(info.max_entries, SAMPLER_DEFAULT_MAX_PROCESSES);
}

static void test_preallocated_pids(void **state)
{
	pid_t self = getpid();
	struct sampler_opts o = SAMPLER_OPTS_INIT(99);
	struct bpf_map_info info;

	need_root();
	o.filter_mode = LP_FILTER_PIDS;
	o.pids = &self;
	o.pid_count = 1;
	o.unwind_prealloc = true;
	open_with(&o, &info);
	assert_int_equal(info.map_flags, 0);
	/* the pid filter's size: the pid given and room for 16 */
	assert_int_equal(info.max_entries, 17);
}

static void test_preallocated_all(void **state)
{
	struct sampler_opts o = SAMPLER_OPTS_INIT(99);
	struct bpf_map_info info;

	need_root();
	o.unwind_prealloc = true;
	open_with(&o, &info);
	assert_int_equal(info.map_flags, 0);
	assert_int_equal(info.max_entries, SAMPLER_UNWIND_PREALLOC_PROCS);
	/* fewer processes tracked than that: no more lists */
	o.max_processes = 100;
	open_with(&o, &info);
	assert_int_equal(info.max_entries, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_runtime_allocated),
		cmocka_unit_test(test_preallocated_pids),
		cmocka_unit_test(test_preallocated_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
