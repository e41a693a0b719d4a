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
 * This file holds the files, their LRUs and the public API; symtab.c the
 * symbol tables and debug files, linecache.c the lines DWARF gave,
 * perfmap.c the perf maps, snapshot.c the snapshots, kallsyms.c the kernel's
 * symbols; symbols_int.h their shared types.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "proc/root.h"
#include "symbolize/dwarf.h"
#include "symbolize/symbols_int.h"

#define DEFAULT_MAX_SNAPSHOTS	 16384
#define DEFAULT_MAX_MAP_ENTRIES	 262144
#define DEFAULT_MAX_SYMBOL_BYTES (24u << 20)
#define DEFAULT_MAX_OPEN_FILES	 256
#define DEFAULT_MAX_DWARF_FILES	 32
#define MAX_VDSO_BYTES		 (1u << 20)

/* ---- opening mapped files -------------------------------------------------------- */

/*
 * The file behind mapping e of pid (proc/root.h) or, for an exited process,
 * the path on the host if it is the same inode. -errno if there is none.
 */
static int open_mapped(__u32 pid, const struct maps_entry *e)
{
	struct stat st;
	int fd = proc_root__open_mapped(pid, e, &st);

	if (fd >= 0 || e->deleted)
		return fd;
	fd = proc_root__open(0, e->path, &st);
	if (fd >= 0 && !proc_root__same_file(&st, e)) {
		close(fd);
		fd = -ESTALE;
	}
	return fd;
}

/* ---- files -------------------------------------------------------------------- */

static void file_close_fd(struct symbolizer *sym, struct sym_file *f)
{
	if (f->fd < 0)
		return;
	close(f->fd);
	f->fd = -1;
	if (!f->pinned_fd) {
		list__del(&f->fd_node);
		sym->st.open_files--;
	}
}

static void file_set_fd(struct symbolizer *sym, struct sym_file *f, int fd)
{
	f->fd = fd;
	list__add(&sym->fd_lru, &f->fd_node);
	sym->st.open_files++;
	while (sym->st.open_files > sym->opts.max_open_files) {
		struct sym_file *old = container_of(sym->fd_lru.prev, struct sym_file, fd_node);

		file_close_fd(sym, old);
	}
}

static void file_close_dwarf(struct symbolizer *sym, struct sym_file *f)
{
	if (!f->dwarf)
		return;
	dwarf_file__close(f->dwarf);
	f->dwarf = NULL;
	sym->st.symbol_bytes -= f->dwarf_bytes;
	sym->st.dwarf_bytes -= f->dwarf_bytes;
	f->dwarf_bytes = 0;
	list__del(&f->dwarf_node);
	sym->st.dwarf_files--;
}

static void file_unload(struct symbolizer *sym, struct sym_file *f)
{
	file_close_dwarf(sym, f);
	sym_lines__clear(sym, f);
	if (!f->loaded)
		return;
	free(f->segs);
	free(f->syms);
	free(f->names);
	free(f->debuglink);
	f->segs = NULL;
	f->syms = NULL;
	f->names = NULL;
	f->debuglink = NULL;
	f->nr_segs = f->nr_syms = 0;
	sym->st.symbol_bytes -= f->bytes;
	f->bytes = 0;
	f->loaded = false;
	list__del(&f->sym_node);
}

static void file_free(struct symbolizer *sym, struct sym_file *f)
{
	if (!f)
		return;
	file_unload(sym, f);
	file_close_fd(sym, f);
	sym->st.files--;
	free(f);
}

static struct sym_file *file_new(struct symbolizer *sym, __u64 dev, __u64 ino)
{
	struct sym_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->fd = -1;
	list__init(&f->fd_node);
	list__init(&f->sym_node);
	list__init(&f->dwarf_node);
	sym->st.files++;
	return f;
}

void sym_file__put(struct symbolizer *sym, struct sym_file *f)
{
	if (!f || --f->refs)
		return;
	if (f->ino)
		pairmap__del(&sym->files, f->dev, f->ino);
	file_free(sym, f);
}

/*
 * The file of mapping e, shared by every mapping of the same inode. A new file
 * is opened now, while the process surely exists.
 */
