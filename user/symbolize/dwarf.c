// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DWARF lookups with libdw: address -> compile unit (our own table of CU
 * ranges, as .debug_aranges is optional and clang omits it) -> the chain of
 * scopes holding the address -> source positions.
 *
 * libdw's own scope walkers (dwarf_getscopes and friends) recurse once per
 * nesting level of the DIE tree, so a hostile file with deeply nested DIEs
 * would overflow our stack. The walk here is iterative, bounded in depth and
 * in DIEs visited, and requires DIE offsets to increase, which also stops
 * sibling links that loop.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/compiler.h"
#include "lib/sorted.h"
#include "symbolize/dwarf.h"

/* Deeper scope nesting than this (inlines and blocks) is cut at this depth. */
#define MAX_SCOPE_DEPTH 256
/* DIEs looked at by one lookup: a CU has a few thousand at its top level. */
#define MAX_DIE_VISITS (1u << 20)
#define MAX_UNITS      (1u << 20)
#define MAX_RANGES     (4u << 20)
/* Ranges of one CU that may overlap the one holding an address. */
#define MAX_RANGE_LOOKBACK 8
/*
 * What libdw allocates, measured on glibc's debug file (2063 units, 291211
 * line rows): about 1.6 KiB per unit once its DIE was read (abbreviations),
 * and 67 bytes per line row when a unit's line program is decoded. Its
 * .debug_aranges table, built when a unit has no ranges of its own, holds
 * 24 bytes an entry, and more while it is built.
 */
#define UNIT_BYTES     1664
#define LINE_ROW_BYTES 72
#define ARANGE_BYTES   32

struct cu_unit {
	Dwarf_Off die;	    /* the CU DIE */
	bool lines_charged; /* its decoded line table is counted in bytes */
};

struct cu_range {
	__u64 start, end;
	size_t unit;
};

struct dwarf_file {
	Elf *elf;
	Dwarf *dw;
	struct cu_unit *units; /* by offset */
	size_t nr_units;
	struct cu_range *ranges; /* sorted by start */
	size_t nr_ranges;
	size_t bytes;
	bool aranges_charged;
	Dwarf_Die stack[MAX_SCOPE_DEPTH]; /* scratch for the walk */
};

static __u64 be64(const unsigned char *p)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * Sections lookups never use, which libdw would read (and decompress) when
 * it opens a file: locations (14 % of glibc's DWARF), call frames, macros,
 * name indexes and type units.
 */
static bool section_unused(const char *suffix)
{
	static const char *const unused[] = {
		"loc",	    "loclists",	    "frame",	    "macro", "macinfo", "pubnames",
		"pubtypes", "gnu_pubnames", "gnu_pubtypes", "names", "types",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unused); i++)
		if (!strcmp(suffix, unused[i]))
			return true;
	return false;
}

/*
 * The size of the debug sections once libdw has read and decompressed them.
 * The unused ones are hidden from libdw as SHT_NOBITS, which it skips (in our
 * copy of the section headers; the file is not written).
 */
static int debug_sections_size(Elf *elf, size_t max_bytes, size_t *total)
{
	bool has_info = false;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*total = 0;
	/* no section headers: no DWARF here, maybe in a debug file */
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENODATA;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name, *suffix;
		GElf_Shdr sh;
		__u64 size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strncmp(name, ".debug_", 7))
			suffix = name + 7;
		else if (!strncmp(name, ".zdebug_", 8))
			suffix = name + 8;
		else
			continue;
		if (section_unused(suffix)) {
			sh.sh_type = SHT_NOBITS;
			if (!gelf_update_shdr(scn, &sh))
				return -EINVAL;
			continue;
		}
		size = sh.sh_size;
		/* checked before reading a compressed section for its header */
		if (size > max_bytes - *total)
			return -EFBIG;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			/* libdw skips what it cannot decompress */
			if (!gelf_getchdr(scn, &ch))
				continue;
			size = ch.ch_size;
		} else if (name[1] == 'z') {
			/* GNU style: "ZLIB" and the uncompressed size, big-endian */
			Elf_Data *raw = elf_rawdata(scn, NULL);

			if (!raw || !raw->d_buf || raw->d_size < 12 ||
			    memcmp(raw->d_buf, "ZLIB", 4))
				continue;
			size = be64((const unsigned char *)raw->d_buf + 4);
		}
		if (size > max_bytes - *total)
			return -EFBIG;
		*total += size;
		if (!strcmp(suffix, "info") && size)
			has_info = true;
	}
	return has_info ? 0 : -ENODATA;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/*
 * Grows the array at arrp (of *cap elements of size sz, n used) to hold one
 * more, within limit elements and max_bytes.
 */
static int grow(void *arrp, size_t *cap, size_t n, size_t sz, size_t limit, size_t *bytes,
		size_t max_bytes)
{
	size_t old = *cap, ncap = old ? old * 2 : 64;

	if (n < old)
		return 0;
	if (ncap > limit || (ncap - old) * sz > max_bytes - *bytes)
		return -EFBIG;
	if (array__reserve(arrp, cap, n + 1, sz, 64))
		return -ENOMEM;
	*bytes += (*cap - old) * sz;
	return 0;
}

