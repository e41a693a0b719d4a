// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "labelprof.skel.h"
#include "lib/compiler.h"
#include "lib/msg.h"
#include "sampling/ringreader.h"
#include "sampling/sampler.h"
#include "sampling/verifier.h"
#include "unwind/unwind.h"

/*
 * The default ring buffer holds RINGBUF_MS of samples of RINGBUF_SAMPLE bytes
 * (a sample with two deep stacks and a few labels) from every CPU, at least
 * RINGBUF_MIN_BYTES. A reader thread drains it into a queue in userspace
 * (ringreader.h), woken by BPF once a quarter of it is pending: the other
 * three quarters, 75 ms, are the headroom for the reader to be scheduled on
 * a busy machine. It is no larger because every record is written to it: a
 * ring larger than the caches makes each write miss (bpf_ringbuf_output of an
 * 80-byte record took 0.7-0.9 us into 8 MiB, 0.3-0.5 us into 64-256 KiB on
 * the benchmarks' VM), and its written pages count twice in RSS (they are
 * mapped twice, for the wrap-around). 256 KiB, about an L2 cache, is the
 * floor: a smaller ring saves little more, and a burst (every CPU sampling at
 * once, a storm of process events) still fits.
 */
#define RINGBUF_SAMPLE	  2048u
#define RINGBUF_MS	  100u
#define RINGBUF_MIN_BYTES ((size_t)SAMPLER_RINGBUF_MIN_KIB << 10)
#define RINGBUF_MAX_BYTES ((size_t)SAMPLER_RINGBUF_MAX_MIB << 20)
/*
 * The queue holds QUEUE_SECONDS of such samples from every CPU (1-64 MiB),
 * for while the caller's loop is busy elsewhere (building unwind tables of a
 * large library, writing a profile); past it the ring fills and BPF counts
 * what it drops. Only what is queued takes memory.
 */
#define QUEUE_SECONDS	2u
#define QUEUE_MIN_BYTES (1ul << 20)
#define QUEUE_MAX_BYTES (64ul << 20)

struct sampler {
	struct labelprof_bpf *skel;
	struct ringreader *reader;
	struct bpf_link **links; /* one per CPU, NULL where the CPU is offline */
	int *perf_fds;
	int ncpus; /* possible CPUs */
	int nattached;
	int cgroup_fd;
	unsigned int freq_hz;
	enum lp_unwind_mode unwind_mode;
	enum lp_filter_mode filter_mode;
};

static bool verbose_libbpf;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	/* libbpf's messages repeat ours in less helpful words unless asked for */
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void sampler__libbpf_messages(bool verbose)
{
	verbose_libbpf = verbose;
	libbpf_set_print(print_libbpf);
}

static bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

/* Names what is missing, in words a user can act on; NULL when all is there. */
static const char *missing_privileges(void)
{
	if (geteuid() == 0)
		return NULL;
	if (!has_cap(CAP_BPF) && !has_cap(CAP_SYS_ADMIN))
		return "CAP_BPF";
	if (!has_cap(CAP_PERFMON) && !has_cap(CAP_SYS_ADMIN))
		return "CAP_PERFMON";
	if (!has_cap(CAP_SYS_PTRACE))
		return "CAP_SYS_PTRACE";
	return NULL;
}

static size_t round_pow2(size_t v)
{
	size_t p = 4096;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * Frames per stack: bpf_get_stack's limit, kernel.perf_event_max_stack (read
 * once), which the BPF walker of user stacks keeps to as well.
 */
static __u32 stack_depth(void)
{
	unsigned int v = LP_MAX_STACK_DEPTH;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = LP_MAX_STACK_DEPTH;
		fclose(f);
	}
	return v < 1 ? 1 : v > LP_MAX_STACK_DEPTH ? LP_MAX_STACK_DEPTH : v;
}

