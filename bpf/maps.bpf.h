/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What userspace sees through the skeleton (user/sampling/sampler.c): the
 * load-time settings (rodata), the generations it bumps with this program
 * (bss), and every map.
 */
#ifndef LABELPROF_MAPS_BPF_H
#define LABELPROF_MAPS_BPF_H

#include "scratch.bpf.h"

/* Fixed at load time (rodata): the verifier sees them as constants. */
const volatile __u32 max_labels = LP_DEFAULT_MAX_LABELS;
const volatile __u32 max_key_len = LP_DEFAULT_MAX_KEY_LEN;
const volatile __u32 max_value_len = LP_DEFAULT_MAX_VALUE_LEN;
const volatile bool read_labels = true;
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile __u32 stack_depth = LP_MAX_STACK_DEPTH; /* kernel.perf_event_max_stack */
const volatile __u32 ustack_words = LP_MAX_USTACK_WORDS; /* of the walks in BPF */
const volatile __u32 filter_mode = LP_FILTER_ALL;
const volatile bool follow_children = false;
const volatile __u64 hint_interval_ns = 1000000000ULL;
const volatile __u64 map_hint_interval_ns = 10000000ULL;
const volatile __u32 unwind_mode = LP_UNWIND_FP; /* enum lp_unwind_mode */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct lp_recipe);
} recipes SEC(".maps");

/*
 * Bumped after every change of recipes, and of execs for a tgid in recipes,
 * by this program and by userspace (sampler.c): a CPU keeps the recipe it
 * last looked up (struct lp_rcache) while this stays the same.
 */
__u64 recipes_gen;

/* Exec count per tgid: a recipe computed before the latest exec is stale. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* Bumped after every change of pid_filter, here and by userspace (see recipes_gen). */
__u64 pid_filter_gen;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* When a tgid without a recipe was last reported to userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} hinted SEC(".maps");

/* When a tgid last reported that its code mappings changed (LP_EVENT_EXEC_MAP). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} mapped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct lp_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_counters);
} counters SEC(".maps");

/*
 * CFI unwind tables (docs/design.md section 9): pages of rows in shards
 * created by userspace, every page's first pc, objects as ranges of pages,
 * and per process its text mappings. Sized at load by userspace.
 */
struct unwind_shard {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_UNWIND_SHARD_PAGES);
	/* sizes, not types: the value's BTF would be a declaration only */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct lp_unwind_page));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_shard);
} unwind_shards SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_fences SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_unwind_object);
} unwind_objects SEC(".maps");

/*
 * 8 KiB a process, allocated as processes come; kernels before 6.1 refuse
 * perf_event programs that, and userspace preallocates it there (sampler.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_unwind_counters);
} unwind_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_java_counters);
} java_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_v8_counters);
} v8_counters SEC(".maps");

/*
 * The thread state each Python thread was last found at: checked by its id
 * at every sample, looked for in its interpreter's list when stale.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} py_tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_py_counters);
} py_counters SEC(".maps");

/*
 * After a change of recipes, or of execs for a tgid in recipes: no CPU keeps
 * a recipe from before.
 */
static __always_inline void recipes_changed(void)
{
	__sync_fetch_and_add(&recipes_gen, 1);
}

static __always_inline struct lp_counters *get_counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
}

#endif /* LABELPROF_MAPS_BPF_H */
