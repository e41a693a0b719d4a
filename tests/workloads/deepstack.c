// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * deepstack: threads whose user stacks have a known shape, to check that a
 * profiler's frame-pointer walk gives exactly what the kernel's walker gives.
 *
 * Every thread calls descend() DEPTH times from its entry function, then
 * stays in one leaf function until the workload stops:
 *
 *   burn threads   deep_burn_thread → descend × DEPTH → burn_leaf (CPU, no calls)
 *   sys threads    deep_sys_thread → descend × DEPTH → sys_leaf (a loop of
 *                  read(2) of /dev/zero issued by its own syscall instruction:
 *                  most samples are taken in kernel mode, and their user stack
 *                  starts at sys_leaf)
 *   libc threads   deep_libc_thread → descend × DEPTH → libc_leaf (the same
 *                  loop through glibc's read(): the user stack starts in libc,
 *                  whose code has no frame pointers)
 *   main (-m)      main → descend × DEPTH → burn_leaf
 *   cut threads    deep_cut_thread → descend × DEPTH → cut_leaf (-c: one
 *                  thread per way of breaking the frame-record chain: cut_leaf
 *                  points the saved frame pointer of the record CUT records
 *                  above its own elsewhere, burns CPU, and restores the record
 *                  before it returns; see enum cut_mode)
 *
 * Each descend() frame holds FRAME_BYTES of padding (and a little more on
 * odd levels), so deep stacks span many pages. Leaves are entered once and
 * loop: no sample of a leaf falls in its prologue or epilogue. The report
 * (JSON) names each thread's tid and kind; then "ready" goes to stderr.
 */
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

#define DS_MAX_THREADS 64
#define DS_MAX_DEPTH   100000
#define DS_MAX_FRAME   (1u << 20)
#define DS_CHUNK       4096 /* bytes per read(2) */

enum kind { KIND_BURN, KIND_SYS, KIND_LIBC, KIND_CUT };

static const char *const kind_names[] = {"burn", "sys", "libc", "cut"};

/*
 * Where the broken record points. Far: pages mapped apart from any stack.
 * Stack: pages of cut_leaf's own frame, above its stack pointer, where a
 * walker that copies the stack a page at a time finds them.
 */
enum cut_mode {
	CUT_PROT_NONE,	     /* far, a PROT_NONE page */
	CUT_UNTOUCHED,	     /* far, a read-write page never touched (not present) */
	CUT_STRADDLE,	     /* far, a record whose second half is PROT_NONE */
	CUT_STACK_PROT_NONE, /* stack, a page made PROT_NONE */
	CUT_STACK_DONTNEED,  /* stack, a page dropped with MADV_DONTNEED */
	CUT_STACK_STRADDLE,  /* stack, a record { straddling record, FAKE_RET } */
	CUT_KERNEL,	     /* a kernel address */
	CUT_LOW,	     /* an unmapped low address (first page table entry) */
	CUT_FAKE,	     /* heap, a misaligned record { 0, FAKE_RET } */
	CUT_LOOP,	     /* stack, a record { itself, LOOP_RET } */
	CUT_MODES
};

static const char *const cut_names[] = {"prot_none",	  "untouched",
					"straddle",	  "stack_prot_none",
					"stack_dontneed", "stack_straddle",
					"kernel",	  "low",
					"fake",		  "loop"};

/* Return addresses of the fake records: mapped nowhere. */
#define FAKE_RET    0xfa4e0000ull
#define LOOP_RET    0x100c0000ull
#define KERNEL_ADDR 0xffffffff81000000ull
#define LOW_ADDR    0x1000ull

struct thread {
	enum kind kind;
	enum cut_mode cut;
	pthread_t thread;
	int tid;
};

static struct {
	unsigned int burn, sys, libc;
	bool cut_threads;
	unsigned long depth, cut;
	size_t frame_bytes;
	bool main_burns;
	struct wl_run run;
} env = {.burn = 2, .depth = 40, .frame_bytes = 64};