static size_t clamp_size(unsigned long long v, size_t min, size_t max)
{
	return v < min ? min : v > max ? max : v;
}

static size_t default_ringbuf_bytes(const struct sampler *s, const struct sampler_opts *o)
{
	return clamp_size((unsigned long long)o->freq_hz * s->ncpus * RINGBUF_SAMPLE * RINGBUF_MS /
				  1000,
			  RINGBUF_MIN_BYTES, RINGBUF_MAX_BYTES);
}

static size_t max_queued_bytes(const struct sampler *s, const struct sampler_opts *o)
{
	return clamp_size((unsigned long long)o->freq_hz * s->ncpus * RINGBUF_SAMPLE *
				  QUEUE_SECONDS,
			  QUEUE_MIN_BYTES, QUEUE_MAX_BYTES);
}

static const char *const opt_flags[] = {
	[SAMPLER_OPT_FREQ] = "--freq",
	[SAMPLER_OPT_MAX_LABELS] = "--max-labels",
	[SAMPLER_OPT_MAX_KEY_LEN] = "--max-key-len",
	[SAMPLER_OPT_MAX_VALUE_LEN] = "--max-value-len",
	[SAMPLER_OPT_RINGBUF] = "--ringbuf-size",
	[SAMPLER_OPT_UNWIND_MEMORY] = "--unwind-memory",
};

const char *sampler_opt__flag(enum sampler_opt opt)
{
	return opt_flags[opt];
}

int sampler_opts__check(const struct sampler_opts *o, enum sampler_opt *bad, char *err,
			size_t err_len)
{
	const struct {
		enum sampler_opt opt;
		unsigned long long v, min, max;
	} bounds[] = {
		{SAMPLER_OPT_FREQ, o->freq_hz, 1, SAMPLER_MAX_FREQ_HZ},
		{SAMPLER_OPT_MAX_LABELS, o->max_labels, 1, LP_MAX_LABELS},
		{SAMPLER_OPT_MAX_KEY_LEN, o->max_key_len, 1, LP_MAX_KEY_LEN},
		{SAMPLER_OPT_MAX_VALUE_LEN, o->max_value_len, 1, LP_MAX_VALUE_LEN},
		/* 0 stands for the size the frequency needs */
		{SAMPLER_OPT_RINGBUF,
		 o->ringbuf_bytes ? o->ringbuf_bytes : SAMPLER_MIN_RINGBUF_BYTES,
		 SAMPLER_MIN_RINGBUF_BYTES, (unsigned long long)SAMPLER_MAX_RINGBUF_MIB << 20},
		/* 0 stands for the default */
		{SAMPLER_OPT_UNWIND_MEMORY,
		 o->unwind_memory_mib ? o->unwind_memory_mib : UNWIND_DEFAULT_MEMORY_MIB,
		 UNWIND_MIN_MEMORY_MIB, UNWIND_MAX_MEMORY_MIB},
	};
	size_t i, label_bytes;

	for (i = 0; i < ARRAY_SIZE(bounds); i++) {
		*bad = bounds[i].opt;
		if (bounds[i].v < bounds[i].min) {
			msg__set(err, err_len, "at least %llu", bounds[i].min);
			return -EINVAL;
		}
		if (bounds[i].v > bounds[i].max) {
			msg__set(err, err_len, "at most %llu", bounds[i].max);
			return -EINVAL;
		}
	}
	/* the per-CPU scratch buffer the BPF program builds a sample in bounds the labels too */
	label_bytes = (size_t)o->max_labels *
		      (sizeof(struct lp_label_hdr) + o->max_key_len + o->max_value_len);
	if (label_bytes > LP_MAX_LABEL_BYTES) {
		/* the limit moved from its default is the one to blame, the value's first */
		*bad = o->max_value_len != LP_DEFAULT_MAX_VALUE_LEN ? SAMPLER_OPT_MAX_VALUE_LEN
		       : o->max_key_len != LP_DEFAULT_MAX_KEY_LEN   ? SAMPLER_OPT_MAX_KEY_LEN
								    : SAMPLER_OPT_MAX_LABELS;
		msg__set(err, err_len,
			 "labels x (4 + key + value) must be at most %d bytes: %u x (4 + %u + %u) "
			 "is %zu",
			 LP_MAX_LABEL_BYTES, o->max_labels, o->max_key_len, o->max_value_len,
			 label_bytes);
		return -EINVAL;
	}
	*bad = SAMPLER_OPT_NONE;
	return 0;
}

