// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer: per-process snapshots of executable mappings and perf maps,
 * per-file symbol tables and DWARF, and /proc/kallsyms.
 *
 * User addresses: file offset = ip - map.start + map.offset, then the PT_LOAD
 * segment holding that offset gives the ELF virtual address, which is looked
 * up in the symbols of .symtab and .dynsym (and of the separate debug file
 * when the file itself has no .symtab), plus synthesized "name@plt" entries,
 * and in the DWARF of the file or of its debug file (dwarf.c).
 *
 * Ownership: a snapshot holds a reference on each mapped file, and its perf
 * map; a file holds at most one descriptor (bounded by an LRU of open files),
 * at most one parsed symbol table with a cache of the lines DWARF gave, and
 * one DWARF handle (bounded together by bytes: DWARF handles go first, by
 * their own LRU, which also bounds their number, then symbol tables by
 * theirs). Snapshots are bounded in number and in mapping and perf map
 * entries, LRU too.
 *
 * This file holds the public API; files.c the files and their LRUs, symtab.c
 * the symbol tables and debug files, linecache.c the lines DWARF gave,
 * perfmap.c the perf maps, snapshot.c the snapshots, kallsyms.c the kernel's
 * symbols; symbols_int.h their shared types.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compiler.h"
#include "symbolize/dwarf.h"
#include "symbolize/symbols_int.h"

#define DEFAULT_MAX_SNAPSHOTS	 16384
#define DEFAULT_MAX_MAP_ENTRIES	 262144
#define DEFAULT_MAX_SYMBOL_BYTES (24u << 20)
#define DEFAULT_MAX_OPEN_FILES	 256
#define DEFAULT_MAX_DWARF_FILES	 32

/* ---- public API ------------------------------------------------------------------- */

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	if (opts)
		sym->opts = *opts;
	if (!sym->opts.max_snapshots)
		sym->opts.max_snapshots = DEFAULT_MAX_SNAPSHOTS;
	if (!sym->opts.max_map_entries)
		sym->opts.max_map_entries = DEFAULT_MAX_MAP_ENTRIES;
	if (!sym->opts.max_symbol_bytes)
		sym->opts.max_symbol_bytes = DEFAULT_MAX_SYMBOL_BYTES;
	if (!sym->opts.max_open_files)
		sym->opts.max_open_files = DEFAULT_MAX_OPEN_FILES;
	if (!sym->opts.max_dwarf_files)
		sym->opts.max_dwarf_files = DEFAULT_MAX_DWARF_FILES;
	list__init(&sym->snap_lru);
	list__init(&sym->sym_lru);
	list__init(&sym->fd_lru);
	list__init(&sym->dwarf_lru);
	return sym;
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	while (!list__empty(&sym->snap_lru))
		snapshot__free(sym, container_of(sym->snap_lru.next, struct snapshot, node));
	sym_file__free(sym, sym->vdso);
	interp__free(sym);
	pairmap__free(&sym->snaps);
	pairmap__free(&sym->files);
	free(sym->kernel.syms);
	free(sym->kernel.names);
	free(sym);
}

__u32 symbolizer__snapshot(struct symbolizer *sym, __u32 pid, const struct maps *maps)
{
	struct snapshot *s = snapshot__new(sym, pid, maps);

	return s ? s->id : 0;
}

bool symbolizer__snapshot_current(struct symbolizer *sym, __u32 snapshot)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);

	if (!s || !s->attached)
		return false;
	list__touch(&sym->snap_lru, &s->node);
	return true;
}

void symbolizer__snapshot_end(struct symbolizer *sym, __u32 snapshot)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);

	if (s)
		s->attached = false;
}

void symbolizer__snapshot_update(struct symbolizer *sym, __u32 snapshot, const struct maps *maps)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);

	if (!s || !s->attached)
		return;
	sym->st.refreshes++;
	if (!snapshot__read(sym, s, maps))
		s->refresh_backoff_ns = REFRESH_MIN_NS;
	snapshot__enforce_limits(sym, s);
}