static struct thread threads[DS_MAX_THREADS];
static struct thread main_thread = {.kind = KIND_BURN};
/* pages: PROT_NONE, read-write never touched, read-write, PROT_NONE */
static unsigned char *cut_pages;
static unsigned char *fake_record;
static long page_size;
static unsigned int nthreads;
static int zero_fd = -1;
static volatile int stop;
static atomic_uint arrived;
static unsigned int expected;
static pthread_mutex_t tids_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tids_cond = PTHREAD_COND_INITIALIZER;
static unsigned int tids_known;

/*
 * A thread reached its leaf, or the main thread wrote the report: the last
 * one says the workload is ready.
 */
static void arrive(void)
{
	if (atomic_fetch_add(&arrived, 1) + 1 == expected)
		wl_ready("deepstack");
}

WL_BURN uint64_t burn_leaf(uint64_t x);
WL_BURN uint64_t burn_leaf(uint64_t x)
{
	arrive();
	while (!stop)
		x = wl_spin(100000, x);
	return x;
}

WL_BURN uint64_t sys_leaf(uint64_t x);
WL_BURN uint64_t sys_leaf(uint64_t x)
{
	char buf[DS_CHUNK];

	arrive();
	while (!stop) {
		long ret;

#if defined(__x86_64__)
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_read), "D"((long)zero_fd), "S"(buf),
				   "d"((long)sizeof(buf))
				 : "rcx", "r11", "memory");
#else
		ret = syscall(SYS_read, zero_fd, buf, sizeof(buf));
#endif
		x += ret == sizeof(buf);
	}
	return x;
}

WL_BURN uint64_t libc_leaf(uint64_t x);
WL_BURN uint64_t libc_leaf(uint64_t x)
{
	char buf[DS_CHUNK];

	arrive();
	while (!stop)
		x += read(zero_fd, buf, sizeof(buf)) == sizeof(buf);
	return x;
}

/*
 * Where the broken record's saved frame pointer goes. stack is two pages of
 * cut_leaf's frame: the first readable, the second made unreadable here for
 * the stack modes.
 */
static uintptr_t cut_target(enum cut_mode mode, unsigned char *stack,
			    volatile uintptr_t *loop_record)
{
	uintptr_t end = (uintptr_t)stack + (uintptr_t)page_size;
	volatile uintptr_t *straddle = (volatile uintptr_t *)(end - 8);
	volatile uintptr_t *fake = (volatile uintptr_t *)(end - 32);

	switch (mode) {
	case CUT_PROT_NONE:
		return (uintptr_t)cut_pages;
	case CUT_UNTOUCHED:
		return (uintptr_t)cut_pages + (uintptr_t)page_size;
	case CUT_STRADDLE:
		return (uintptr_t)cut_pages + 3 * (uintptr_t)page_size - 8;
	case CUT_STACK_PROT_NONE:
	case CUT_STACK_STRADDLE:
		if (mprotect(stack + page_size, (size_t)page_size, PROT_NONE))
			wl_die("deepstack: mprotect: %s", strerror(errno));
		if (mode == CUT_STACK_PROT_NONE)
			return end;
		*straddle = end; /* readable: the saved frame pointer of a record */
		fake[0] = (uintptr_t)straddle;
		fake[1] = FAKE_RET;
		return (uintptr_t)fake;
	case CUT_STACK_DONTNEED:
		if (madvise(stack + page_size, (size_t)page_size, MADV_DONTNEED))
			wl_die("deepstack: madvise: %s", strerror(errno));
		return end;
	case CUT_KERNEL:
		return KERNEL_ADDR;
	case CUT_LOW:
		return LOW_ADDR;
	case CUT_FAKE:
		return (uintptr_t)fake_record;
	default:
		return (uintptr_t)loop_record;
	}
}