/* Pages of unwind rows the budget allows, whole shards. */
static __u32 unwind_pages(const struct sampler_opts *o)
{
	__u64 mib = o->unwind_memory_mib ? o->unwind_memory_mib : UNWIND_DEFAULT_MEMORY_MIB;
	__u64 shards = (mib << 20) / (LP_UNWIND_SHARD_PAGES * sizeof(struct lp_unwind_page));

	return (shards ? shards : 1) * LP_UNWIND_SHARD_PAGES;
}

/* The pid filter's entries: the pids given, and room for the children it may follow. */
static __u32 pid_filter_entries(const struct sampler_opts *o)
{
	return o->pid_count + (o->follow_children ? 4096 : 16);
}

/* Preallocated mapping lists: for what a pid filter lets through, else a fixed number. */
static __u32 prealloc_procs(const struct sampler_opts *o, unsigned int max_processes)
{
	__u32 n = o->filter_mode == LP_FILTER_PIDS ? pid_filter_entries(o)
						   : SAMPLER_UNWIND_PREALLOC_PROCS;

	return n < max_processes ? n : max_processes;
}

/* prealloc: the kernel refuses perf_event programs hash maps allocated at run time */
static void configure(struct sampler *s, const struct sampler_opts *o, bool prealloc)
{
	struct labelprof_bpf *skel = s->skel;
	unsigned int max_processes =
		o->max_processes ? o->max_processes : SAMPLER_DEFAULT_MAX_PROCESSES;

	skel->rodata->max_labels = o->max_labels;
	skel->rodata->max_key_len = o->max_key_len;
	skel->rodata->max_value_len = o->max_value_len;
	skel->rodata->read_labels = o->read_labels;
	skel->rodata->kernel_stacks = o->kernel_stacks;
	skel->rodata->user_stacks = o->user_stacks;
	skel->rodata->filter_mode = o->filter_mode;
	skel->rodata->follow_children = o->follow_children;
	skel->rodata->stack_depth = stack_depth();
	skel->rodata->unwind_mode = o->unwind_mode;
	s->unwind_mode = o->unwind_mode;
	s->filter_mode = o->filter_mode;

	bpf_map__set_max_entries(skel->maps.scratch, s->ncpus);
	bpf_map__set_max_entries(skel->maps.recipes, max_processes);
	bpf_map__set_max_entries(skel->maps.execs, max_processes);
	bpf_map__set_max_entries(
		skel->maps.events,
		round_pow2(o->ringbuf_bytes ? o->ringbuf_bytes : default_ringbuf_bytes(s, o)));
	if (o->unwind_mode != LP_UNWIND_FP) {
		bpf_map__set_max_entries(skel->maps.unwind_shards,
					 unwind_pages(o) / LP_UNWIND_SHARD_PAGES);
		bpf_map__set_max_entries(skel->maps.unwind_fences, unwind_pages(o));
		bpf_map__set_max_entries(skel->maps.unwind_objects, SAMPLER_UNWIND_MAX_OBJECTS);
		bpf_map__set_max_entries(skel->maps.unwind_procs,
					 prealloc ? prealloc_procs(o, max_processes)
						  : max_processes);
		if (prealloc)
			bpf_map__set_map_flags(skel->maps.unwind_procs, 0);
	} else {
		/* unused: preallocated (one entry), which needs no kernel of 6.1 */
		bpf_map__set_map_flags(skel->maps.unwind_procs, 0);
	}
	if (o->filter_mode == LP_FILTER_PIDS)
		bpf_map__set_max_entries(skel->maps.pid_filter, pid_filter_entries(o));
}