struct sym_file *sym_file__get(struct symbolizer *sym, __u32 pid, const struct maps_entry *e)
{
	__u64 dev = makedev(e->dev_major, e->dev_minor);
	struct sym_file *f = e->inode ? pairmap__get(&sym->files, dev, e->inode) : NULL;
	int fd;

	if (f) {
		f->refs++;
		return f;
	}
	f = file_new(sym, dev, e->inode);
	if (!f)
		return NULL;
	if (e->inode && pairmap__put(&sym->files, dev, e->inode, f)) {
		file_free(sym, f);
		return NULL;
	}
	f->refs = 1;
	fd = open_mapped(pid, e);
	if (fd >= 0)
		file_set_fd(sym, f, fd);
	return f;
}

/* ---- symbols and DWARF of a file, within the budget ------------------------------ */

/*
 * Evicts until need more bytes fit in the budget. DWARF handles go first,
 * least recently used first, but not keep_dwarf's (in use; may be NULL):
 * they are the largest, and the lines they gave stay cached, so reopening
 * one later costs CPU for new addresses only. Then the symbols of the least
 * recently used files go, but not keep's.
 */
static void enforce_symbol_limit(struct symbolizer *sym, struct sym_file *keep,
				 struct sym_file *keep_dwarf, size_t need)
{
	while (sym->st.symbol_bytes > sym->opts.max_symbol_bytes ||
	       need > sym->opts.max_symbol_bytes - sym->st.symbol_bytes) {
		struct list *n = sym->dwarf_lru.prev;
		struct sym_file *old;

		if (n != &sym->dwarf_lru &&
		    container_of(n, struct sym_file, dwarf_node) == keep_dwarf)
			n = n->prev;
		if (n != &sym->dwarf_lru) {
			file_close_dwarf(sym, container_of(n, struct sym_file, dwarf_node));
		} else {
			old = container_of(sym->sym_lru.prev, struct sym_file, sym_node);
			if (list__empty(&sym->sym_lru) || old == keep)
				break;
			file_unload(sym, old);
		}
		sym->st.evictions++;
	}
}

/*
 * f's descriptor; e is a mapping of f by pid, used to reopen the file when
 * its descriptor was closed to stay within the limit. -1 if it cannot be.
 */
static int file_fd(struct symbolizer *sym, struct sym_file *f, __u32 pid,
		   const struct maps_entry *e)
{
	if (f->fd < 0 && e) {
		int fd = open_mapped(pid, e);

		if (fd >= 0)
			file_set_fd(sym, f, fd);
	}
	if (f->fd >= 0 && !f->pinned_fd)
		list__touch(&sym->fd_lru, &f->fd_node);
	return f->fd;
}

/* Makes f's symbols available; e as for file_fd (NULL: the vDSO). */
static int file_load(struct symbolizer *sym, struct sym_file *f, __u32 pid,
		     const struct maps_entry *e)
{
	int err, fd;

	if (f->loaded) {
		list__touch(&sym->sym_lru, &f->sym_node);
		return 0;
	}
	if (f->failed)
		return -ENOENT;
	fd = file_fd(sym, f, pid, e);
	err = fd < 0 ? -ENOENT : sym_file__parse(sym, f, fd, pid, e ? e->path : "[vdso]");
	f->loaded = true;
	list__add(&sym->sym_lru, &f->sym_node);
	sym->st.symbol_bytes += f->bytes;
	if (err) {
		file_unload(sym, f);
		f->failed = true;
		sym->st.file_failures++;
		return err;
	}
	enforce_symbol_limit(sym, f, NULL, 0);
	return 0;
}

struct dwarf_reserve {
	struct symbolizer *sym;
	struct sym_file *f;
};

/*
 * Makes room for the DWARF of f before libdw reads it, in number and in
 * bytes, so that memory does not hold the whole budget and the new handle
 * at once.
 */
static int dwarf_reserve(void *ctx, size_t bytes)
{
	struct dwarf_reserve *r = ctx;
	struct symbolizer *sym = r->sym;

	while (sym->st.dwarf_files >= sym->opts.max_dwarf_files) {
		file_close_dwarf(sym,
				 container_of(sym->dwarf_lru.prev, struct sym_file, dwarf_node));
		sym->st.evictions++;
	}
	enforce_symbol_limit(sym, r->f, NULL, bytes);
	return 0;
}

