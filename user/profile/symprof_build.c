// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Profile of addresses -> symbolized profile. Each (snapshot, stack) pair is
 * resolved once, and each (snapshot, address, flags) once, whatever the
 * number of samples sharing them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "profile/profile.h"
#include "symbolize/symbols.h"
#include "profile/symprof.h"

/* A map from two 64-bit keys to an id, open addressing; id 0 marks an empty slot. */
struct pair_map {
	struct pair_slot {
		__u64 a, b;
		__u32 id;
	} *slots;
	size_t cap, used;
};

static size_t pair_hash(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;

	return h ^ (h >> 29);
}

static struct pair_slot *pair_find(const struct pair_map *m, __u64 a, __u64 b)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = pair_hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct pair_slot *s = &m->slots[i];

		if (!s->id || (s->a == a && s->b == b))
			return s;
	}
}

static int pair_put(struct pair_map *m, __u64 a, __u64 b, __u32 id)
{
	struct pair_slot *s;

	if ((m->used + 1) * 2 > m->cap) {
		struct pair_map n = {.cap = m->cap ? m->cap * 2 : 1024};
		size_t i;

		n.slots = calloc(n.cap, sizeof(*n.slots));
		if (!n.slots)
			return -ENOMEM;
		for (i = 0; i < m->cap; i++)
			if (m->slots[i].id)
				*pair_find(&n, m->slots[i].a, m->slots[i].b) = m->slots[i];
		n.used = m->used;
		free(m->slots);
		*m = n;
	}
	s = pair_find(m, a, b);
	if (!s->id)
		m->used++;
	*s = (struct pair_slot){a, b, id};
	return 0;
}

struct builder {
	struct symprof *sp;
	struct symbolizer *sym;
	struct pair_map stacks;	   /* (profile stack id, snapshot) -> stack id */
	struct pair_map locations; /* (address, snapshot << 1 | return address) -> location id */
	__u32 *frames;
	size_t frames_cap;
	struct sp_line *lines;
	size_t lines_cap;
};

static __u32 frame_mapping(struct builder *b, const struct sym_frame *f)
{
	struct sp_mapping m = {
		.file = symprof__cstring(b->sp, f->module),
		.build_id = f->build_id ? symprof__string(b->sp, f->build_id, f->build_id_len) : 0,
		.kernel = f->kernel,
	};

	if (!f->module)
		return 0;
	if (f->kernel) {
		/* kallsyms gives no ranges: the kernel mapping covers the kernel half */
		m.start = 0;
		m.limit = SP_UNKNOWN;
	} else {
		m.start = f->map_start;
		m.limit = f->map_end;
		m.file_offset = f->map_offset;
	}
	return symprof__mapping(b->sp, &m);
}