static int open_cgroup(struct sampler *s, const char *path, char *err, size_t err_len)
{
	__u32 zero = 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		msg__set(err, err_len,
			 "cgroup %s: %s (give a cgroup v2 directory, e.g. "
			 "/sys/fs/cgroup/system.slice/foo.service)",
			 path, strerror(errno));
		return -errno;
	}
	s->cgroup_fd = fd;
	if (bpf_map__update_elem(s->skel->maps.cgroup_filter, &zero, sizeof(zero), &fd, sizeof(fd),
				 BPF_ANY)) {
		msg__set(err, err_len, "cgroup %s: not a cgroup v2 directory (%s)", path,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

static int attach_perf_events(struct sampler *s, unsigned int freq_hz, char *err, size_t err_len)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		/* cpu-clock counts nanoseconds: a fixed period gives an exact rate */
		.sample_period = 1000000000ull / freq_hz,
	};
	int cpu, fd, last_errno = 0;

	for (cpu = 0; cpu < s->ncpus; cpu++) {
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			last_errno = errno;
			break;
		}
		s->perf_fds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
		if (!s->links[cpu]) {
			last_errno = errno;
			break;
		}
		s->nattached++;
	}
	if (last_errno || !s->nattached) {
		msg__set(err, err_len,
			 "cannot open a cpu-clock perf event on CPU %d: %s (check "
			 "/proc/sys/kernel/perf_event_paranoid and CONFIG_PERF_EVENTS)",
			 cpu, strerror(last_errno ? last_errno : ENODEV));
		return -(last_errno ? last_errno : ENODEV);
	}
	return 0;
}

static const char *const kernel_feature_titles[] = {
	[SAMPLER_KF_RINGBUF] = "BPF ring buffer (5.8)",
	[SAMPLER_KF_LOOP] = "bpf_loop helper (5.17)",
	[SAMPLER_KF_LIFECYCLE] = "BTF tracepoints sched_process_exec, _fork, _exit (5.5)",
	[SAMPLER_KF_RUNTIME_HASH] = "hash maps allocated at run time in perf_event programs (6.1)",
};

const char *sampler__kernel_feature_title(enum sampler_kernel_feature f)
{
	return f < ARRAY_SIZE(kernel_feature_titles) ? kernel_feature_titles[f] : "?";
}

/* Loads a perf_event program looking up a hash map created with map_flags: 0, or -errno. */
static int load_hash_user(__u32 map_flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = map_flags);
	/* *(u32 *)(r10 - 4) = 0; r0 = lookup(map, r10 - 4); r0 = 0; exit */
	struct bpf_insn insns[] = {
		{.code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4},
		{.code = BPF_LD | BPF_IMM | BPF_DW,
		 .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD},
		{},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int map_fd, prog_fd, ret;

	map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(__u32), sizeof(__u32), 1, &mo);
	if (map_fd < 0)
		return -errno;
	insns[1].imm = map_fd;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns, ARRAY_SIZE(insns),
				NULL);
	ret = prog_fd < 0 ? -errno : 0;
	if (prog_fd >= 0)
		close(prog_fd);
	close(map_fd);
	return ret;
}

