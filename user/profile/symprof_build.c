// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Profile of addresses -> symbolized profile. Each (snapshot, stack) pair is
 * resolved once, and each (snapshot, address, flags) once, whatever the
 * number of samples sharing them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "lib/array.h"
#include "lib/pairmap.h"
#include "profile/profile.h"
#include "proc/container.h"
#include "symbolize/demangle.h"
#include "symbolize/symbols.h"
#include "profile/symprof.h"

struct builder {
	struct symprof *sp;
	struct symbolizer *sym;
	bool containers;
	/* ids (never 0) stored as pointers */
	struct pairmap stacks;	  /* (profile stack id, snapshot) -> stack id */
	struct pairmap locations; /* (address, snapshot << 1 | return address) -> location id */
	struct pairmap demangled; /* (symbol's string id, 0) -> its demangled name's string id */
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

/* The string id of name demangled (of name itself when not mangled), once per name. */
static __u32 demangled(struct builder *b, const char *name)
{
	__u32 id = symprof__cstring(b->sp, name), out;
	char *d;

	if (!id)
		return 0;
	out = (uintptr_t)pairmap__get(&b->demangled, id, 0);
	if (out)
		return out;
	d = sym_demangle(name);
	out = d ? symprof__cstring(b->sp, d) : id;
	free(d);
	if (out && pairmap__put(&b->demangled, id, 0, (void *)(uintptr_t)out))
		b->sp->error = -ENOMEM;
	return out ? out : id;
}

/*
 * A function DWARF names name (NULL: unknown) and the symbol table symbol:
 * demangled, the symbol as linked kept as its system name when it reads
 * otherwise (mangled, or a compiler clone "foo.constprop.0" of the function
 * DWARF names "foo").
 */
static __u32 function(struct builder *b, const char *name, const char *symbol, const char *file,
		      __u32 start_line)
{
	struct sp_function fn = {
		.system_name = symprof__cstring(b->sp, symbol),
		.file = symprof__cstring(b->sp, file),
		.start_line = start_line,
	};

	/*
	 * DWARF may name a function without its scope ("__introsort_loop<...>"
	 * for std::__introsort_loop<...>): a mangled symbol names it in full.
	 */
	fn.name = demangled(b, symbol);
	if (fn.name == fn.system_name)
		fn.name = demangled(b, name ? name : symbol);
	if (fn.system_name == fn.name)
		fn.system_name = 0;
	return symprof__function(b->sp, &fn);
}

static __u32 frame_location(struct builder *b, const struct sym_frame *f)
{
	struct sp_location loc = {
		.mapping = frame_mapping(b, f),
		.kernel = f->kernel,
		.kind = f->kind,
		.address = f->address,
		.module_offset = f->module ? f->module_offset : SP_UNKNOWN,
		.function_offset = f->function ? f->offset : SP_UNKNOWN,
	};
	size_t i, n = f->line_count ? f->line_count : !!f->function;

	if (ARRAY_RESERVE(b->lines, b->lines_cap, n)) {
		b->sp->error = -ENOMEM;
		return 0;
	}
	for (i = 0; i < f->line_count; i++) {
		const struct sym_line *l = &f->lines[i];
		/* the function that holds the address: as the symbol table names it */
		const char *symbol = i == f->line_count - 1 && f->function ? f->function
									: l->function;

		b->lines[i] = (struct sp_line){
			function(b, l->function, symbol, l->file, l->start_line), l->line, l->column};
	}
	if (!f->line_count && f->function)
		b->lines[0] = (struct sp_line){.function = function(b, f->function, f->function,
								      NULL, 0)};
	return symprof__location(b->sp, &loc, b->lines, n);
}

static __u32 resolve(struct builder *b, __u32 snapshot, __u64 ip, bool kernel, bool ret)
{
	/* kernel addresses do not depend on the snapshot */
	__u64 key_b = ((kernel ? 0 : (__u64)snapshot) << 2) | (kernel << 1) | ret;
	__u32 id = (uintptr_t)pairmap__get(&b->locations, ip, key_b);
	struct sym_frame f;

	if (id)
		return id;
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
	if (id && pairmap__put(&b->locations, ip, key_b, (void *)(uintptr_t)id))
		b->sp->error = -ENOMEM;
	return id;
}

static __u32 build_stack(struct builder *b, const struct profile_sample *s)
{
	size_t n = s->kstack_len + s->ustack_len, i, k = 0;
	__u32 id = (uintptr_t)pairmap__get(&b->stacks, s->stack, s->snapshot);

	if (!n)
		return 0;
	if (id)
		return id;
	if (ARRAY_RESERVE(b->frames, b->frames_cap, n)) {
		b->sp->error = -ENOMEM;
		return 0;
	}
	/*
	 * Every frame but each stack's leaf is a return address: the user
	 * stack's leaf is where the thread was interrupted (or entered the
	 * kernel), exact even under kernel frames; one step back from a
	 * function's first instruction would name the function before it.
	 */
	for (i = 0; i < s->kstack_len; i++, k++)
		b->frames[k] = resolve(b, 0, s->kstack[i], true, i > 0);
	for (i = 0; i < s->ustack_len; i++, k++)
		b->frames[k] = resolve(b, s->snapshot, s->ustack[i], false, i > 0);
	id = symprof__stack(b->sp, b->frames, n);
	if (id && pairmap__put(&b->stacks, s->stack, s->snapshot, (void *)(uintptr_t)id))
		b->sp->error = -ENOMEM;
	return id;
}

/* The process's name, executable and container, captured while it lived. */
static void add_process(struct builder *b, const struct profile_sample *s)
{
	struct sp_process proc = {.pid = s->pid};
	const char *exe = NULL, *comm = NULL;
	const struct container_info *ci;

	if (symprof__process(b->sp, s->pid))
		return;
	if (b->sym && s->snapshot && !symbolizer__process(b->sym, s->snapshot, &exe, &comm)) {
		proc.executable = symprof__cstring(b->sp, exe);
		proc.name = symprof__cstring(b->sp, comm);
	}
	ci = b->containers && b->sym && s->snapshot ? symbolizer__container(b->sym, s->snapshot)
						       : NULL;
	if (ci) {
		proc.container_id = symprof__cstring(b->sp, ci->id[0] ? ci->id : NULL);
		proc.pod_uid = symprof__cstring(b->sp, ci->pod_uid[0] ? ci->pod_uid : NULL);
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
	struct builder b = {.sym = sym, .containers = opts && opts->containers};
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
	pairmap__free(&b.stacks);
	pairmap__free(&b.locations);
	pairmap__free(&b.demangled);
	free(b.frames);
	free(b.lines);
	return b.sp;
}