/*
 * f's DWARF (f is loaded), opened on first use from the file, else from its
 * debug file, and again after it was closed to stay within the budget; pid
 * and e as for file_fd, path where e maps f.
 */
static struct dwarf_file *file_dwarf(struct symbolizer *sym, struct sym_file *f, __u32 pid,
				     const struct maps_entry *e, const char *path)
{
	size_t max_bytes = sym->opts.max_symbol_bytes / 2;
	struct dwarf_reserve r = {sym, f};
	struct elf_file *dbg;
	int fd, dfd, err;

	if (f->dwarf) {
		list__touch(&sym->dwarf_lru, &f->dwarf_node);
		return f->dwarf;
	}
	if (sym->opts.no_dwarf || f->dwarf_failed)
		return NULL;
	fd = file_fd(sym, f, pid, e);
	err = fd < 0 ? -ENOENT : dwarf_file__open(fd, max_bytes, dwarf_reserve, &r, &f->dwarf);
	if (err == -ENODATA) {
		dbg = sym_file__open_debug(sym, f, pid, path, &dfd);
		if (dbg) {
			err = dwarf_file__open(dfd, max_bytes, dwarf_reserve, &r, &f->dwarf);
			elf_file__close(dbg);
			close(dfd);
		}
	}
	if (err) {
		/* Most files have no DWARF: that is no failure. */
		if (err != -ENODATA)
			sym->st.dwarf_failures++;
		f->dwarf_failed = true;
		return NULL;
	}
	f->dwarf_bytes = dwarf_file__bytes(f->dwarf);
	sym->st.symbol_bytes += f->dwarf_bytes;
	sym->st.dwarf_bytes += f->dwarf_bytes;
	sym->st.dwarf_opens++;
	list__add(&sym->dwarf_lru, &f->dwarf_node);
	sym->st.dwarf_files++;
	/* the unit tables, counted as libdw read them */
	enforce_symbol_limit(sym, f, f, 0);
	return f->dwarf;
}

/*
 * Our own vDSO, copied into a memfd so the ELF reader can parse it: it is the
 * image every process of our ABI maps (compared by size before use).
 */
static struct sym_file *vdso_file(struct symbolizer *sym)
{
	const struct maps_entry *e = NULL;
	struct maps *m;
	size_t i;
	int fd;

	if (sym->vdso_tried)
		return sym->vdso;
	sym->vdso_tried = true;
	if (maps__read(getpid(), MAPS_EXEC_ONLY, &m))
		return NULL;
	for (i = 0; i < maps__count(m) && !e; i++)
		if (maps__entry(m, i)->kind == MAPS_VDSO)
			e = maps__entry(m, i);
	if (!e || e->end - e->start > MAX_VDSO_BYTES)
		goto out_free;
	fd = memfd_create("labelprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		goto out_free;
	if (write(fd, (const void *)(uintptr_t)e->start, e->end - e->start) !=
	    (ssize_t)(e->end - e->start)) {
		close(fd);
		goto out_free;
	}
	sym->vdso = file_new(sym, 0, 0);
	if (!sym->vdso) {
		close(fd);
		goto out_free;
	}
	sym->vdso->fd = fd;
	sym->vdso->pinned_fd = true;
	sym->vdso_size = e->end - e->start;
out_free:
	maps__free(m);
	return sym->vdso;
}

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
	file_free(sym, sym->vdso);
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

		if (!ips[i] || (e && !perf_map__is_jit(e)) || perf_map__find(&s->jit, ips[i]))
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
 * gave before; e (NULL: the vDSO) and path as for file_dwarf.
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
		df = file_dwarf(sym, sf, pid, e, path);
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
		enforce_symbol_limit(sym, sf, cached ? NULL : sf, 0);
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

/* Fills module_offset, function, offset and lines of f from file sf mapped at e. */
static void resolve_in_file(struct symbolizer *sym, struct sym_file *sf, __u32 pid,
			    const struct maps_entry *e, __u64 lookup, struct sym_frame *f)
{
	const struct maps_entry *fe = e->kind == MAPS_FILE ? e : NULL;
	const struct sym_entry *s;
	__u64 vaddr;

	if (file_load(sym, sf, pid, fe))
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
		sf = vdso_file(sym);
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