static int reserve_lines(struct builder *b, size_t n)
{
	struct sp_line *nl;

	if (n <= b->lines_cap)
		return 0;
	nl = realloc(b->lines, n * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	b->lines = nl;
	b->lines_cap = n;
	return 0;
}

static __u32 frame_location(struct builder *b, const struct sym_frame *f)
{
	struct sp_location loc = {
		.mapping = frame_mapping(b, f),
		.kernel = f->kernel,
		.address = f->address,
		.module_offset = f->module ? f->module_offset : SP_UNKNOWN,
		.function_offset = f->function ? f->offset : SP_UNKNOWN,
	};
	size_t i, n = f->line_count ? f->line_count : !!f->function;

	if (reserve_lines(b, n)) {
		b->sp->error = -ENOMEM;
		return 0;
	}
	for (i = 0; i < f->line_count; i++) {
		const struct sym_line *l = &f->lines[i];
		struct sp_function fn = {
			.name = symprof__cstring(b->sp, l->function),
			.file = symprof__cstring(b->sp, l->file),
			.start_line = l->start_line,
		};

		/* the symbol table's name, when DWARF names the physical function otherwise */
		if (i == f->line_count - 1 && f->function && l->function &&
		    strcmp(f->function, l->function))
			fn.system_name = symprof__cstring(b->sp, f->function);
		if (!fn.name)
			fn.name = symprof__cstring(b->sp, i == f->line_count - 1 ? f->function : NULL);
		b->lines[i] = (struct sp_line){symprof__function(b->sp, &fn), l->line, l->column};
	}
	if (!f->line_count && f->function) {
		struct sp_function fn = {.name = symprof__cstring(b->sp, f->function)};

		b->lines[0] = (struct sp_line){.function = symprof__function(b->sp, &fn)};
	}
	return symprof__location(b->sp, &loc, b->lines, n);
}

static __u32 resolve(struct builder *b, __u32 snapshot, __u64 ip, bool kernel, bool ret)
{
	/* kernel addresses do not depend on the snapshot */
	__u64 key_b = ((kernel ? 0 : (__u64)snapshot) << 2) | (kernel << 1) | ret;
	struct pair_slot *slot = pair_find(&b->locations, ip, key_b);
	struct sym_frame f;
	__u32 id;

	if (slot && slot->id)
		return slot->id;
	if (!b->sym) {
		memset(&f, 0, sizeof(f));
		f.address = ip;
		f.kernel = kernel;
	} else if (kernel) {
		symbolizer__resolve_kernel(b->sym, ip, ret ? SYM_RETURN_ADDRESS : 0, &f);
	} else {
		symbolizer__resolve_user(b->sym, snapshot, ip, ret ? SYM_RETURN_ADDRESS : 0, &f);
	}
	id = frame_location(b, &f);
	if (id && pair_put(&b->locations, ip, key_b, id))
		b->sp->error = -ENOMEM;
	return id;
}

static __u32 build_stack(struct builder *b, const struct profile_sample *s)
{
	size_t n = s->kstack_len + s->ustack_len, i, k = 0;
	struct pair_slot *slot = pair_find(&b->stacks, s->stack, s->snapshot);
	__u32 id;

	if (!n)
		return 0;
	if (slot && slot->id)
		return slot->id;
	if (n > b->frames_cap) {
		__u32 *nf = realloc(b->frames, n * sizeof(*nf));

		if (!nf) {
			b->sp->error = -ENOMEM;
			return 0;
		}
		b->frames = nf;
		b->frames_cap = n;
	}
	/* every frame but the very leaf is a return address */
	for (i = 0; i < s->kstack_len; i++, k++)
		b->frames[k] = resolve(b, 0, s->kstack[i], true, k > 0);
	for (i = 0; i < s->ustack_len; i++, k++)
		b->frames[k] = resolve(b, s->snapshot, s->ustack[i], false, k > 0);
	id = symprof__stack(b->sp, b->frames, n);
	if (id && pair_put(&b->stacks, s->stack, s->snapshot, id))
		b->sp->error = -ENOMEM;
	return id;
}

/* The process's name and executable, captured while it lived. */
static void add_process(struct builder *b, const struct profile_sample *s)
{
	struct sp_process proc = {.pid = s->pid};
	const char *exe = NULL, *comm = NULL;

	if (symprof__process(b->sp, s->pid))
		return;
	if (b->sym && s->snapshot && !symbolizer__process(b->sym, s->snapshot, &exe, &comm)) {
		proc.executable = symprof__cstring(b->sp, exe);
		proc.name = symprof__cstring(b->sp, comm);
	}
	if (symprof__set_process(b->sp, &proc))
		b->sp->error = -ENOMEM;
}

static int add_sample(const struct profile_sample *s, void *ctx)
{
	struct builder *b = ctx;
	struct sp_label labels[LP_MAX_LABELS];
	struct sp_sample out = {
		.pid = s->pid,
		.tid = s->tid,
		.comm = symprof__string(b->sp, s->comm, s->comm_len),
		.status = s->status,
		.count = s->count,
	};
	size_t i, n = s->label_count < LP_MAX_LABELS ? s->label_count : LP_MAX_LABELS;

	for (i = 0; i < n; i++) {
		labels[i].key = symprof__string(b->sp, s->labels[i].key, s->labels[i].key_len);
		labels[i].value = symprof__string(b->sp, s->labels[i].value, s->labels[i].value_len);
		labels[i].source = s->labels[i].source;
	}
	out.label_set = symprof__label_set(b->sp, labels, n);
	out.stack = build_stack(b, s);
	add_process(b, s);
	return symprof__add_sample(b->sp, &out);
}

struct symprof *symprof__from_profile(const struct profile *p, struct symbolizer *sym,
				      const struct symprof_build_opts *opts)
{
	struct builder b = {.sym = sym};
	struct profile_stats st;
	struct utsname u;

	b.sp = symprof__new();
	if (!b.sp)
		return NULL;
	if (opts) {
		b.sp->meta.frequency_hz = opts->frequency_hz;
		b.sp->meta.period_ns = opts->frequency_hz ? 1000000000ull / opts->frequency_hz : 0;
		b.sp->meta.start_time_unix_ns = opts->start_time_unix_ns;
		b.sp->meta.duration_ns = opts->duration_ns;
		if (opts->counters)
			b.sp->meta.counters = *opts->counters;
		b.sp->meta.unwind_misses = opts->unwind_misses;
	}
	profile__stats(p, &st);
	b.sp->meta.samples_received = st.samples;
	b.sp->meta.records_rejected = st.rejected;
	b.sp->meta.samples_dropped = st.dropped;
	if (!uname(&u))
		b.sp->meta.host_name = symprof__cstring(b.sp, u.nodename);

	if (profile__for_each(p, add_sample, &b) || symprof__error(b.sp)) {
		symprof__free(b.sp);
		b.sp = NULL;
	}
	free(b.stacks.slots);
	free(b.locations.slots);
	free(b.frames);
	free(b.lines);
	return b.sp;
}