int sampler__probe_kernel(enum sampler_kernel_feature f, char *why, size_t why_len)
{
	static const char *const lifecycle_tps[] = {"sched_process_exec", "sched_process_fork",
						    "sched_process_exit"};
	size_t i;
	int ret;

	msg__set(why, why_len, "%s", "");
	switch (f) {
	case SAMPLER_KF_RINGBUF:
		return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	case SAMPLER_KF_LOOP:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL);
	case SAMPLER_KF_LIFECYCLE:
		for (i = 0; i < ARRAY_SIZE(lifecycle_tps); i++) {
			if (libbpf_find_vmlinux_btf_id(lifecycle_tps[i], BPF_TRACE_RAW_TP) < 0) {
				msg__set(why, why_len, "%s is not in the kernel's BTF",
					 lifecycle_tps[i]);
				return 0;
			}
		}
		return 1;
	case SAMPLER_KF_RUNTIME_HASH:
		/*
		 * Before 6.1 (the BPF memory allocator) the verifier refuses perf_event
		 * programs any hash map created BPF_F_NO_PREALLOC: one refused where a
		 * preallocated map is not says so.
		 */
		ret = load_hash_user(BPF_F_NO_PREALLOC);
		if (!ret)
			return 1;
		return load_hash_user(0) ? ret : 0;
	}
	return -EINVAL;
}

/* Why the BPF program did not load: the first kernel feature it lacks, else what it needs. */
static void load_error(int e, bool procs_prealloc, char *err, size_t err_len)
{
	char why[160];
	unsigned int f;

	for (f = SAMPLER_KF_RINGBUF; f <= SAMPLER_KF_RUNTIME_HASH; f++) {
		if (f == SAMPLER_KF_RUNTIME_HASH && procs_prealloc)
			continue;
		if (!sampler__probe_kernel(f, why, sizeof(why))) {
			msg__set(err, err_len,
				 "cannot load the BPF program: %s: this kernel has no %s%s%s (run "
				 "with -vv for the verifier's log)",
				 strerror(-e), kernel_feature_titles[f], why[0] ? ": " : "", why);
			return;
		}
	}
	/* (-v alone prints none of libbpf's messages) */
	msg__set(err, err_len,
		 "cannot load the BPF program: %s (this kernel has every feature labelprof "
		 "probes for: run with -vv for the verifier's log)",
		 strerror(-e));
}

int sampler__check_system(char *err, size_t err_len)
{
	const char *missing = missing_privileges();

	if (missing) {
		msg__set(err, err_len,
			 "not enough privileges: %s is missing (run as root, or grant CAP_BPF, "
			 "CAP_PERFMON and CAP_SYS_PTRACE; a service also wants CAP_DAC_READ_SEARCH "
			 "for other users' files, CAP_SYSLOG for kernel symbols and "
			 "CAP_CHECKPOINT_RESTORE for deleted files)",
			 missing);
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		msg__set(err, err_len,
			 "this kernel has no BTF (/sys/kernel/btf/vmlinux: %s); "
			 "labelprof needs CONFIG_DEBUG_INFO_BTF=y",
			 strerror(errno));
		return -ENOTSUP;
	}
	return 0;
}

