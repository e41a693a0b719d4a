// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbol tables: the function symbols of .symtab and .dynsym (of the separate
 * debug file when the file itself has no .symtab), "name@plt" entries for the
 * PLT stubs, the PT_LOAD segments, and the debug file found by build id or
 * .gnu_debuglink.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/sorted.h"
#include "proc/root.h"
#include "symbolize/symbols_int.h"

/* Larger symbol tables are truncated (a browser binary has about 10^6 symbols). */
#define MAX_SYMBOLS_PER_FILE (4u << 20)
#define DEBUG_DIR	     "/usr/lib/debug"

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
		if (b->n >= MAX_SYMBOLS_PER_FILE) {
			b->full = true;
			return 0;
		}
		if (ARRAY_RESERVE_MIN(b->v, b->cap, b->n + 1, 1024))
			return -ENOMEM;
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
		if (g->n >= MAX_SYMBOLS_PER_FILE)
			return 1;
		if (ARRAY_RESERVE_MIN(g->v, g->cap, g->n + 1, 256))
			return -ENOMEM;
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
	size_t i = SORTED_UPPER_BOUND(g->v, g->n, addr, addr);

	return i && g->v[i - 1].addr == addr ? g->v[i - 1].name : NULL;
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

/*
 * Go's function table, copied into f->go_buf: the .gopclntab section, or,
 * when the section headers are stripped too, searched for in the read-only
 * segments (Go's linker puts it in one). Returns 0 if found, else -ENOENT.
 */
static int load_go_table(struct sym_file *f, const struct elf_file *ef)
{
	Elf *elf = elf_file__elf(ef);
	Elf_Scn *scn = NULL;
	size_t shstrndx, nsec, i;

	if (elf_getshdrnum(elf, &nsec))
		return -ENOENT;
	if (nsec) {
		if (elf_getshdrstrndx(elf, &shstrndx))
			return -ENOENT;
		while ((scn = elf_nextscn(elf, scn))) {
			const char *name;
			Elf_Data *data;
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
			    strcmp(name, ".gopclntab"))
				continue;
			data = elf_getdata(scn, NULL);
			if (!data || !data->d_buf || !(f->go_buf = malloc(data->d_size ?: 1)))
				return -ENOENT;
			memcpy(f->go_buf, data->d_buf, data->d_size);
			if (!gopcln__init(&f->go, f->go_buf, data->d_size))
				return 0;
			break;
		}
		return -ENOENT;
	}
	for (i = 0; i < elf_file__phnum(ef); i++) {
		GElf_Phdr ph;

		if (elf_file__phdr(ef, i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz ||
		    (ph.p_flags & (PF_X | PF_W)) || ph.p_filesz > elf_file__size(ef))
			continue;
		f->go_buf = malloc(ph.p_filesz);
		if (!f->go_buf)
			return -ENOENT;
		if (!elf_file__read_vaddr(ef, ph.p_vaddr, f->go_buf, ph.p_filesz) &&
		    !gopcln__search(&f->go, f->go_buf, ph.p_filesz))
			return 0;
		free(f->go_buf);
		f->go_buf = NULL;
	}
	return -ENOENT;
}

/* The functions of a Go executable without symbols, from its function table. */
static int collect_go(struct sym_builder *b, struct sym_file *f, const struct elf_file *ef)
{
	size_t i;
	int err = 0;

	if (load_go_table(f, ef)) {
		free(f->go_buf);
		f->go_buf = NULL;
		memset(&f->go, 0, sizeof(f->go));
		return 0;
	}
	/* the buffer: the section, or the whole segment the table ends */
	f->bytes += f->go.p - (const unsigned char *)f->go_buf + f->go.len;
	for (i = 0; i < f->go.nfunc && !err; i++) {
		struct raw_sym r = {.rank = 8 + 4 + 2};

		if (!gopcln__func(&f->go, i, &r.start, &r.limit, &r.name)) {
			r.size = r.limit - r.start;
			err = builder_add(b, &r);
		}
	}
	return err;
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
bool sym_file__vaddr(const struct sym_file *f, __u64 off, __u64 *vaddr)
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

const struct sym_entry *sym_file__find(const struct sym_file *f, __u64 vaddr)
{
	size_t lo = SORTED_UPPER_BOUND(f->syms, f->nr_syms, start, vaddr), k;

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
struct elf_file *sym_file__open_debug(const struct symbolizer *sym, const struct sym_file *f,
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
int sym_file__parse(const struct symbolizer *sym, struct sym_file *f, int fd, __u32 pid,
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
		struct elf_file *dbg = sym_file__open_debug(sym, f, pid, path, &dfd);

		if (dbg) {
			err = collect_all(&b, dbg, &has_symtab);
			if (!err)
				err = builder_finish(&b, f);
			elf_file__close(dbg);
			close(dfd);
			goto out_close;
		}
		/* Go stripped with -s: no .symtab, but the runtime's own table */
		err = collect_go(&b, f, ef);
	}
	if (!err)
		err = builder_finish(&b, f);
out_close:
	free(b.v);
	elf_file__close(ef);
	return err;
}