void symbolizer__check_ips(struct symbolizer *sym, __u32 snapshot, const __u64 *ips, size_t n)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);
	__u64 now, missing = 0;
	bool jit_missing = false;
	size_t i;

	if (!s || !s->attached)
		return;
	for (i = 0; i < n && !missing; i++) {
		const struct maps_entry *e = s->maps && ips[i] ? maps__find(s->maps, ips[i]) : NULL;

		/* a runtime's frame (SYM_INTERP_TAG) is no address */
		if (!ips[i] || ips[i] >> 60 || (e && !perf_map__is_jit(e)) || perf_map__find(&s->jit, ips[i]))
			continue;
		if (e)
			jit_missing = true;
		else
			missing = ips[i];
	}
	if (!missing) {
		/* JIT code newer than our last read of its perf map */
		if (jit_missing) {
			perf_map__recheck(sym, s);
			snapshot__enforce_limits(sym, s);
		}
		return;
	}
	now = now_ns();
	if (now < s->refresh_at_ns)
		return;
	sym->st.refreshes++;
	if (!snapshot__read(sym, s, NULL) && maps__find(s->maps, missing)) {
		s->refresh_backoff_ns = REFRESH_MIN_NS;
	} else if (s->refresh_backoff_ns < REFRESH_MAX_NS) {
		/* Garbage addresses from frame-pointer-less code look the same: back off. */
		s->refresh_backoff_ns *= 2;
	}
	s->refresh_at_ns = now + s->refresh_backoff_ns;
	snapshot__enforce_limits(sym, s);
}

void symbolizer__release_unused(struct symbolizer *sym)
{
	struct list *n, *next;

	for (n = sym->snap_lru.next; n != &sym->snap_lru; n = next) {
		struct snapshot *s = container_of(n, struct snapshot, node);

		next = n->next;
		if (!s->attached)
			snapshot__free(sym, s);
	}
}

int symbolizer__process(struct symbolizer *sym, __u32 snapshot, const char **executable,
			const char **comm)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);

	if (executable)
		*executable = s ? s->exe : NULL;
	if (comm)
		*comm = s && s->comm[0] ? s->comm : NULL;
	return s ? 0 : -ENOENT;
}

const struct container_info *symbolizer__container(struct symbolizer *sym, __u32 snapshot)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);

	return s ? &s->container : NULL;
}

/*
 * Fills f->lines from the DWARF of sf at ELF address vaddr, or from what it
 * gave before; e (NULL: the vDSO) and path as for sym_file__dwarf.
 */
static void resolve_lines(struct symbolizer *sym, struct sym_file *sf, __u32 pid,
			  const struct maps_entry *e, const char *path, __u64 vaddr,
			  struct sym_frame *f)
{
	struct dwarf_file *df;
	struct sym_line *last;
	size_t n, bytes;
	bool cached;

	if (!sym_lines__get(sym, sf, vaddr, &n)) {
		df = sym_file__dwarf(sym, sf, pid, e, path);
		if (!df)
			return;
		n = dwarf_file__lookup(df, vaddr, sym->lines, SYM_MAX_LINES);
		/* lookups decode line tables */
		bytes = dwarf_file__bytes(df);
		sym->st.symbol_bytes += bytes - sf->dwarf_bytes;
		sym->st.dwarf_bytes += bytes - sf->dwarf_bytes;
		sf->dwarf_bytes = bytes;
		/*
		 * Once cached, the lines no longer point into the DWARF, which may
		 * then be closed too if it grew past the budget on its own.
		 */
		cached = sym_lines__put(sym, sf, vaddr, sym->lines, n) &&
			 sym_lines__get(sym, sf, vaddr, &n);
		sym_files__enforce_limit(sym, sf, cached ? NULL : sf, 0);
	}
	if (!n)
		return;
	last = &sym->lines[n - 1];
	if (!last->function)
		last->function = f->function;
	else if (!f->function)
		f->function = last->function;
	f->lines = sym->lines;
	f->line_count = n;
}

/* The line of a Go function named by its function table (sf has no DWARF then). */
static void resolve_go_line(struct symbolizer *sym, const struct sym_file *sf, __u64 vaddr,
			    struct sym_frame *f)
{
	long i = gopcln__find(&sf->go, vaddr);
	struct sym_line *l = &sym->lines[0];

	if (i < 0 || gopcln__line(&sf->go, i, vaddr, &l->file, &l->line, &l->start_line))
		return;
	l->function = f->function;
	l->column = 0;
	f->lines = sym->lines;
	f->line_count = 1;
}

