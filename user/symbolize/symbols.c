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
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "symbolize/dwarf.h"
#include "lib/elf.h"
#include "lib/hash.h"
#include "proc/maps.h"
#include "proc/root.h"
#include "symbolize/symbols.h"

#define DEFAULT_MAX_SNAPSHOTS	 16384
#define DEFAULT_MAX_MAP_ENTRIES	 262144
#define DEFAULT_MAX_SYMBOL_BYTES (24u << 20)
#define DEFAULT_MAX_OPEN_FILES	 256
#define DEFAULT_MAX_DWARF_FILES	 32
/* Larger symbol tables are truncated (a browser binary has about 10^6 symbols). */
#define MAX_SYMBOLS_PER_FILE (4u << 20)
/* A symbol that does not contain an address may be nested in one that starts earlier. */
#define MAX_NESTED_LOOKBACK 8
/* No kernel function is this large: farther from a symbol means "not in it". */
#define KERNEL_MAX_FUNC_SIZE (256u << 10)
#define MAX_VDSO_BYTES	     (1u << 20)
/* Re-reading the maps of a process whose addresses resolve to no mapping. */
#define REFRESH_MIN_NS (100ULL * 1000 * 1000)
#define REFRESH_MAX_NS (60ULL * 1000 * 1000 * 1000)
#define DEBUG_DIR      "/usr/lib/debug"
/* perf maps: larger files are refused, longer names cut. */
#define PERF_MAP_MAX_BYTES (64u << 20)
#define PERF_MAP_MAX_NAME  1024
#define PERF_MAP_CHUNK	   (64u << 10)


/* ---- intrusive LRU lists: most recently used at the head -------------------- */

struct list {
	struct list *prev, *next;
};

static void list_init(struct list *l)
{
	l->prev = l->next = l;
}

static bool list_empty(const struct list *l)
{
	return l->next == l;
}

static void list_del(struct list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

static void list_add(struct list *head, struct list *n)
{
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

static void list_touch(struct list *head, struct list *n)
{
	if (head->next == n)
		return;
	list_del(n);
	list_add(head, n);
}

/* ---- hash table: two 64-bit words -> pointer, linear probing ------------------ */

struct htab_slot {
	__u64 k1, k2;
	void *val; /* NULL: empty */
};

struct htab {
	struct htab_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

static size_t htab_hash(__u64 k1, __u64 k2)
{
	__u64 h = k1 * 0x9e3779b97f4a7c15ULL ^ (k2 + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h;
}

static struct htab_slot *htab_slot(const struct htab *t, __u64 k1, __u64 k2)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = htab_hash(k1, k2) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct htab_slot *s = &t->slots[i];

		if (!s->val || (s->k1 == k1 && s->k2 == k2))
			return s;
	}
}

static void *htab_get(const struct htab *t, __u64 k1, __u64 k2)
{
	struct htab_slot *s = htab_slot(t, k1, k2);

	return s ? s->val : NULL;
}

static int htab_grow(struct htab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64, i;
	struct htab old = *t;

	t->slots = calloc(ncap, sizeof(*t->slots));
	if (!t->slots) {
		*t = old;
		return -ENOMEM;
	}
	t->cap = ncap;
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].val)
			*htab_slot(t, old.slots[i].k1, old.slots[i].k2) = old.slots[i];
	free(old.slots);
	return 0;
}