WL_BURN uint64_t cut_leaf(uint64_t x, enum cut_mode mode);
WL_BURN uint64_t cut_leaf(uint64_t x, enum cut_mode mode)
{
	volatile uintptr_t loop_record[2];
	/* a frame record: { saved frame pointer, return address } */
	volatile uintptr_t *record = __builtin_frame_address(0);
	unsigned char *area = alloca(3 * (size_t)page_size);
	unsigned char *stack = (unsigned char *)(((uintptr_t)area + (uintptr_t)page_size - 1) &
						 ~((uintptr_t)page_size - 1));
	uintptr_t saved;

	/* before the chain is broken: what arrive() calls may walk it */
	arrive();
	memset(stack, 0x5a, 2 * (size_t)page_size);
	for (unsigned long i = 0; i < env.cut; i++)
		record = (volatile uintptr_t *)record[0];
	loop_record[0] = (uintptr_t)loop_record;
	loop_record[1] = LOOP_RET;
	saved = record[0];
	record[0] = cut_target(mode, stack, loop_record);
	while (!stop)
		x = wl_spin(100000, x);
	record[0] = saved;
	if (mprotect(stack + page_size, (size_t)page_size, PROT_READ | PROT_WRITE))
		wl_die("deepstack: mprotect: %s", strerror(errno));
	return x + loop_record[1];
}

/*
 * One frame per level: levels DEPTH..1, the leaf called from level 1. The
 * work after the call keeps it from becoming a tail call.
 */
WL_BURN uint64_t descend(unsigned long level, const struct thread *t, uint64_t x);
WL_BURN uint64_t descend(unsigned long level, const struct thread *t, uint64_t x)
{
	volatile char *pad = alloca(env.frame_bytes + (level & 1) * 48 + 1);

	pad[0] = (char)level;
	if (level > 1)
		x = descend(level - 1, t, x ^ level);
	else if (t->kind == KIND_SYS)
		x = sys_leaf(x);
	else if (t->kind == KIND_LIBC)
		x = libc_leaf(x);
	else if (t->kind == KIND_CUT)
		x = cut_leaf(x, t->cut);
	else
		x = burn_leaf(x);
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x + (uint64_t)pad[0];
}

/* The body of every thread entry: inlined, and descend() is not a tail call. */
static inline __attribute__((always_inline)) void *thread_start(struct thread *t)
{
	uint64_t x;

	pthread_mutex_lock(&tids_lock);
	t->tid = wl_gettid();
	tids_known++;
	pthread_cond_broadcast(&tids_cond);
	pthread_mutex_unlock(&tids_lock);
	x = descend(env.depth, t, (uint64_t)t->tid);
	__asm__ volatile("" : "+r"(x) : : "memory");
	return (void *)(uintptr_t)x;
}

WL_BURN void *deep_burn_thread(void *arg);
WL_BURN void *deep_burn_thread(void *arg)
{
	return thread_start(arg);
}

WL_BURN void *deep_sys_thread(void *arg);
WL_BURN void *deep_sys_thread(void *arg)
{
	return thread_start(arg);
}

WL_BURN void *deep_libc_thread(void *arg);
WL_BURN void *deep_libc_thread(void *arg)
{
	return thread_start(arg);
}

WL_BURN void *deep_cut_thread(void *arg);
WL_BURN void *deep_cut_thread(void *arg)
{
	return thread_start(arg);
}

/* Stops the workload after --seconds, on SIGINT/SIGTERM or at end of stdin. */
static void *waiter(void *arg)
{
	wl_wait(env.run.duration, true);
	stop = 1;
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: deepstack [OPTIONS]   (stops when stdin reaches end of file)\n"
		"  -t, --threads N        threads burning CPU in burn_leaf (default 2)\n"
		"  -s, --sys-threads N    threads in a read(2) loop by their own syscall\n"
		"  -l, --libc-threads N   threads in a read(2) loop through glibc\n"
		"  -D, --depth N          descend() frames below each thread's entry (default 40)\n"
		"  -f, --frame-bytes N    padding per descend() frame (default 64)\n"
		"  -m, --main             the main thread burns too (entry: main)\n"
		"  -c, --cut-threads      one thread per way of breaking the chain\n"
		"  -C, --cut N            records above cut_leaf's before the broken one\n"
		"                         (default DEPTH / 2)\n"
		"  -d, --seconds SEC      stop after SEC seconds\n"
		"  -o, --output FILE      report: pid, depth and each thread's tid and kind\n");
}