/* Fills module_offset, function, offset and lines of f from file sf mapped at e. */
static void resolve_in_file(struct symbolizer *sym, struct sym_file *sf, __u32 pid,
			    const struct maps_entry *e, __u64 lookup, struct sym_frame *f)
{
	const struct maps_entry *fe = e->kind == MAPS_FILE ? e : NULL;
	const struct sym_entry *s;
	__u64 vaddr;

	if (sym_file__load(sym, sf, pid, fe))
		return;
	if (sf->build_id_len) {
		f->build_id = sf->build_id;
		f->build_id_len = sf->build_id_len;
	}
	if (!sym_file__vaddr(sf, lookup - e->start + e->offset, &vaddr))
		return;
	f->module_offset = vaddr + (f->address - lookup);
	s = sym_file__find(sf, vaddr);
	/*
	 * A return address can start a function: the signal trampoline is
	 * returned to, not called, and stacks walked without frame pointers hold
	 * function addresses. Then the address itself names the frame.
	 */
	if (!s && lookup != f->address) {
		s = sym_file__find(sf, f->module_offset);
		if (s)
			vaddr = f->module_offset;
	}
	if (s) {
		f->function = sf->names + s->name;
		f->offset = f->module_offset - s->start;
	}
	resolve_lines(sym, sf, pid, fe, e->path, vaddr, f);
	if (!f->line_count && sf->go.p && f->function)
		resolve_go_line(sym, sf, vaddr, f);
}

/* Fills f from s's perf map if it knows lookup; e: the mapping holding it, or NULL. */
static bool resolve_jit(struct symbolizer *sym, struct snapshot *s, const struct maps_entry *e,
			__u64 lookup, struct sym_frame *f)
{
	const struct jit_sym *j = perf_map__find(&s->jit, lookup);

	if (!j) {
		perf_map__recheck(sym, s);
		snapshot__enforce_limits(sym, s);
		j = perf_map__find(&s->jit, lookup);
	}
	if (!j)
		return false;
	f->module = s->jit.path;
	f->module_offset = f->address;
	f->function = s->jit.names + j->name;
	f->offset = f->address - j->start;
	f->map_start = e ? e->start : j->start;
	f->map_end = e ? e->end : j->start + (j->size ? j->size : 1);
	f->map_offset = e ? e->offset : 0;
	return true;
}

int symbolizer__resolve_user(struct symbolizer *sym, __u32 snapshot, __u64 ip, unsigned int flags,
			     struct sym_frame *f)
{
	struct snapshot *s = pairmap__get(&sym->snaps, snapshot, 0);
	__u64 lookup = (flags & SYM_RETURN_ADDRESS) && ip ? ip - 1 : ip;
	const struct maps_entry *e;
	struct sym_file *sf;

	memset(f, 0, sizeof(*f));
	f->address = ip;
	if (interp__resolve(sym, ip, f))
		return 0;
	if (!s || !s->maps)
		return -ENOENT;
	list__touch(&sym->snap_lru, &s->node);
	e = maps__find(s->maps, lookup);
	if (perf_map__is_jit(e) && resolve_jit(sym, s, e, lookup, f))
		return 0;
	if (!e)
		return -ENOENT;
	f->module_offset = ip - e->start + e->offset;
	f->map_start = e->start;
	f->map_end = e->end;
	f->map_offset = e->offset;
	switch (e->kind) {
	case MAPS_FILE:
		f->module = e->path;
		sf = s->files[e - maps__entry(s->maps, 0)];
		if (sf)
			resolve_in_file(sym, sf, s->pid, e, lookup, f);
		break;
	case MAPS_VDSO:
		f->module = e->path;
		sf = sym_file__vdso(sym);
		if (sf && sym->vdso_size == e->end - e->start)
			resolve_in_file(sym, sf, s->pid, e, lookup, f);
		break;
	case MAPS_ANON:
		f->module = "[anon]";
		break;
	default:
		f->module = e->path;
		break;
	}
	return f->function ? 0 : -ENOENT;
}

int symbolizer__resolve_kernel(struct symbolizer *sym, __u64 ip, unsigned int flags,
			       struct sym_frame *f)
{
	struct kallsyms *k = &sym->kernel;
	__u64 lookup = (flags & SYM_RETURN_ADDRESS) && ip ? ip - 1 : ip;
	const struct ksym *s;

	memset(f, 0, sizeof(*f));
	f->address = ip;
	f->kernel = true;
	if (!k->tried) {
		k->tried = true;
		if (kallsyms__load(k, sym->opts.kallsyms_path ? sym->opts.kallsyms_path
							      : "/proc/kallsyms"))
			k->nr = 0;
		if (!sym->opts.kallsyms_path)
			kallsyms__build_id(k);
	}
	s = kallsyms__find(k, lookup);
	if (!s)
		return -ENOENT;
	f->module_offset = ip;
	if (s->module == KSYM_CORE) {
		f->module = SYM_KERNEL_MODULE;
		if (k->build_id_len) {
			f->build_id = k->build_id;
			f->build_id_len = k->build_id_len;
		}
	} else {
		f->module = k->names + s->module;
	}
	f->function = k->names + s->name;
	f->offset = ip - s->addr;
	return 0;
}

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *st)
{
	*st = sym->st;
}