/* Inserts or replaces. */
static int htab_put(struct htab *t, __u64 k1, __u64 k2, void *val)
{
	struct htab_slot *s;

	if ((t->count + 1) * 2 > t->cap && htab_grow(t))
		return -ENOMEM;
	s = htab_slot(t, k1, k2);
	if (!s->val)
		t->count++;
	*s = (struct htab_slot){k1, k2, val};
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void htab_del(struct htab *t, __u64 k1, __u64 k2)
{
	struct htab_slot *s = htab_slot(t, k1, k2);
	size_t mask = t->cap - 1, i, j;

	if (!s || !s->val)
		return;
	i = s - t->slots;
	for (j = (i + 1) & mask; t->slots[j].val; j = (j + 1) & mask) {
		size_t home = htab_hash(t->slots[j].k1, t->slots[j].k2) & mask;

		/* Move j into the hole at i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].val = NULL;
	t->count--;
}

/* ---- types --------------------------------------------------------------------- */

struct load_seg {
	__u64 offset, vaddr, filesz;
};

struct sym_entry {
	__u64 start;
	__u32 size;
	__u32 name; /* offset into names */
};

struct sym_file {
	__u64 dev, ino; /* key in symbolizer.files; ino 0: not shared */
	unsigned int refs;
	int fd;		/* -1: closed */
	bool pinned_fd; /* not in the open-files LRU (the vDSO image) */
	bool loaded;	/* symbols parsed (possibly none): on the symbols LRU */
	bool failed;	/* could not be opened or parsed: do not retry */
	struct list fd_node;
	struct list sym_node;
	size_t bytes;
	struct load_seg *segs;
	size_t nr_segs;
	struct sym_entry *syms;
	size_t nr_syms;
	char *names;
	unsigned char build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	char *debuglink; /* .gnu_debuglink name, kept while loaded */
	struct dwarf_file *dwarf;
	size_t dwarf_bytes; /* counted in symbol_bytes, like bytes */
	bool dwarf_failed;  /* none, unreadable or too large: do not retry */
	struct list dwarf_node;
	/*
	 * What DWARF gave for each address looked up, so that closing the
	 * DWARF handle loses nothing: ELF address -> struct cached_lines, whose
	 * strings are offsets into strs (each string once, found by str_index:
	 * (hash, length) -> offset). Dropped with the symbols.
	 */
	struct htab lines;
	struct htab str_index;
	char *strs; /* strs[0] is '\0': offset 0 stands for NULL */
	size_t strs_len, strs_cap;
	size_t lines_entry_bytes;
	size_t lines_bytes; /* all of it, counted in symbol_bytes */
};

struct cached_line {
	__u32 function, file; /* offsets into sym_file.strs; 0: NULL */
	__u32 line, column, start_line;
};

struct cached_lines {
	size_t n;
	struct cached_line v[];
};

/* Every address DWARF has no lines for shares this entry. */
static struct cached_lines no_lines;

struct jit_sym {
	__u64 start;
	__u32 size;
	__u32 name; /* offset into perf_map.names */
	__u32 seq;  /* line number: later lines describe newer code */
};

/* A process's /tmp/perf-NSPID.map, parsed up to its last complete line. */
struct perf_map {
	char path[32];	      /* as the process sees it; "" while its NSpid is unknown */
	__u64 dev, ino;	      /* of the file parsed */
	__u64 parsed;	      /* bytes */
	bool skip_line;	      /* in a line too long to parse */
	bool refused;	      /* the file (dev, ino) is refused */
	bool full;	      /* at the entry limit: the rest is not read */
	struct jit_sym *syms; /* sorted by start, one per start */
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
	__u32 seq;
	__u64 check_at_ns; /* no re-read before */
};

struct snapshot {
	__u32 id;
	__u32 pid;
	bool attached; /* the pid's current snapshot */
	struct maps *maps;
	struct sym_file **files; /* parallel to the maps entries; NULL when not a file */
	struct list node;
	__u64 refresh_at_ns;
	__u64 refresh_backoff_ns;
	/* the process when first read */
	bool identity_read;
	char *exe;
	char comm[16];
	__u32 uid, euid;
	struct perf_map jit;
};

struct ksym {
	__u64 addr;
	__u32 name;   /* offsets into kallsyms.names */
	__u32 module; /* KSYM_CORE: the kernel itself */
};

#define KSYM_CORE UINT32_MAX

struct kallsyms {
	bool tried;
	struct ksym *syms;
	size_t nr;
	char *names;
	unsigned char build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
};

struct symbolizer {
	struct symbolizer_opts opts;
	struct htab pids;  /* pid -> attached snapshot */
	struct htab snaps; /* id -> snapshot */
	struct htab files; /* (dev, ino) -> sym_file */
	struct list snap_lru;
	struct list sym_lru;
	struct list fd_lru;
	struct list dwarf_lru;
	__u32 next_id;
	struct symbolizer_stats st;
	struct sym_file *vdso; /* our own vDSO image: the same in every process of our ABI */
	__u64 vdso_size;
	bool vdso_tried;
	struct kallsyms kernel;
	struct sym_line lines[SYM_MAX_LINES]; /* of the last resolved frame */
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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
		list_del(&f->fd_node);
		sym->st.open_files--;
	}
}

static void file_set_fd(struct symbolizer *sym, struct sym_file *f, int fd)
{
	f->fd = fd;
	list_add(&sym->fd_lru, &f->fd_node);
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
	list_del(&f->dwarf_node);
	sym->st.dwarf_files--;
}

/* ---- lines DWARF gave, cached per file ------------------------------------------ */

/* Counts f's cache in symbol_bytes again after it changed. */
static void lines_recount(struct symbolizer *sym, struct sym_file *f)
{
	size_t bytes = (f->lines.cap + f->str_index.cap) * sizeof(struct htab_slot) + f->strs_cap +
		       f->lines_entry_bytes;

	sym->st.symbol_bytes += bytes - f->lines_bytes;
	f->lines_bytes = bytes;
}

static void lines_clear(struct symbolizer *sym, struct sym_file *f)
{
	size_t i;

	for (i = 0; i < f->lines.cap; i++)
		if (f->lines.slots[i].val != &no_lines)
			free(f->lines.slots[i].val);
	free(f->lines.slots);
	free(f->str_index.slots);
	free(f->strs);
	f->lines = f->str_index = (struct htab){0};
	f->strs = NULL;
	f->strs_len = f->strs_cap = 0;
	f->lines_entry_bytes = 0;
	lines_recount(sym, f);
}

/* The offset of a copy of s in f->strs, made if there is none (0 for NULL). */
static int str_intern(struct sym_file *f, const char *s, __u32 *off)
{
	size_t len, need;
	__u64 h;
	void *v;

	*off = 0;
	if (!s)
		return 0;
	len = strlen(s);
	h = hash_fnv1a(HASH_FNV1A_SEED, s, len);
	v = htab_get(&f->str_index, h, len);
	/* the same hash and length for another string: a copy of its own */
	if (v && !memcmp(f->strs + (uintptr_t)v, s, len + 1)) {
		*off = (uintptr_t)v;
		return 0;
	}
	need = (f->strs_len ? f->strs_len : 1) + len + 1;
	if (need > UINT32_MAX)
		return -E2BIG;
	if (need > f->strs_cap) {
		size_t ncap = f->strs_cap ? f->strs_cap * 2 : 4096;
		char *n;

		while (ncap < need)
			ncap *= 2;
		n = realloc(f->strs, ncap);
		if (!n)
			return -ENOMEM;
		f->strs = n;
		f->strs_cap = ncap;
	}
	if (!f->strs_len)
		f->strs[f->strs_len++] = '\0';
	*off = f->strs_len;
	memcpy(f->strs + f->strs_len, s, len + 1);
	f->strs_len += len + 1;
	if (!v && htab_put(&f->str_index, h, len, (void *)(uintptr_t)*off))
		return -ENOMEM;
	return 0;
}

/*
 * Keeps the n lines DWARF gave for vaddr; false if they could not be. A
 * file's cache that outgrows an eighth of the budget starts over, so one
 * file cannot take it all.
 */
static bool lines_put(struct symbolizer *sym, struct sym_file *f, __u64 vaddr,
		      const struct sym_line *lines, size_t n)
{
	size_t size = sizeof(struct cached_lines) + n * sizeof(struct cached_line), i;
	struct cached_lines *c = &no_lines;

	if (f->lines_bytes > sym->opts.max_symbol_bytes / 8)
		lines_clear(sym, f);
	if (n) {
		c = malloc(size);
		if (!c)
			return false;
		c->n = n;
		for (i = 0; i < n; i++) {
			c->v[i] = (struct cached_line){0, 0, lines[i].line, lines[i].column,
						       lines[i].start_line};
			if (str_intern(f, lines[i].function, &c->v[i].function) ||
			    str_intern(f, lines[i].file, &c->v[i].file))
				goto out_free;
		}
	}
	if (htab_put(&f->lines, vaddr, 0, c))
		goto out_free;
	if (n)
		f->lines_entry_bytes += size;
	lines_recount(sym, f);
	return true;

out_free:
	if (c != &no_lines)
		free(c);
	lines_recount(sym, f);
	return false;
}

/* The cached lines of vaddr into sym->lines; false if vaddr was never looked up. */
static bool lines_get(struct symbolizer *sym, const struct sym_file *f, __u64 vaddr, size_t *n)
{
	const struct cached_lines *c = htab_get(&f->lines, vaddr, 0);
	size_t i;

	if (!c)
		return false;
	for (i = 0; i < c->n; i++) {
		const struct cached_line *l = &c->v[i];

		sym->lines[i] = (struct sym_line){
			.function = l->function ? f->strs + l->function : NULL,
			.file = l->file ? f->strs + l->file : NULL,
			.line = l->line,
			.column = l->column,
			.start_line = l->start_line,
		};
	}
	*n = c->n;
	return true;
}

static void file_unload(struct symbolizer *sym, struct sym_file *f)
{
	file_close_dwarf(sym, f);
	lines_clear(sym, f);
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
	list_del(&f->sym_node);
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
	list_init(&f->fd_node);
	list_init(&f->sym_node);
	list_init(&f->dwarf_node);
	sym->st.files++;
	return f;
}

static void file_put(struct symbolizer *sym, struct sym_file *f)
{
	if (!f || --f->refs)
		return;
	if (f->ino)
		htab_del(&sym->files, f->dev, f->ino);
	file_free(sym, f);
}

/*
 * The file of mapping e, shared by every mapping of the same inode. A new file
 * is opened now, while the process surely exists.
 */
static struct sym_file *file_get(struct symbolizer *sym, __u32 pid, const struct maps_entry *e)
{
	__u64 dev = makedev(e->dev_major, e->dev_minor);
	struct sym_file *f = e->inode ? htab_get(&sym->files, dev, e->inode) : NULL;
	int fd;

	if (f) {
		f->refs++;
		return f;
	}
	f = file_new(sym, dev, e->inode);
	if (!f)
		return NULL;
	if (e->inode && htab_put(&sym->files, dev, e->inode, f)) {
		file_free(sym, f);
		return NULL;
	}
	f->refs = 1;
	fd = open_mapped(pid, e);
	if (fd >= 0)
		file_set_fd(sym, f, fd);
	return f;
}

/* ---- symbol tables ---------------------------------------------------------------- */

struct raw_sym {
	__u64 start, size;
	__u64 limit; /* end of the symbol's section: bounds a zero size */
	const char *name;
	unsigned int rank; /* higher wins among symbols at one address */
	bool plt;
};

struct sym_builder {
	struct raw_sym *v;
	size_t n, cap;
	bool full;
};

static int builder_add(struct sym_builder *b, const struct raw_sym *s)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 1024;
		struct raw_sym *nv;

		if (b->n >= MAX_SYMBOLS_PER_FILE) {
			b->full = true;
			return 0;
		}
		nv = realloc(b->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->cap = ncap;
	}
	b->v[b->n++] = *s;
	return 0;
}

static unsigned int sym_rank(const GElf_Sym *s)
{
	unsigned int type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
	unsigned int rank = 0;

	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		rank += 8;
	if (s->st_size)
		rank += 4;
	if (bind == STB_GLOBAL)
		rank += 2;
	else if (bind == STB_WEAK)
		rank += 1;
	return rank;
}

/* Function symbols of one SHT_SYMTAB or SHT_DYNSYM section. */
static int collect_symbols(struct sym_builder *b, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count, i;
	int err;

	if (!data || !data->d_buf || data->d_type != ELF_T_SYM)
		return 0;
	count = data->d_size / sizeof(Elf64_Sym);
	for (i = 1; i < count && !b->full; i++) {
		unsigned int type;
		struct raw_sym r;
		Elf_Scn *in = NULL;
		GElf_Shdr ish;
		GElf_Sym s;

		if (!gelf_getsym(data, i, &s) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= SHN_LORESERVE || !s.st_value || !s.st_name)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type == STT_NOTYPE || !s.st_size) {
			in = elf_getscn(elf, s.st_shndx);
			if (!in || !gelf_getshdr(in, &ish))
				continue;
		}
		if (type == STT_NOTYPE) {
			/* Assembly functions often lack a type (__restore_rt, the signal
			 * trampoline). */
			if (!(ish.sh_flags & SHF_EXECINSTR))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		r.name = elf_strptr(elf, shdr->sh_link, s.st_name);
		/* Not ARM mapping symbols ($x, $d) nor assembler-local labels. */
		if (!r.name || !*r.name || r.name[0] == '$' || !strncmp(r.name, ".L", 2))
			continue;
		r.start = s.st_value;
		r.size = s.st_size;
		r.limit = in && ish.sh_addr + ish.sh_size > s.st_value ? ish.sh_addr + ish.sh_size
								       : s.st_value + s.st_size;
		r.rank = sym_rank(&s);
		r.plt = false;
		err = builder_add(b, &r);
		if (err)
			return err;
	}
	return 0;
}

/* Adds the function symbols of every symbol table; returns whether there was a .symtab. */
static int collect_all(struct sym_builder *b, const struct elf_file *ef, bool *has_symtab)
{
	Elf *elf = elf_file__elf(ef);
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			*has_symtab = true;
		err = collect_symbols(b, elf, scn, &shdr);
		if (err)
			return err;
	}
	return 0;
}