static void start_threads(unsigned int n, enum kind kind, pthread_attr_t *attr)
{
	static void *(*const entry[])(void *) = {deep_burn_thread, deep_sys_thread,
						 deep_libc_thread, deep_cut_thread};

	for (unsigned int i = 0; i < n; i++) {
		struct thread *t = &threads[nthreads++];
		int err;

		t->kind = kind;
		t->cut = (enum cut_mode)i;
		err = pthread_create(&t->thread, attr, entry[kind], t);
		if (err)
			wl_die("deepstack: pthread_create: %s", strerror(err));
	}
}

static void report(void)
{
	FILE *f = wl_open_report(env.run.output);

	fprintf(f,
		"{\"pid\":%d,\"depth\":%lu,\"frame_bytes\":%zu,\"cut\":%lu,"
		"\"fake_ret\":%llu,\"loop_ret\":%llu,\"threads\":[",
		(int)getpid(), env.depth, env.frame_bytes, env.cut, FAKE_RET, LOOP_RET);
	if (env.main_burns)
		fprintf(f, "{\"tid\":%d,\"kind\":\"main\"}%s", (int)getpid(), nthreads ? "," : "");
	for (unsigned int i = 0; i < nthreads; i++) {
		fprintf(f, "%s{\"tid\":%d,\"kind\":\"%s\"", i ? "," : "", threads[i].tid,
			kind_names[threads[i].kind]);
		if (threads[i].kind == KIND_CUT)
			fprintf(f, ",\"mode\":\"%s\"", cut_names[threads[i].cut]);
		fputc('}', f);
	}
	fputs("]}\n", f);
	wl_close_report(f, env.run.output);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"threads", required_argument, NULL, 't'},
		{"sys-threads", required_argument, NULL, 's'},
		{"libc-threads", required_argument, NULL, 'l'},
		{"depth", required_argument, NULL, 'D'},
		{"frame-bytes", required_argument, NULL, 'f'},
		{"main", no_argument, NULL, 'm'},
		{"cut-threads", no_argument, NULL, 'c'},
		{"cut", required_argument, NULL, 'C'},
		{"seconds", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	pthread_attr_t attr;
	pthread_t wait_thread;
	size_t stack_size;
	uint64_t sink = 0;
	bool cut_set = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "t:s:l:D:f:mcC:d:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			env.burn = (unsigned int)wl_parse_u64(optarg, "thread count");
			break;
		case 's':
			env.sys = (unsigned int)wl_parse_u64(optarg, "thread count");
			break;
		case 'l':
			env.libc = (unsigned int)wl_parse_u64(optarg, "thread count");
			break;
		case 'D':
			env.depth = wl_parse_u64(optarg, "depth");
			break;
		case 'f':
			env.frame_bytes = wl_parse_u64(optarg, "frame bytes");
			break;
		case 'm':
			env.main_burns = true;
			break;
		case 'c':
			env.cut_threads = true;
			break;
		case 'C':
			env.cut = wl_parse_u64(optarg, "cut");
			cut_set = true;
			break;
		default:
			wl_run_option(&env.run, "deepstack", c, optarg, usage);
		}
	}
	wl_no_operands("deepstack", argc, argv);
	if ((uint64_t)env.burn + env.sys + env.libc + (env.cut_threads ? CUT_MODES : 0) >
	    DS_MAX_THREADS)
		wl_die("deepstack: at most %d threads", DS_MAX_THREADS);
	if (env.depth < 1 || env.depth > DS_MAX_DEPTH)
		wl_die("deepstack: depth must be 1..%d", DS_MAX_DEPTH);
	if (!cut_set)
		env.cut = env.depth / 2;
	if (env.cut >= env.depth)
		wl_die("deepstack: --cut must be below the depth (%lu)", env.depth);
	if (env.frame_bytes > DS_MAX_FRAME)
		wl_die("deepstack: frame bytes must be at most %u", DS_MAX_FRAME);
	if (env.main_burns) {
		struct rlimit rl;

		/* the main thread's stack grows up to RLIMIT_STACK */
		if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    env.depth * (env.frame_bytes + 512) + (1u << 20) > rl.rlim_cur)
			wl_die("deepstack: --main needs a stack of %lu bytes, the limit is %llu",
			       env.depth * (env.frame_bytes + 512) + (1u << 20),
			       (unsigned long long)rl.rlim_cur);
	}
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0)
		wl_die("deepstack: /dev/zero: %s", strerror(errno));
	page_size = sysconf(_SC_PAGESIZE);
	if (env.cut_threads) {
		cut_pages = mmap(NULL, 4 * (size_t)page_size, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (cut_pages == MAP_FAILED)
			wl_die("deepstack: mmap: %s", strerror(errno));
		if (mprotect(cut_pages + page_size, 2 * (size_t)page_size, PROT_READ | PROT_WRITE))
			wl_die("deepstack: mprotect: %s", strerror(errno));
		/* the straddling record's first half is readable */
		memset(cut_pages + 2 * page_size, 0x5a, (size_t)page_size);
		/* a misaligned record { 0, FAKE_RET }, far from any stack */
		fake_record = malloc(64);
		if (!fake_record)
			wl_die("deepstack: out of memory");
		memset(fake_record, 0, 64);
		memcpy(fake_record + 8 + 1, &(uint64_t){FAKE_RET}, 8);
		fake_record += 1;
	}
	wl_install_stop_handlers();
	/* every leaf, and the report */
	expected = env.burn + env.sys + env.libc + (env.cut_threads ? CUT_MODES : 0) +
		   (env.main_burns ? 1 : 0) + 1;

	/* Room for every frame (ASan makes them larger), at least the default. */
	stack_size = env.depth * (env.frame_bytes + 512) + (1u << 20);
	if (stack_size < (8u << 20))
		stack_size = 8u << 20;
	pthread_attr_init(&attr);
	err = pthread_attr_setstacksize(&attr, stack_size);
	if (err)
		wl_die("deepstack: stack size %zu: %s", stack_size, strerror(err));
	start_threads(env.burn, KIND_BURN, &attr);
	start_threads(env.sys, KIND_SYS, &attr);
	start_threads(env.libc, KIND_LIBC, &attr);
	start_threads(env.cut_threads ? CUT_MODES : 0, KIND_CUT, &attr);
	pthread_attr_destroy(&attr);

	/* The report must be complete before the last leaf says "ready". */
	pthread_mutex_lock(&tids_lock);
	while (tids_known < nthreads)
		pthread_cond_wait(&tids_cond, &tids_lock);
	pthread_mutex_unlock(&tids_lock);
	report();
	arrive();

	err = pthread_create(&wait_thread, NULL, waiter, NULL);
	if (err)
		wl_die("deepstack: pthread_create: %s", strerror(err));
	if (env.main_burns)
		sink = descend(env.depth, &main_thread, sink);
	pthread_join(wait_thread, NULL);
	for (unsigned int i = 0; i < nthreads; i++)
		pthread_join(threads[i].thread, NULL);
	__asm__ volatile("" : : "r"(sink));
	close(zero_fd);
	if (fake_record)
		free(fake_record - 1);
	if (cut_pages)
		munmap(cut_pages, 4 * (size_t)page_size);
	return 0;
}