struct sampler *sampler__open(const struct sampler_opts *o, sampler_event_fn fn, void *ctx,
			      char *err, size_t err_len)
{
	struct verifier_log *vlog = NULL;
	enum sampler_opt bad;
	struct sampler *s;
	char why[160];
	bool prealloc;
	size_t i;
	__u8 one = 1;
	int e;

	if (sampler_opts__check(o, &bad, why, sizeof(why))) {
		msg__set(err, err_len, "%s: %s", sampler_opt__flag(bad), why);
		return NULL;
	}
	if (sampler__check_system(err, err_len))
		return NULL;

	s = calloc(1, sizeof(*s));
	if (!s) {
		msg__set(err, err_len, "out of memory");
		return NULL;
	}
	s->cgroup_fd = -1;
	sampler__libbpf_messages(o->libbpf_messages);

	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		msg__set(err, err_len, "cannot count CPUs: %s", strerror(-s->ncpus));
		goto out_free;
	}
	s->links = calloc(s->ncpus, sizeof(*s->links));
	s->perf_fds = malloc(s->ncpus * sizeof(*s->perf_fds));
	if (!s->links || !s->perf_fds) {
		msg__set(err, err_len, "out of memory");
		goto out_free;
	}
	for (e = 0; e < s->ncpus; e++)
		s->perf_fds[e] = -1;

	s->skel = labelprof_bpf__open();
	if (!s->skel) {
		msg__set(err, err_len, "cannot open the BPF object: %s", strerror(errno));
		goto out_free;
	}
	/* a probe that fails preallocates too: that loads on any kernel */
	prealloc = o->unwind_prealloc ||
		   (o->unwind_mode != LP_UNWIND_FP &&
		    sampler__probe_kernel(SAMPLER_KF_RUNTIME_HASH, NULL, 0) != 1);
	configure(s, o, prealloc);
	if (prealloc && o->unwind_mode != LP_UNWIND_FP && o->verbose) {
		__u64 n = bpf_map__max_entries(s->skel->maps.unwind_procs);

		fprintf(stderr,
			"labelprof: the mapping lists of CFI unwinding are preallocated for %llu "
			"processes (%llu MiB)%s%s\n",
			(unsigned long long)n,
			(unsigned long long)(n * sizeof(struct lp_unwind_proc)) >> 20,
			o->unwind_prealloc ? "" : ": this kernel has no ",
			o->unwind_prealloc ? "" : kernel_feature_titles[SAMPLER_KF_RUNTIME_HASH]);
	}
	/* the task iterator is for sampler__read_threads only */
	bpf_program__set_autoload(s->skel->progs.read_threads, false);
	/* -vv wants libbpf's own log of a failure instead */
	if (o->verbose && !o->libbpf_messages)
		vlog = verifier_log__arm(s->skel->obj);
	e = labelprof_bpf__load(s->skel);
	if (e) {
		load_error(e, prealloc || o->unwind_mode == LP_UNWIND_FP, err, err_len);
		goto out_close;
	}
	verifier_log__print(vlog, stderr);
	verifier_log__free(vlog);
	vlog = NULL;
	if (o->filter_mode == LP_FILTER_CGROUP && open_cgroup(s, o->cgroup_path, err, err_len))
		goto out_close;
	for (i = 0; i < o->pid_count; i++) {
		if (bpf_map__update_elem(s->skel->maps.pid_filter, &o->pids[i], sizeof(__u32), &one,
					 sizeof(one), BPF_ANY)) {
			msg__set(err, err_len, "cannot add pid %d to the filter: %s", o->pids[i],
				 strerror(errno));
			goto out_close;
		}
	}

	s->reader = ringreader__new(bpf_map__fd(s->skel->maps.events), max_queued_bytes(s, o),
				    fn, ctx);
	if (!s->reader) {
		msg__set(err, err_len, "cannot set up the ring buffer: %s", strerror(errno));
		goto out_close;
	}
	/* lifecycle programs first, so no exec or exit is missed once sampling starts */
	if (labelprof_bpf__attach(s->skel)) {
		msg__set(
			err, err_len,
			"cannot attach the process lifecycle programs (BTF tracepoints "
			"sched_process_exec, _fork, _exit): %s (run with -v for libbpf's messages)",
			strerror(errno));
		goto out_close;
	}
	s->freq_hz = o->freq_hz;
	return s;

out_close:
	verifier_log__free(vlog);
	sampler__close(s);
	return NULL;
out_free:
	free(s->links);
	free(s->perf_fds);
	free(s);
	return NULL;
}

int sampler__start(struct sampler *s, char *err, size_t err_len)
{
	return attach_perf_events(s, s->freq_hz, err, err_len);
}

void sampler__stop(struct sampler *s)
{
	int cpu;

	for (cpu = 0; cpu < s->ncpus; cpu++) {
		/* a link destroys its perf event's attachment, not the fd */
		bpf_link__destroy(s->links[cpu]);
		s->links[cpu] = NULL;
		if (s->perf_fds[cpu] >= 0)
			close(s->perf_fds[cpu]);
		s->perf_fds[cpu] = -1;
	}
	s->nattached = 0;
}