/* GOT slots filled with a function's address, from JUMP_SLOT and GLOB_DAT relocations. */
struct got_slot {
	__u64 addr;
	const char *name;
};

struct got_slots {
	struct got_slot *v;
	size_t n, cap;
	unsigned int machine;
};

static int got_collect(const GElf_Rela *rela, const GElf_Sym *s, const char *name, void *ctx)
{
	struct got_slots *g = ctx;
	unsigned int type = GELF_R_TYPE(rela->r_info);
	bool fn;

	if (g->machine == EM_X86_64)
		fn = type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT;
	else
		fn = type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT;
	if (!fn || !*name || GELF_ST_TYPE(s->st_info) == STT_OBJECT)
		return 0;
	if (g->n == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 256;
		struct got_slot *nv;

		if (g->n >= MAX_SYMBOLS_PER_FILE)
			return 1;
		nv = realloc(g->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		g->v = nv;
		g->cap = ncap;
	}
	g->v[g->n++] = (struct got_slot){rela->r_offset, name};
	return 0;
}

static int cmp_got(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *got_find(const struct got_slots *g, __u64 addr)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->v[mid].addr == addr)
			return g->v[mid].name;
		if (g->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static __u32 le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

/*
 * The GOT slot a PLT entry at addr jumps through, decoded like objdump does:
 * x86-64 "[endbr64] [bnd] jmp *disp32(%rip)"; aarch64 "[bti c] adrp x16;
 * ldr x17, [x16, #off]". 0 if the entry has another shape (PLT0, lazy stubs).
 */
static __u64 plt_got_slot(unsigned int machine, const unsigned char *p, size_t len, __u64 addr)
{
	size_t i = 0;

	if (machine == EM_X86_64) {
		if (len >= 4 && !memcmp(p, "\xf3\x0f\x1e\xfa", 4))
			i = 4;
		if (i < len && p[i] == 0xf2)
			i++;
		if (len < i + 6 || p[i] != 0xff || p[i + 1] != 0x25)
			return 0;
		return addr + i + 6 + (__s64)(__s32)le32(p + i + 2);
	}
	if (machine == EM_AARCH64) {
		__u32 adrp, ldr;
		__s64 page;

		if (len >= 4 && le32(p) == 0xd503245f)
			i = 4;
		if (len < i + 8)
			return 0;
		adrp = le32(p + i);
		ldr = le32(p + i + 4);
		/* adrp x16 and ldr x17, [x16, #imm12 * 8] */
		if ((adrp & 0x9f00001f) != 0x90000010 || (ldr & 0xffc003ff) != 0xf9400211)
			return 0;
		/* The 21-bit page count, sign-extended and scaled by 4096. */
		page = (__s64)((__u64)(((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3)) << 43) >>
		       31;
		return ((addr + i) & ~0xfffULL) + page + ((ldr >> 10) & 0xfff) * 8;
	}
	return 0;
}

/* "name@plt" entries for the PLT stubs, as perf and objdump name them. */
static int collect_plt(struct sym_builder *b, const struct elf_file *ef)
{
	struct got_slots g = {.machine = elf_file__machine(ef)};
	Elf *elf = elf_file__elf(ef);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err;

	if ((g.machine != EM_X86_64 && g.machine != EM_AARCH64) ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	/* A positive return means the table is full: use what was collected. */
	err = elf_file__for_each_rela(ef, got_collect, &g);
	if (err > 0)
		err = 0;
	if (err || !g.n)
		goto out_free;
	qsort(g.v, g.n, sizeof(*g.v), cmp_got);
	while ((scn = elf_nextscn(elf, scn)) && !err) {
		const char *sname;
		Elf_Data *data;
		GElf_Shdr shdr;
		size_t ent, off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!sname || strncmp(sname, ".plt", 4))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		ent = shdr.sh_entsize >= 8 && shdr.sh_entsize <= 64 ? shdr.sh_entsize : 16;
		for (off = 0; off + ent <= data->d_size && !err; off += ent) {
			__u64 addr = shdr.sh_addr + off;
			__u64 slot = plt_got_slot(
				g.machine, (const unsigned char *)data->d_buf + off, ent, addr);
			struct raw_sym r = {addr, ent, addr + ent, NULL, 0, true};

			if (slot && (r.name = got_find(&g, slot)))
				err = builder_add(b, &r);
		}
	}
out_free:
	free(g.v);
	return err;
}

static unsigned int leading_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address; at one address the preferred symbol first. */
static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	unsigned int ux, uy;
	size_t lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Sorts, keeps one symbol per address, sizes zero-sized ones, copies the
 * names. A zero-sized symbol inside a sized one is a label within a function,
 * not a function: it is dropped so it does not split the function.
 */
static int builder_finish(struct sym_builder *b, struct sym_file *f)
{
	size_t i, n = 0, names_len = 0, pos = 0;
	__u64 sized_end = 0;

	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_raw);
	for (i = 0; i < b->n; i++) {
		if (n && b->v[n - 1].start == b->v[i].start)
			continue;
		if (!b->v[i].size && b->v[i].start < sized_end)
			continue;
		if (b->v[i].size && b->v[i].start + b->v[i].size > sized_end)
			sized_end = b->v[i].start + b->v[i].size;
		b->v[n++] = b->v[i];
		names_len += strlen(b->v[i].name) + (b->v[i].plt ? 5 : 1);
	}
	f->syms = malloc((n ? n : 1) * sizeof(*f->syms));
	f->names = malloc(names_len ? names_len : 1);
	if (!f->syms || !f->names)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct raw_sym *r = &b->v[i];
		__u64 size = r->size;
		size_t len = strlen(r->name);

		/* Like perf, a zero size extends to the next symbol, but not past its section. */
		if (!size) {
			__u64 end = i + 1 < n && b->v[i + 1].start < r->limit ? b->v[i + 1].start
									      : r->limit;

			size = end - r->start;
		}
		f->syms[i] =
			(struct sym_entry){r->start, size > UINT32_MAX ? UINT32_MAX : size, pos};
		memcpy(f->names + pos, r->name, len);
		pos += len;
		if (r->plt) {
			memcpy(f->names + pos, "@plt", 4);
			pos += 4;
		}
		f->names[pos++] = '\0';
	}
	f->nr_syms = n;
	f->bytes += n * sizeof(*f->syms) + names_len;
	return 0;
}

static int load_segments(struct sym_file *f, const struct elf_file *ef)
{
	size_t phnum = elf_file__phnum(ef), i;

	f->segs = calloc(phnum ? phnum : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (elf_file__phdr(ef, i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		f->segs[f->nr_segs++] = (struct load_seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	f->bytes += phnum * sizeof(*f->segs);
	return 0;
}

/* The ELF virtual address of file offset off; false if no PT_LOAD holds it. */
static bool file_vaddr(const struct sym_file *f, __u64 off, __u64 *vaddr)
{
	size_t i;

	for (i = 0; i < f->nr_segs; i++) {
		const struct load_seg *s = &f->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

static const struct sym_entry *file_find_sym(const struct sym_file *f, __u64 vaddr)
{
	size_t lo = 0, hi = f->nr_syms, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < MAX_NESTED_LOOKBACK && lo > k; k++) {
		const struct sym_entry *s = &f->syms[lo - 1 - k];

		if (vaddr - s->start < (s->size ? s->size : 1))
			return s;
	}
	return NULL;
}

static bool build_id_equal(const unsigned char *a, size_t alen, const struct elf_file *ef)
{
	unsigned char id[ELF_BUILD_ID_MAX];
	size_t len = elf_file__build_id(ef, id, sizeof(id));

	return len == alen && !memcmp(a, id, len);
}

/*
 * Opens the separate debug file of f, mapped at path by pid: by build id
 * under the debug directory's .build-id, then by f's .gnu_debuglink next to
 * the file, in its .debug directory and under the debug directory, each in
 * the process's root first and then in ours. A candidate must carry f's
 * build id. Returns it, its descriptor in *fd_out, or NULL.
 */
static struct elf_file *debug_file_open(const struct symbolizer *sym, const struct sym_file *f,
					__u32 pid, const char *path, int *fd_out)
{
	const char *debug_dir = sym->opts.debug_dir ? sym->opts.debug_dir : DEBUG_DIR;
	const char *link = f->debuglink, *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path) : 0;
	char cand[4][PATH_MAX];
	unsigned int n = 0, i, r;
	size_t k;

	if (f->build_id_len) {
		int len = snprintf(cand[n], sizeof(cand[n]), "%s/.build-id/%02x/", debug_dir,
				   f->build_id[0]);

		for (k = 1; k < f->build_id_len && len < PATH_MAX; k++)
			len += snprintf(cand[n] + len, sizeof(cand[n]) - len, "%02x",
					f->build_id[k]);
		if (len < PATH_MAX)
			snprintf(cand[n] + len, sizeof(cand[n]) - len, ".debug");
		n++;
	}
	if (link && slash && !strchr(link, '/')) {
		snprintf(cand[n++], sizeof(cand[0]), "%.*s/%s", dir_len, path, link);
		snprintf(cand[n++], sizeof(cand[0]), "%.*s/.debug/%s", dir_len, path, link);
		snprintf(cand[n++], sizeof(cand[0]), "%s%.*s/%s", debug_dir, dir_len, path, link);
	}
	for (i = 0; i < n; i++) {
		for (r = 0; r < 2; r++) {
			struct elf_file *dbg;
			struct stat st;
			int fd = proc_root__open(r ? 0 : pid, cand[i], &st);

			if (fd < 0)
				continue;
			/* The file itself, found through its own debuglink. */
			if (st.st_dev == f->dev && st.st_ino == f->ino) {
				close(fd);
				continue;
			}
			dbg = elf_file__open_fd(fd, cand[i], NULL, 0);
			if (dbg && build_id_equal(f->build_id, f->build_id_len, dbg)) {
				*fd_out = fd;
				return dbg;
			}
			elf_file__close(dbg);
			close(fd);
		}
	}
	return NULL;
}

/* Parses f's symbols from fd (mapped at path by pid). */
static int file_parse(const struct symbolizer *sym, struct sym_file *f, int fd, __u32 pid,
		      const char *path)
{
	struct sym_builder b = {0};
	bool has_symtab = false;
	struct elf_file *ef;
	const char *link;
	int err;

	ef = elf_file__open_fd(fd, path, NULL, 0);
	if (!ef)
		return -EINVAL;
	f->build_id_len = elf_file__build_id(ef, f->build_id, sizeof(f->build_id));
	link = elf_file__debuglink(ef);
	if (link) {
		f->debuglink = strdup(link);
		if (!f->debuglink) {
			err = -ENOMEM;
			goto out_close;
		}
		f->bytes += strlen(link) + 1;
	}
	err = load_segments(f, ef);
	if (!err)
		err = collect_all(&b, ef, &has_symtab);
	if (!err)
		err = collect_plt(&b, ef);
	if (!err && !has_symtab) {
		int dfd;
		struct elf_file *dbg = debug_file_open(sym, f, pid, path, &dfd);

		if (dbg) {
			err = collect_all(&b, dbg, &has_symtab);
			if (!err)
				err = builder_finish(&b, f);
			elf_file__close(dbg);
			close(dfd);
			goto out_close;
		}
	}
	if (!err)
		err = builder_finish(&b, f);
out_close:
	free(b.v);
	elf_file__close(ef);
	return err;
}

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
			if (list_empty(&sym->sym_lru) || old == keep)
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
		list_touch(&sym->fd_lru, &f->fd_node);
	return f->fd;
}

/* Makes f's symbols available; e as for file_fd (NULL: the vDSO). */
static int file_load(struct symbolizer *sym, struct sym_file *f, __u32 pid,
		     const struct maps_entry *e)
{
	int err, fd;

	if (f->loaded) {
		list_touch(&sym->sym_lru, &f->sym_node);
		return 0;
	}
	if (f->failed)
		return -ENOENT;
	fd = file_fd(sym, f, pid, e);
	err = fd < 0 ? -ENOENT : file_parse(sym, f, fd, pid, e ? e->path : "[vdso]");
	f->loaded = true;
	list_add(&sym->sym_lru, &f->sym_node);
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
		list_touch(&sym->dwarf_lru, &f->dwarf_node);
		return f->dwarf;
	}
	if (sym->opts.no_dwarf || f->dwarf_failed)
		return NULL;
	fd = file_fd(sym, f, pid, e);
	err = fd < 0 ? -ENOENT : dwarf_file__open(fd, max_bytes, dwarf_reserve, &r, &f->dwarf);
	if (err == -ENODATA) {
		dbg = debug_file_open(sym, f, pid, path, &dfd);
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
	list_add(&sym->dwarf_lru, &f->dwarf_node);
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

/* ---- perf maps (JIT code) ---------------------------------------------------------- */

static void perf_map_clear(struct symbolizer *sym, struct perf_map *pm)
{
	sym->st.map_entries -= pm->nr;
	free(pm->syms);
	free(pm->names);
	pm->syms = NULL;
	pm->names = NULL;
	pm->nr = pm->cap = pm->names_len = pm->names_cap = 0;
	pm->parsed = 0;
	pm->seq = 0;
	pm->skip_line = false;
	pm->full = false;
}

static bool parse_hex(const char **pp, const char *end, __u64 *v)
{
	const char *p = *pp, *digits;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	digits = p;
	for (*v = 0; p < end; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		if (*v >> 60)
			return false;
		*v = *v << 4 | d;
	}
	*pp = p;
	return p > digits;
}

static bool skip_blanks(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == *pp)
		return false;
	*pp = p;
	return true;
}

/*
 * Adds the entry of line [p, end) ("START SIZE name", hex with or without 0x,
 * the name being the rest of the line). Returns 0 (also for a malformed
 * line), -E2BIG at the entry limit, -ENOMEM.
 */
static int perf_map_add_line(struct perf_map *pm, const char *p, const char *end, size_t limit)
{
	__u64 start, size;
	size_t len;

	if (end > p && end[-1] == '\r')
		end--;
	if (!parse_hex(&p, end, &start) || !skip_blanks(&p, end) || !parse_hex(&p, end, &size) ||
	    !skip_blanks(&p, end) || p == end)
		return 0;
	if (pm->nr >= limit)
		return -E2BIG;
	len = end - p < PERF_MAP_MAX_NAME ? (size_t)(end - p) : PERF_MAP_MAX_NAME;
	if (pm->nr == pm->cap) {
		size_t ncap = pm->cap ? pm->cap * 2 : 256;
		struct jit_sym *nv = realloc(pm->syms, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		pm->syms = nv;
		pm->cap = ncap;
	}
	if (pm->names_cap - pm->names_len < len + 1) {
		size_t ncap = pm->names_cap ? pm->names_cap * 2 : 4096;
		char *nn;

		while (ncap - pm->names_len < len + 1)
			ncap *= 2;
		nn = realloc(pm->names, ncap);
		if (!nn)
			return -ENOMEM;
		pm->names = nn;
		pm->names_cap = ncap;
	}
	pm->syms[pm->nr++] = (struct jit_sym){start, size > UINT32_MAX ? UINT32_MAX : size,
					      pm->names_len, pm->seq++};
	memcpy(pm->names + pm->names_len, p, len);
	pm->names[pm->names_len + len] = '\0';
	pm->names_len += len + 1;
	return 0;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sorts the entries; of those at one address, the newest stays, and the
 * names of the others are dropped, so that names stay bounded by entries.
 */
static void perf_map_sort(struct perf_map *pm)
{
	size_t i, n = 0, len = 0;
	char *names;

	qsort(pm->syms, pm->nr, sizeof(*pm->syms), cmp_jit);
	for (i = 0; i < pm->nr; i++) {
		if (n && pm->syms[n - 1].start == pm->syms[i].start)
			n--;
		pm->syms[n++] = pm->syms[i];
	}
	if (n == pm->nr)
		return;
	pm->nr = n;
	names = malloc(pm->names_len);
	if (!names)
		return;
	for (i = 0; i < n; i++) {
		size_t l = strlen(pm->names + pm->syms[i].name) + 1;

		memcpy(names + len, pm->names + pm->syms[i].name, l);
		pm->syms[i].name = len;
		len += l;
	}
	free(pm->names);
	pm->names = names;
	pm->names_cap = pm->names_len;
	pm->names_len = len;
}

/*
 * Parses the complete lines of fd from pm->parsed up to size. JITs append
 * while we read: a last line without its newline is left for the next read.
 */
static void perf_map_read(struct symbolizer *sym, struct perf_map *pm, int fd, __u64 size)
{
	size_t limit = sym->opts.max_map_entries / 2, have = 0, old_nr = pm->nr;
	__u64 off = pm->parsed;
	char *buf = malloc(PERF_MAP_CHUNK);
	int err = 0;

	if (!buf)
		return;
	while (off < size && !err) {
		size_t want =
			size - off < PERF_MAP_CHUNK - have ? size - off : PERF_MAP_CHUNK - have;
		ssize_t n = pread(fd, buf + have, want, off);
		const char *p = buf, *nl;

		if (n <= 0)
			break;
		off += n;
		have += n;
		while (!err && (nl = memchr(p, '\n', buf + have - p))) {
			if (!pm->skip_line)
				err = perf_map_add_line(pm, p, nl, limit);
			pm->skip_line = false;
			p = nl + 1;
		}
		if (p == buf && have == PERF_MAP_CHUNK) {
			/* no name is that long: drop the line */
			pm->skip_line = true;
			p = buf + have;
		}
		have = buf + have - p;
		memmove(buf, p, have);
		pm->parsed = off - have;
	}
	free(buf);
	if (err == -E2BIG) {
		if (!pm->full)
			sym->st.perf_map_failures++;
		pm->full = true;
		pm->parsed = size;
	}
	if (pm->nr != old_nr) {
		sym->st.map_entries -= old_nr;
		perf_map_sort(pm);
		sym->st.map_entries += pm->nr;
	}
}

/* Reads what was appended to s's perf map since the last read (all of a new file). */
static void perf_map_update(struct symbolizer *sym, struct snapshot *s)
{
	struct perf_map *pm = &s->jit;
	bool same, refuse;
	struct stat st;
	int fd;

	if (!pm->path[0])
		return;
	fd = proc_root__open(s->pid, pm->path, &st);
	if (fd < 0)
		return;
	same = st.st_dev == pm->dev && st.st_ino == pm->ino;
	/* Like perf: not a file another user could have planted for the process to read. */
	refuse = (st.st_uid && st.st_uid != s->uid && st.st_uid != s->euid) ||
		 st.st_size > PERF_MAP_MAX_BYTES;
	if (refuse) {
		if (!same || !pm->refused)
			sym->st.perf_map_failures++;
		pm->refused = true;
	} else {
		if (!same || (__u64)st.st_size < pm->parsed)
			perf_map_clear(sym, pm);
		pm->refused = false;
		perf_map_read(sym, pm, fd, st.st_size);
	}
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	close(fd);
}

/* Re-reads s's perf map, at most every REFRESH_MIN_NS while the process lives. */
static void perf_map_recheck(struct symbolizer *sym, struct snapshot *s)
{
	__u64 now;

	if (!s->attached || !s->jit.path[0])
		return;
	now = now_ns();
	if (now < s->jit.check_at_ns)
		return;
	s->jit.check_at_ns = now + REFRESH_MIN_NS;
	perf_map_update(sym, s);
}

static const struct jit_sym *perf_map_find(const struct perf_map *pm, __u64 addr)
{
	const struct jit_sym *best = NULL;
	size_t lo = 0, hi = pm->nr, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Code may be freed and reused: of overlapping entries, the newest holds. */
	for (k = 0; k < MAX_NESTED_LOOKBACK && lo > k; k++) {
		const struct jit_sym *j = &pm->syms[lo - 1 - k];

		if (addr - j->start < (j->size ? j->size : 1) && (!best || j->seq > best->seq))
			best = j;
	}
	return best;
}

/* Where JITs put code: anonymous mappings, named or not, and memfds (or no mapping yet). */
static bool jit_mapping(const struct maps_entry *e)
{
	return !e || e->kind == MAPS_ANON ||
	       (e->kind == MAPS_SPECIAL && !strncmp(e->path, "[anon:", 6)) ||
	       (e->kind == MAPS_FILE && !strncmp(e->path, "/memfd:", 7));
}

/* ---- process identity ----------------------------------------------------------- */

/* The last number of a line like "NSpid:\t1234\t5". */
static __u32 last_number(const char *p)
{
	unsigned long v = 0;

	while (*p) {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (end == p) {
			p++;
			continue;
		}
		v = n;
		p = end;
	}
	return v > UINT32_MAX ? 0 : v;
}

/*
 * What s's process is: uids and NSpid from /proc/PID/status, its executable
 * and name. Read with its first maps, so it describes the same process.
 */
static void snapshot_read_identity(struct snapshot *s)
{
	char path[64], buf[PATH_MAX], root[PATH_MAX], *line = NULL;
	size_t cap = 0, del = strlen(" (deleted)");
	__u32 nspid = 0;
	ssize_t len;
	FILE *fp;
	int fd;

	s->identity_read = true;
	s->uid = s->euid = UINT32_MAX;
	snprintf(path, sizeof(path), "/proc/%u/status", s->pid);
	fp = fopen(path, "re");
	if (fp) {
		while (getline(&line, &cap, fp) > 0) {
			if (!strncmp(line, "Uid:", 4))
				sscanf(line + 4, "%u %u", &s->uid, &s->euid);
			else if (!strncmp(line, "NSpid:", 6))
				nspid = last_number(line + 6);
		}
		free(line);
		fclose(fp);
	}
	if (nspid)
		snprintf(s->jit.path, sizeof(s->jit.path), "/tmp/perf-%u.map", nspid);
	snprintf(path, sizeof(path), "/proc/%u/exe", s->pid);
	len = readlink(path, buf, sizeof(buf) - 1);
	if (len > 0) {
		buf[len] = '\0';
		/* as in the maps, an unlinked file is still named by its path */
		if ((size_t)len > del && !strcmp(buf + len - del, " (deleted)"))
			buf[len - del] = '\0';
		maps__read_root(s->pid, root, sizeof(root));
		s->exe = strdup(maps__path_in_root(buf, root));
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, s->comm, sizeof(s->comm) - 1);
		close(fd);
		s->comm[len > 0 ? len : 0] = '\0';
		s->comm[strcspn(s->comm, "\n")] = '\0';
	}
}

/* ---- snapshots -------------------------------------------------------------------- */

static void snapshot_release_files(struct symbolizer *sym, struct snapshot *s)
{
	size_t i;

	if (!s->maps)
		return;
	for (i = 0; i < maps__count(s->maps); i++)
		file_put(sym, s->files[i]);
	sym->st.map_entries -= maps__count(s->maps);
	free(s->files);
	maps__free(s->maps);
	s->files = NULL;
	s->maps = NULL;
}

static void snapshot_detach(struct symbolizer *sym, struct snapshot *s)
{
	if (!s->attached)
		return;
	htab_del(&sym->pids, s->pid, 0);
	s->attached = false;
}

static void snapshot_free(struct symbolizer *sym, struct snapshot *s)
{
	snapshot_detach(sym, s);
	htab_del(&sym->snaps, s->id, 0);
	list_del(&s->node);
	snapshot_release_files(sym, s);
	perf_map_clear(sym, &s->jit);
	free(s->exe);
	sym->st.snapshots--;
	free(s);
}

/* Reads pid's maps into s, replacing what s had. */
static int snapshot_read(struct symbolizer *sym, struct snapshot *s)
{
	struct sym_file **files;
	struct maps *m;
	size_t i, n;
	int err;

	err = maps__read(s->pid, MAPS_EXEC_ONLY, &m);
	if (err) {
		sym->st.snapshot_failures++;
		return err;
	}
	n = maps__count(m);
	if (!n && s->maps) {
		/* an exiting process (or a zombie) has no maps left: keep what it had */
		maps__free(m);
		sym->st.snapshot_failures++;
		return -ESRCH;
	}
	files = calloc(n ? n : 1, sizeof(*files));
	if (!files) {
		maps__free(m);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (maps__entry(m, i)->kind == MAPS_FILE)
			files[i] = file_get(sym, s->pid, maps__entry(m, i));
	snapshot_release_files(sym, s);
	s->maps = m;
	s->files = files;
	sym->st.map_entries += n;
	if (!s->identity_read)
		snapshot_read_identity(s);
	perf_map_update(sym, s);
	return 0;
}

static void enforce_snapshot_limits(struct symbolizer *sym, struct snapshot *keep)
{
	while (sym->st.snapshots > sym->opts.max_snapshots ||
	       sym->st.map_entries > sym->opts.max_map_entries) {
		struct snapshot *old = container_of(sym->snap_lru.prev, struct snapshot, node);

		if (old == keep)
			break;
		snapshot_free(sym, old);
		sym->st.evictions++;
	}
}

static struct snapshot *snapshot_new(struct symbolizer *sym, __u32 pid)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	/* Ids wrap after 2^32 snapshots; 0 stays invalid and live ids are skipped. */
	do
		s->id = ++sym->next_id;
	while (!s->id || htab_get(&sym->snaps, s->id, 0));
	if (htab_put(&sym->snaps, s->id, 0, s)) {
		free(s);
		return NULL;
	}
	if (htab_put(&sym->pids, pid, 0, s)) {
		htab_del(&sym->snaps, s->id, 0);
		free(s);
		return NULL;
	}
	s->attached = true;
	list_add(&sym->snap_lru, &s->node);
	sym->st.snapshots++;
	s->refresh_backoff_ns = REFRESH_MIN_NS;
	if (snapshot_read(sym, s))
		s->refresh_at_ns = now_ns() + REFRESH_MIN_NS;
	enforce_snapshot_limits(sym, s);
	return s;
}

/* ---- kallsyms --------------------------------------------------------------------- */

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The vmlinux build id from /sys/kernel/notes. */
static void kernel_build_id(struct kallsyms *k)
{
	unsigned char buf[4096];
	size_t off = 0;
	ssize_t len;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	while (len > 0 && off + 12 <= (size_t)len) {
		__u32 namesz = le32(buf + off), descsz = le32(buf + off + 4);
		__u32 type = le32(buf + off + 8);
		size_t name_off = off + 12, desc_off = name_off + ((namesz + 3ULL) & ~3ULL);

		if (desc_off + descsz > (size_t)len)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz && descsz <= sizeof(k->build_id)) {
			memcpy(k->build_id, buf + desc_off, descsz);
			k->build_id_len = descsz;
			return;
		}
		off = desc_off + ((descsz + 3ULL) & ~3ULL);
	}
}

/* Text symbols of kallsyms, sorted; all-zero addresses (kptr_restrict) load nothing. */
static int kallsyms_load(struct kallsyms *k, const char *path)
{
	size_t cap = 0, names_cap = 0, names_len = 0, line_cap = 0, i, n;
	__u32 module = KSYM_CORE, module_len = 0;
	char *line = NULL;
	ssize_t len;
	FILE *fp;
	int err = 0;

	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while ((len = getline(&line, &line_cap, fp)) > 0) {
		char *p = line, *name, *mod, *end;
		unsigned long long addr;
		size_t need, name_len, mod_len = 0;
		char type;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		addr = strtoull(p, &end, 16);
		if (end == p || end[0] != ' ' || !end[1] || end[2] != ' ' || !addr)
			continue;
		type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		mod = strchr(name, '\t');
		name_len = mod ? (size_t)(mod - name) : strlen(name);
		if (!name_len)
			continue;
		if (mod) {
			mod++;
			mod_len = strlen(mod);
			if (mod_len < 3 || mod[0] != '[' || mod[mod_len - 1] != ']')
				continue;
		}
		need = name_len + 1 + mod_len + 1;
		if (names_cap - names_len < need) {
			size_t ncap = names_cap ? names_cap * 2 : 1 << 20;
			char *nn;

			while (ncap - names_len < need)
				ncap *= 2;
			if (ncap > UINT32_MAX) {
				err = -EFBIG;
				break;
			}
			nn = realloc(k->names, ncap);
			if (!nn) {
				err = -ENOMEM;
				break;
			}
			k->names = nn;
			names_cap = ncap;
		}
		if (k->nr == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			struct ksym *ns = realloc(k->syms, ncap * sizeof(*ns));

			if (!ns) {
				err = -ENOMEM;
				break;
			}
			k->syms = ns;
			cap = ncap;
		}
		/* Lines of one module are consecutive: store its name once per run. */
		if (!mod) {
			module = KSYM_CORE;
		} else if (module == KSYM_CORE || module_len != mod_len ||
			   memcmp(k->names + module, mod, mod_len)) {
			module = names_len;
			module_len = mod_len;
			memcpy(k->names + names_len, mod, mod_len + 1);
			names_len += mod_len + 1;
		}
		k->syms[k->nr++] = (struct ksym){addr, names_len, module};
		memcpy(k->names + names_len, name, name_len);
		k->names[names_len + name_len] = '\0';
		names_len += name_len + 1;
	}
	free(line);
	fclose(fp);
	if (err)
		return err;
	if (k->nr)
		qsort(k->syms, k->nr, sizeof(*k->syms), cmp_ksym);
	/*
	 * Aliases at one address: keep the name with the fewest leading
	 * underscores, then the smallest, whatever order qsort left them in.
	 */
	for (i = 0, n = 0; i < k->nr; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr) {
			const char *a = k->names + k->syms[n - 1].name,
				   *b = k->names + k->syms[i].name;

			if (leading_underscores(b) < leading_underscores(a) ||
			    (leading_underscores(b) == leading_underscores(a) && strcmp(b, a) < 0))
				k->syms[n - 1] = k->syms[i];
			continue;
		}
		k->syms[n++] = k->syms[i];
	}
	k->nr = n;
	return 0;
}

static const struct ksym *kallsyms_find(const struct kallsyms *k, __u64 addr)
{
	size_t lo = 0, hi = k->nr;
	const struct ksym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	if (addr - s->addr >= KERNEL_MAX_FUNC_SIZE)
		return NULL;
	return s;
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
	list_init(&sym->snap_lru);
	list_init(&sym->sym_lru);
	list_init(&sym->fd_lru);
	list_init(&sym->dwarf_lru);
	return sym;
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	while (!list_empty(&sym->snap_lru))
		snapshot_free(sym, container_of(sym->snap_lru.next, struct snapshot, node));
	file_free(sym, sym->vdso);
	free(sym->pids.slots);
	free(sym->snaps.slots);
	free(sym->files.slots);
	free(sym->kernel.syms);
	free(sym->kernel.names);
	free(sym);
}

__u32 symbolizer__observe_pid(struct symbolizer *sym, __u32 pid)
{
	struct snapshot *s = htab_get(&sym->pids, pid, 0);

	if (s) {
		list_touch(&sym->snap_lru, &s->node);
		return s->id;
	}
	s = snapshot_new(sym, pid);
	return s ? s->id : 0;
}

void symbolizer__pid_exec(struct symbolizer *sym, __u32 pid)
{
	struct snapshot *s = htab_get(&sym->pids, pid, 0);

	if (s)
		snapshot_detach(sym, s);
}

void symbolizer__pid_exit(struct symbolizer *sym, __u32 pid)
{
	symbolizer__pid_exec(sym, pid);
}

void symbolizer__check_ips(struct symbolizer *sym, __u32 snapshot, const __u64 *ips, size_t n)
{
	struct snapshot *s = htab_get(&sym->snaps, snapshot, 0);
	__u64 now, missing = 0;
	bool jit_missing = false;
	size_t i;

	if (!s || !s->attached)
		return;
	for (i = 0; i < n && !missing; i++) {
		const struct maps_entry *e = s->maps && ips[i] ? maps__find(s->maps, ips[i]) : NULL;

		if (!ips[i] || (e && !jit_mapping(e)) || perf_map_find(&s->jit, ips[i]))
			continue;
		if (e)
			jit_missing = true;
		else
			missing = ips[i];
	}
	if (!missing) {
		/* JIT code newer than our last read of its perf map */
		if (jit_missing) {
			perf_map_recheck(sym, s);
			enforce_snapshot_limits(sym, s);
		}
		return;
	}
	now = now_ns();
	if (now < s->refresh_at_ns)
		return;
	sym->st.refreshes++;
	if (!snapshot_read(sym, s) && maps__find(s->maps, missing)) {
		s->refresh_backoff_ns = REFRESH_MIN_NS;
	} else if (s->refresh_backoff_ns < REFRESH_MAX_NS) {
		/* Garbage addresses from frame-pointer-less code look the same: back off. */
		s->refresh_backoff_ns *= 2;
	}
	s->refresh_at_ns = now + s->refresh_backoff_ns;
	enforce_snapshot_limits(sym, s);
}

void symbolizer__release_unused(struct symbolizer *sym)
{
	struct list *n, *next;

	for (n = sym->snap_lru.next; n != &sym->snap_lru; n = next) {
		struct snapshot *s = container_of(n, struct snapshot, node);

		next = n->next;
		if (!s->attached)
			snapshot_free(sym, s);
	}
}

int symbolizer__process(struct symbolizer *sym, __u32 snapshot, const char **executable,
			const char **comm)
{
	struct snapshot *s = htab_get(&sym->snaps, snapshot, 0);

	if (executable)
		*executable = s ? s->exe : NULL;
	if (comm)
		*comm = s && s->comm[0] ? s->comm : NULL;
	return s ? 0 : -ENOENT;
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

	if (!lines_get(sym, sf, vaddr, &n)) {
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
		cached = lines_put(sym, sf, vaddr, sym->lines, n) && lines_get(sym, sf, vaddr, &n);
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
	if (!file_vaddr(sf, lookup - e->start + e->offset, &vaddr))
		return;
	f->module_offset = vaddr + (f->address - lookup);
	s = file_find_sym(sf, vaddr);
	/*
	 * A return address can start a function: the signal trampoline is
	 * returned to, not called, and stacks walked without frame pointers hold
	 * function addresses. Then the address itself names the frame.
	 */
	if (!s && lookup != f->address) {
		s = file_find_sym(sf, f->module_offset);
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
	const struct jit_sym *j = perf_map_find(&s->jit, lookup);

	if (!j) {
		perf_map_recheck(sym, s);
		enforce_snapshot_limits(sym, s);
		j = perf_map_find(&s->jit, lookup);
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
	struct snapshot *s = htab_get(&sym->snaps, snapshot, 0);
	__u64 lookup = (flags & SYM_RETURN_ADDRESS) && ip ? ip - 1 : ip;
	const struct maps_entry *e;
	struct sym_file *sf;

	memset(f, 0, sizeof(*f));
	f->address = ip;
	if (!s || !s->maps)
		return -ENOENT;
	list_touch(&sym->snap_lru, &s->node);
	e = maps__find(s->maps, lookup);
	if (jit_mapping(e) && resolve_jit(sym, s, e, lookup, f))
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
		if (kallsyms_load(k, sym->opts.kallsyms_path ? sym->opts.kallsyms_path
							     : "/proc/kallsyms"))
			k->nr = 0;
		if (!sym->opts.kallsyms_path)
			kernel_build_id(k);
	}
	s = kallsyms_find(k, lookup);
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
