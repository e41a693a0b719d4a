// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symbolizer's files (symbols.c describes the design): a mapped file's
 * descriptor, symbols and DWARF, each held within its limit by an LRU, and
 * our own vDSO image.
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

#define MAX_VDSO_BYTES (1u << 20)

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
	free(f->go_buf);
	f->segs = NULL;
	f->syms = NULL;
	f->names = NULL;
	f->debuglink = NULL;
	f->go_buf = NULL;
	memset(&f->go, 0, sizeof(f->go));
	f->nr_segs = f->nr_syms = 0;
	sym->st.symbol_bytes -= f->bytes;
	f->bytes = 0;
	f->loaded = false;
	list__del(&f->sym_node);
}

void sym_file__free(struct symbolizer *sym, struct sym_file *f)
{
	if (!f)
		return;
	file_unload(sym, f);
	file_close_fd(sym, f);
	sym->st.files--;
	free(f);
}

struct sym_file *sym_file__new(struct symbolizer *sym, __u64 dev, __u64 ino)
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
	sym_file__free(sym, f);
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
	f = sym_file__new(sym, dev, e->inode);
	if (!f)
		return NULL;
	if (e->inode && pairmap__put(&sym->files, dev, e->inode, f)) {
		sym_file__free(sym, f);
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
void sym_files__enforce_limit(struct symbolizer *sym, struct sym_file *keep,
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
int sym_file__load(struct symbolizer *sym, struct sym_file *f, __u32 pid,
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
	sym_files__enforce_limit(sym, f, NULL, 0);
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
	sym_files__enforce_limit(sym, r->f, NULL, bytes);
	return 0;
}

/*
 * f's DWARF (f is loaded), opened on first use from the file, else from its
 * debug file, and again after it was closed to stay within the budget; pid
 * and e as for file_fd, path where e maps f.
 */
struct dwarf_file *sym_file__dwarf(struct symbolizer *sym, struct sym_file *f, __u32 pid,
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
	sym_files__enforce_limit(sym, f, f, 0);
	return f->dwarf;
}

/*
 * Our own vDSO, copied into a memfd so the ELF reader can parse it: it is the
 * image every process of our ABI maps (compared by size before use).
 */
struct sym_file *sym_file__vdso(struct symbolizer *sym)
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
	sym->vdso = sym_file__new(sym, 0, 0);
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