/*
 * The compile units and their address ranges, sorted. A unit that cannot be
 * read ends the table: the units before it still resolve.
 */
static int ranges_build(struct dwarf_file *df, size_t max_bytes)
{
	size_t units_cap = 0, ranges_cap = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	Dwarf_Die cudie;
	__u8 type;
	int err;

	/* bounded by max_bytes: every unit is counted */
	while (!dwarf_get_units(df->dw, cu, &cu, &version, &type, &cudie, NULL)) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (UNIT_BYTES > max_bytes - df->bytes)
			return -EFBIG;
		df->bytes += UNIT_BYTES;
		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		err = grow(&df->units, &units_cap, df->nr_units, sizeof(*df->units), MAX_UNITS,
			   &df->bytes, max_bytes);
		if (err)
			return err;
		df->units[df->nr_units] = (struct cu_unit){dwarf_dieoffset(&cudie), false};
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (start >= end)
				continue;
			err = grow(&df->ranges, &ranges_cap, df->nr_ranges, sizeof(*df->ranges),
				   MAX_RANGES, &df->bytes, max_bytes);
			if (err)
				return err;
			df->ranges[df->nr_ranges++] = (struct cu_range){start, end, df->nr_units};
		}
		df->nr_units++;
	}
	if (df->nr_ranges)
		qsort(df->ranges, df->nr_ranges, sizeof(*df->ranges), cmp_range);
	return 0;
}

int dwarf_file__open(int fd, size_t max_bytes, dwarf_reserve_fn reserve, void *ctx,
		     struct dwarf_file **out)
{
	struct dwarf_file *df;
	int err;

	*out = NULL;
	if (max_bytes < sizeof(*df))
		return -EFBIG;
	df = calloc(1, sizeof(*df));
	if (!df)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	/*
	 * Not ELF_C_READ_MMAP, with which libdw would use uncompressed sections
	 * in place, as clean file pages: a process can truncate its own file
	 * under our mapping, and reading past the end is SIGBUS. Compressed
	 * sections (debug packages, -gz) are copies either way; all copies are
	 * counted.
	 */
	df->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!df->elf || elf_kind(df->elf) != ELF_K_ELF) {
		err = -EINVAL;
		goto out_free;
	}
	err = debug_sections_size(df->elf, max_bytes - sizeof(*df), &df->bytes);
	if (err)
		goto out_free;
	df->bytes += sizeof(*df);
	err = reserve ? reserve(ctx, df->bytes) : 0;
	if (err)
		goto out_free;
	df->dw = dwarf_begin_elf(df->elf, DWARF_C_READ, NULL);
	if (!df->dw) {
		err = -EINVAL;
		goto out_free;
	}
	/* libdw has read every section it uses: no more file I/O, fd may go. */
	elf_cntl(df->elf, ELF_C_FDDONE);
	err = ranges_build(df, max_bytes);
	if (err)
		goto out_free;
	*out = df;
	return 0;

out_free:
	dwarf_file__close(df);
	return err;
}

void dwarf_file__close(struct dwarf_file *df)
{
	if (!df)
		return;
	dwarf_end(df->dw);
	elf_end(df->elf);
	free(df->units);
	free(df->ranges);
	free(df);
}

size_t dwarf_file__bytes(const struct dwarf_file *df)
{
	return df->bytes;
}

/* The unit whose DIE is at off, or NULL. */
static struct cu_unit *unit_at(struct dwarf_file *df, Dwarf_Off off)
{
	size_t i = SORTED_UPPER_BOUND(df->units, df->nr_units, die, off);

	return i && df->units[i - 1].die == off ? &df->units[i - 1] : NULL;
}

/* The compile unit whose ranges hold addr; .debug_aranges for units without ranges. */
static struct cu_unit *cu_find(struct dwarf_file *df, __u64 addr, Dwarf_Die *cudie)
{
	size_t lo = SORTED_UPPER_BOUND(df->ranges, df->nr_ranges, start, addr), k;

	for (k = 0; k < MAX_RANGE_LOOKBACK && lo > k; k++) {
		const struct cu_range *r = &df->ranges[lo - 1 - k];
		struct cu_unit *u = &df->units[r->unit];

		if (addr < r->end)
			return dwarf_offdie(df->dw, u->die, cudie) ? u : NULL;
	}
	if (!df->aranges_charged) {
		Dwarf_Aranges *ar;
		size_t n;

		df->aranges_charged = true;
		if (!dwarf_getaranges(df->dw, &ar, &n))
			df->bytes += n * ARANGE_BYTES;
	}
	if (!dwarf_addrdie(df->dw, addr, cudie))
		return NULL;
	return unit_at(df, dwarf_dieoffset(cudie));
}