void sampler__close(struct sampler *s)
{
	if (!s)
		return;
	sampler__stop(s);
	ringreader__free(s->reader);
	labelprof_bpf__destroy(s->skel);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	free(s->links);
	free(s->perf_fds);
	free(s);
}

int sampler__poll(struct sampler *s, int timeout_ms)
{
	return ringreader__poll(s->reader, timeout_ms);
}

int sampler__drain(struct sampler *s)
{
	return ringreader__drain(s->reader);
}

/* After a change of the recipes map: the BPF program's CPUs drop the recipes they keep. */
static void recipes_changed(struct sampler *s)
{
	__atomic_fetch_add(&s->skel->bss->recipes_gen, 1, __ATOMIC_SEQ_CST);
}

int sampler__set_recipe(struct sampler *s, __u32 tgid, const struct lp_recipe *r)
{
	int err = 0;

	if (bpf_map__update_elem(s->skel->maps.recipes, &tgid, sizeof(tgid), r, sizeof(*r),
				 BPF_ANY))
		err = -errno;
	recipes_changed(s);
	return err;
}

__u64 sampler__exec_seq(struct sampler *s, __u32 tgid)
{
	__u64 seq = 0;

	if (bpf_map__lookup_elem(s->skel->maps.execs, &tgid, sizeof(tgid), &seq, sizeof(seq), 0))
		return 0;
	return seq;
}

bool sampler__samples_tgid(struct sampler *s, __u32 tgid)
{
	__u8 one;

	return s->filter_mode != LP_FILTER_PIDS ||
	       !bpf_map__lookup_elem(s->skel->maps.pid_filter, &tgid, sizeof(tgid), &one,
				     sizeof(one), 0);
}

int sampler__unwind_maps(struct sampler *s, struct unwind_maps *m)
{
	struct labelprof_bpf *skel = s->skel;

	if (s->unwind_mode == LP_UNWIND_FP)
		return -ENOENT;
	m->shards = bpf_map__fd(skel->maps.unwind_shards);
	m->fences = bpf_map__fd(skel->maps.unwind_fences);
	m->objects = bpf_map__fd(skel->maps.unwind_objects);
	m->procs = bpf_map__fd(skel->maps.unwind_procs);
	m->counters = bpf_map__fd(skel->maps.unwind_counters);
	m->pages = bpf_map__max_entries(skel->maps.unwind_fences);
	return 0;
}

/* The per-CPU __u64 counters of map's one entry (size bytes a CPU), summed into out. */
static int read_percpu_sum(struct sampler *s, const struct bpf_map *map, void *out, size_t size)
{
	__u64 *sum = out, *percpu;
	__u32 zero = 0;
	size_t i, f, words = size / sizeof(__u64);

	percpu = calloc(s->ncpus, size);
	if (!percpu)
		return -ENOMEM;
	if (bpf_map__lookup_elem(map, &zero, sizeof(zero), percpu, s->ncpus * size, 0)) {
		free(percpu);
		return -errno;
	}
	memset(out, 0, size);
	for (i = 0; i < (size_t)s->ncpus; i++)
		for (f = 0; f < words; f++)
			sum[f] += percpu[i * words + f];
	free(percpu);
	return 0;
}

int sampler__read_counters(struct sampler *s, struct lp_counters *out)
{
	return read_percpu_sum(s, s->skel->maps.counters, out, sizeof(*out));
}

int sampler__read_map_counters(struct sampler *s, const char *map, void *out, size_t size)
{
	const struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, map);

	if (!m)
		return -ENOENT;
	if (bpf_map__value_size(m) != size)
		return -EINVAL;
	return read_percpu_sum(s, m, out, size);
}

int sampler__cpu_count(const struct sampler *s)
{
	return s->nattached;
}