/* Counts the line table of unit u once libdw has decoded it. */
static void unit_charge_lines(struct dwarf_file *df, struct cu_unit *u, Dwarf_Die *cudie)
{
	Dwarf_Lines *rows;
	size_t n;

	if (u->lines_charged)
		return;
	u->lines_charged = true;
	if (!dwarf_getsrclines(cudie, &rows, &n))
		df->bytes += n * LINE_ROW_BYTES;
}

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* Scopes that hold code: entered only when they hold the address. */
static bool is_code_scope(int tag)
{
	return is_function(tag) || tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	       tag == DW_TAG_catch_block || tag == DW_TAG_with_stmt;
}

/* Scopes without addresses that may hold functions (Rust and Fortran nest them). */
static bool is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module;
}

/*
 * Walks down from cudie to the innermost code scope holding pc. Returns the
 * depth reached: df->stack[0] is the CU, df->stack[1..depth] the containers
 * and code scopes on the way.
 */
static size_t scopes_walk(struct dwarf_file *df, Dwarf_Die *cudie, Dwarf_Addr pc)
{
	Dwarf_Die *st = df->stack, cur;
	Dwarf_Off last = dwarf_dieoffset(cudie);
	size_t depth = 0, visits = 0;
	int r;

	st[0] = *cudie;
	r = dwarf_child(&st[0], &cur);
	for (;;) {
		int tag;

		if (r) {
			/* The children of st[depth] are done. */
			if (!depth || !is_container(dwarf_tag(&st[depth])))
				break;
			r = dwarf_siblingof(&st[depth--], &cur);
			continue;
		}
		if (++visits > MAX_DIE_VISITS || dwarf_dieoffset(&cur) <= last)
			break;
		last = dwarf_dieoffset(&cur);
		tag = dwarf_tag(&cur);
		if ((is_code_scope(tag) && dwarf_haspc(&cur, pc) > 0) ||
		    (is_container(tag) && dwarf_haschildren(&cur) > 0)) {
			if (depth + 1 == MAX_SCOPE_DEPTH)
				break;
			st[++depth] = cur;
			r = dwarf_child(&st[depth], &cur);
			continue;
		}
		r = dwarf_siblingof(&cur, &cur);
	}
	/* Containers left on top did not hold pc. */
	while (depth && is_container(dwarf_tag(&st[depth])))
		depth--;
	return depth;
}

/* The linkage name (what the symbol table says) if there is one. */
static const char *function_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return name ? name : dwarf_diename(die);
}

static __u32 udata_attr(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(die, name, &a), &v) || v > UINT32_MAX)
		return 0;
	return v;
}

/* Fills *l with the function of die; the position is the caller's. */
static void line_function(struct sym_line *l, Dwarf_Die *die)
{
	int decl;

	l->function = function_name(die);
	if (!dwarf_decl_line(die, &decl) && decl > 0)
		l->start_line = decl;
}

/* Where inlined (a DW_TAG_inlined_subroutine) was called from, into *l. */
static void line_call_site(struct sym_line *l, Dwarf_Die *cudie, Dwarf_Die *inlined)
{
	Dwarf_Files *files;
	size_t nfiles;
	__u32 file;

	if (dwarf_tag(inlined) != DW_TAG_inlined_subroutine)
		return;
	file = udata_attr(inlined, DW_AT_call_file);
	if (!dwarf_getsrcfiles(cudie, &files, &nfiles))
		l->file = dwarf_filesrc(files, file, NULL, NULL);
	l->line = udata_attr(inlined, DW_AT_call_line);
	l->column = udata_attr(inlined, DW_AT_call_column);
}

size_t dwarf_file__lookup(struct dwarf_file *df, __u64 vaddr, struct sym_line *lines, size_t max)
{
	Dwarf_Die cudie, *fn[MAX_SCOPE_DEPTH];
	size_t depth, nfn = 0, i, n;
	struct cu_unit *unit;
	Dwarf_Line *row;

	unit = max ? cu_find(df, vaddr, &cudie) : NULL;
	if (!unit)
		return 0;
	depth = scopes_walk(df, &cudie, vaddr);
	/* Functions from the innermost out, up to the first one not inlined. */
	for (i = depth; i > 0; i--) {
		int tag = dwarf_tag(&df->stack[i]);

		if (!is_function(tag))
			continue;
		fn[nfn++] = &df->stack[i];
		if (tag != DW_TAG_inlined_subroutine)
			break;
	}
	row = dwarf_getsrc_die(&cudie, vaddr);
	unit_charge_lines(df, unit, &cudie);
	if (!nfn && !row)
		return 0;
	n = !nfn ? 1 : nfn < max ? nfn : max;
	memset(lines, 0, n * sizeof(*lines));
	if (row) {
		int v;

		lines[0].file = dwarf_linesrc(row, NULL, NULL);
		if (!dwarf_lineno(row, &v) && v > 0)
			lines[0].line = v;
		if (!dwarf_linecol(row, &v) && v > 0)
			lines[0].column = v;
	}
	for (i = 0; i < n && nfn; i++) {
		/* Past max - 1 entries, the last one is the outermost function. */
		size_t k = i + 1 == n ? nfn - 1 : i;

		line_function(&lines[i], fn[k]);
		if (k)
			line_call_site(&lines[i], &cudie, fn[k - 1]);
	}
	return n;
}
