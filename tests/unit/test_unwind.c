// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind rows (user/unwind/table.c) against an independent reading of the
 * same CFI: binutils' `readelf --debug-dump=frames-interp`, whose table
 * gives, per address, the CFA rule and where each register was saved. Every
 * row readelf prints must be found at its address with the same rules, for
 * the fixtures of tests/unwind (x86-64 and aarch64; .eh_frame, .debug_frame,
 * a separate debug file) and the system's libc. readelf prints a CFA
 * expression as "exp": objdump's listing of the CFA instructions says which
 * are gcc's stack realignment, *(rbp + offset), whose rows must have that
 * rule and offset. Mutated copies of a fixture must give an error or rows,
 * never a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind/table.h"

static char fx_dir[PATH_MAX - 64];

static const char *fx_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", fx_dir, name);
	return buf;
}

struct opened {
	int fd;
	Elf *elf;
};

static void open_elf(const char *path, struct opened *o)
{
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(o->elf);
}

static void close_elf(struct opened *o)
{
	elf_end(o->elf);
	close(o->fd);
}

/* The names readelf gives the registers the rows describe. */
struct arch_names {
	const char *sp, *fp;
	bool x86;
};

static const struct arch_names x86_names = {"rsp", "rbp", true};
static const struct arch_names a64_names = {"sp", "x29", false};

/* From lo up to hi, the CFA is *(rbp + off) unless off is NO_DEREF. */
struct deref_span {
	__u64 lo, hi;
	long off;
	bool fp_at_fp; /* the caller's rbp is saved at rbp */
};

#define NO_DEREF LONG_MIN

struct deref_spans {
	struct deref_span *v;
	size_t len, cap;
};

struct check_stats {
	size_t fdes;
	size_t rows;
	size_t sp_rows; /* rows with a CFA from SP or FP that were compared in full */
	const struct deref_spans *derefs;
	size_t deref_rows;     /* rows of gcc's realignment compared in full */
	long deref_offsets[2]; /* the first two offsets seen, NO_DEREF before */
};

/* Offset N of "reg+N" when cfa starts with reg+; else false. */
static bool cfa_of(const char *cfa, const char *reg, long *off)
{
	size_t n = strlen(reg);
	char *end;

	if (strncmp(cfa, reg, n) || cfa[n] != '+')
		return false;
	*off = strtol(cfa + n + 1, &end, 10);
	return !*end;
}

/* "c-N" -> -N */
static bool saved_at(const char *v, long *off)
{
	char *end;

	if (v[0] != 'c' || (v[1] != '-' && v[1] != '+'))
		return false;
	*off = strtol(v + 1, &end, 10);
	return !*end;
}

/* Splits line into at most n whitespace-separated words. */
static size_t words(char *line, char **w, size_t n)
{
	size_t k = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(line, " \t\n", &save); tok && k < n;
	     tok = strtok_r(NULL, " \t\n", &save))
		w[k++] = tok;
	return k;
}

static int cmp_pc_span(const void *key, const void *elem)
{
	__u64 pc = *(const __u64 *)key;
	const struct deref_span *s = elem;

	return pc < s->lo ? -1 : pc >= s->hi;
}

/* The span of derefs holding pc, or NULL. */
static const struct deref_span *deref_at(const struct deref_spans *d, __u64 pc)
{
	return d && d->len ? bsearch(&pc, d->v, d->len, sizeof(*d->v), cmp_pc_span) : NULL;
}

/* A row whose CFA readelf prints as an expression: one of the forms recognized, or none. */
static void check_expression_row(const struct lp_unwind_row *row, const struct arch_names *a,
				 __u64 pc, const char *ra, struct check_stats *st)
{
	const struct deref_span *d = a->x86 ? deref_at(st->derefs, pc) : NULL;
	unsigned int rule = row->cfa & LP_CFA_RULE_MASK;
	long off = ((__s16)row->cfa >> LP_CFA_RULE_BITS) * 8;

	if (!d || d->off == NO_DEREF) {
		if (rule == LP_CFA_SP || rule == LP_CFA_FP || rule == LP_CFA_FP_DEREF)
			fail_msg("pc %#llx: CFA expression taken as rule %u",
				 (unsigned long long)pc, rule);
		return;
	}
	/* gcc's realignment, with the frame record at rbp and the return address above the CFA */
	if (!d->fp_at_fp || strcmp(ra, "c-8")) {
		assert_int_equal(rule, LP_CFA_NONE);
		return;
	}
	if (rule != LP_CFA_FP_DEREF || off != d->off || row->regs)
		fail_msg("pc %#llx: CFA *(rbp%+ld), row rule %u offset %ld regs %d",
			 (unsigned long long)pc, d->off, rule, off, row->regs);
	st->deref_rows++;
	if (st->deref_offsets[0] == NO_DEREF)
		st->deref_offsets[0] = off;
	else if (st->deref_offsets[1] == NO_DEREF && off != st->deref_offsets[0])
		st->deref_offsets[1] = off;
}

/*
 * A span from pc to end (its FDE's), which ends the FDE's span before it (the
 * FDE's spans start at first); at the same pc, it replaces that one.
 */
static void push_span(struct deref_spans *d, size_t first, __u64 pc, __u64 end, long off,
		      bool fp_at_fp)
{
	struct deref_span *last = d->len > first ? &d->v[d->len - 1] : NULL;

	if (last && last->lo == pc) {
		last->off = off;
		last->fp_at_fp = fp_at_fp;
		return;
	}
	if (last)
		last->hi = pc;
	if (pc >= end)
		return;
	if (d->len == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 256;
		d->v = realloc(d->v, d->cap * sizeof(*d->v));
		assert_non_null(d->v);
	}
	d->v[d->len++] = (struct deref_span){pc, end, off, fp_at_fp};
}

static int cmp_span(const void *a, const void *b)
{
	const struct deref_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Where the CFA is *(rbp + offset) in path, by objdump's listing of each
 * FDE's CFA instructions: the state after each instruction, from its
 * location to the next one's or the FDE's end. A CIE sets neither.
 */
static void read_derefs(const char *path, struct deref_spans *d)
{
	char cmd[PATH_MAX + 64], line[1024], *w[8], *to;
	long off = NO_DEREF, stack_off[8];
	bool fp_at_fp = false, stack_fp[8], in_fde = false;
	unsigned long long lo, hi = 0, loc = 0;
	size_t n, depth = 0, first = 0;
	int end;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump --dwarf=frames '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char copy[sizeof(line)];
		long o;

		line[strcspn(line, "\n")] = '\0';
		strcpy(copy, line);
		n = words(copy, w, 8);
		if (n >= 4 && !strcmp(w[3], "CIE")) {
			in_fde = false;
			continue;
		}
		if (n >= 6 && !strcmp(w[3], "FDE") &&
		    sscanf(w[5], "pc=%llx..%llx", &lo, &hi) == 2) {
			in_fde = true;
			loc = lo;
			off = NO_DEREF;
			fp_at_fp = false;
			depth = 0;
			first = d->len;
			push_span(d, first, loc, hi, off, fp_at_fp);
			continue;
		}
		if (!in_fde || n < 1 || strncmp(w[0], "DW_CFA_", 7))
			continue;
		if (!strncmp(w[0], "DW_CFA_advance_loc", 18)) {
			to = strstr(line, " to ");
			assert_non_null(to);
			loc = strtoull(to + 4, NULL, 16);
			continue;
		}
		end = 0;
		if (sscanf(line,
			   " DW_CFA_def_cfa_expression (DW_OP_breg6 (rbp): %ld; DW_OP_deref)%n", &o,
			   &end) == 1 &&
		    end && !line[end])
			off = o;
		else if (!strncmp(w[0], "DW_CFA_def_cfa", 14))
			off = NO_DEREF;
		else if (!strcmp(w[0], "DW_CFA_remember_state") && depth < 8) {
			stack_off[depth] = off;
			stack_fp[depth++] = fp_at_fp;
		} else if (!strcmp(w[0], "DW_CFA_restore_state") && depth) {
			off = stack_off[--depth];
			fp_at_fp = stack_fp[depth];
		} else if (strstr(line, " r6 (rbp)"))
			fp_at_fp = strstr(line,
					  "DW_CFA_expression: r6 (rbp) (DW_OP_breg6 (rbp): 0)") &&
				   !strstr(line, ";");
		else
			continue;
		push_span(d, first, loc, hi, off, fp_at_fp);
	}
	pclose(p);
	/* FDEs come in section order; they do not overlap, so each one's spans stay in order */
	if (d->len)
		qsort(d->v, d->len, sizeof(*d->v), cmp_span);
}

/* The row readelf's line describes must be the one at pc. */
static void check_row(const struct unwind_table *t, const struct arch_names *a, __u64 pc,
		      const char *cfa, const char *fp, const char *ra, struct check_stats *st)
{
	const struct lp_unwind_row *row = unwind_table__find(t, pc);
	unsigned int rule, off;
	long want_off, fp_off = 0, ra_off = 0;
	bool fp_saved = false, ra_saved;
	int regs, ra_rule, got_fp;

	if (!row)
		fail_msg("pc %#llx: no row", (unsigned long long)pc);
	rule = row->cfa & LP_CFA_RULE_MASK;
	off = (row->cfa >> LP_CFA_RULE_BITS) * 8;
	regs = row->regs;
	ra_rule = regs & LP_RA_RULE_MASK;
	got_fp = regs & ~LP_RA_RULE_MASK;
	st->rows++;

	/* an undefined return address: the outermost frame */
	if (!strcmp(ra, "u") && a->x86) {
		if (rule != LP_CFA_END)
			fail_msg("pc %#llx: ra undefined, rule %u", (unsigned long long)pc, rule);
		return;
	}
	if (!strcmp(cfa, "exp")) {
		check_expression_row(row, a, pc, ra, st);
		return;
	}
	if (!strcmp(ra, "u") && rule == LP_CFA_END) /* aarch64: undefined or not yet saved */
		return;
	ra_saved = saved_at(ra, &ra_off);
	if (strcmp(fp, "u") && strcmp(fp, "s")) {
		fp_saved = saved_at(fp, &fp_off);
		if (!fp_saved) { /* saved in a register, or by an expression */
			assert_int_equal(rule, LP_CFA_NONE);
			return;
		}
	}
	if (cfa_of(cfa, a->sp, &want_off)) {
		if (want_off % 8) {
			assert_int_equal(rule, LP_CFA_NONE);
			return;
		}
		if (rule != LP_CFA_SP || off != want_off)
			fail_msg("pc %#llx: CFA %s, row rule %u offset %u", (unsigned long long)pc,
				 cfa, rule, off);
	} else if (cfa_of(cfa, a->fp, &want_off)) {
		if (rule != LP_CFA_FP || off != want_off)
			fail_msg("pc %#llx: CFA %s, row rule %u offset %u", (unsigned long long)pc,
				 cfa, rule, off);
	} else {
		if (rule != LP_CFA_NONE)
			fail_msg("pc %#llx: CFA %s, row rule %u", (unsigned long long)pc, cfa, rule);
		return;
	}
	st->sp_rows++;
	if (a->x86) {
		assert_true(ra_saved);
		assert_int_equal(ra_off, -8);
		assert_int_equal(ra_rule, LP_RA_CFA_M8);
		assert_int_equal(got_fp, fp_saved ? fp_off : 0);
		return;
	}
	if (!ra_saved) {
		assert_string_equal(ra, "u");
		assert_int_equal(ra_rule, LP_RA_LR);
		assert_int_equal(got_fp, fp_saved ? fp_off : 0);
	} else if (fp_saved) {
		assert_int_equal(ra_off, fp_off + 8);
		assert_int_equal(ra_rule, LP_RA_FP_P8);
		assert_int_equal(got_fp, fp_off);
	} else {
		assert_int_equal(ra_rule, LP_RA_AT);
		assert_int_equal(got_fp, ra_off);
	}
}

#define MAX_COLS 40

/*
 * Whether pc lies inside a range of rows that started before it: a
 * .debug_frame FDE overlapped by an .eh_frame one, whose rows the table keeps.
 */
static bool eh_fde_at(const struct unwind_table *t, __u64 pc)
{
	const struct lp_unwind_row *row = unwind_table__find(t, pc);

	return row && row->pc < pc;
}

/*
 * Compares readelf's frames-interp table of path with t. An FDE without a
 * table of its own has its CIE's: readelf prints those after the CIE.
 */
static void check_against_readelf(const char *path, const struct unwind_table *t,
				  const struct arch_names *a, struct check_stats *st)
{
	char cmd[PATH_MAX + 64], line[1024], *w[MAX_COLS], *cols[MAX_COLS];
	char cie_cfa[32] = "", cie_fp[32] = "u", cie_ra[32] = "u";
	size_t ncols = 0, n, i, fp_col, ra_col;
	bool in_cie = false, fde_has_rows = false, in_fde = false;
	unsigned long long fde_start = 0, lo, hi;
	bool debug_frame = false;
	struct deref_spans derefs = {};
	FILE *p;

	if (a->x86)
		read_derefs(path, &derefs);
	st->derefs = &derefs;
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char copy[sizeof(line)];

		strcpy(copy, line);
		n = words(copy, w, MAX_COLS);
		if (n >= 4 && !strcmp(w[0], "Contents") && !strcmp(w[1], "of") &&
		    !strcmp(w[2], "the")) {
			debug_frame = !strcmp(w[3], ".debug_frame");
			continue;
		}
		if (n >= 4 && !strcmp(w[3], "CIE")) {
			in_cie = true;
			in_fde = false;
			continue;
		}
		if (n >= 6 && !strcmp(w[3], "FDE") && !strncmp(w[5], "pc=", 3)) {
			if (in_fde && !fde_has_rows && cie_cfa[0])
				check_row(t, a, fde_start, cie_cfa, cie_fp, cie_ra, st);
			if (sscanf(w[5], "pc=%llx..%llx", &lo, &hi) != 2)
				fail_msg("readelf: %s", line);
			/* a function in both .eh_frame and .debug_frame: .eh_frame's counts */
			in_fde = !debug_frame || !eh_fde_at(t, lo);
			fde_start = lo;
			fde_has_rows = false;
			in_cie = false;
			if (in_fde)
				st->fdes++;
			continue;
		}
		if (n >= 2 && !strcmp(w[0], "LOC") && !strcmp(w[1], "CFA")) {
			for (i = 0; i < ncols; i++)
				free(cols[i]);
			for (i = 0; i < n; i++)
				cols[i] = strdup(w[i]);
			ncols = n;
			continue;
		}
		if (!ncols || n != ncols || strlen(w[0]) != 16)
			continue;
		fp_col = ra_col = 0;
		for (i = 2; i < ncols; i++) {
			if (!strcmp(cols[i], a->fp))
				fp_col = i;
			if (!strcmp(cols[i], "ra"))
				ra_col = i;
		}
		if (in_cie) {
			snprintf(cie_cfa, sizeof(cie_cfa), "%s", w[1]);
			snprintf(cie_fp, sizeof(cie_fp), "%s", fp_col ? w[fp_col] : "u");
			snprintf(cie_ra, sizeof(cie_ra), "%s", ra_col ? w[ra_col] : "u");
		} else if (in_fde) {
			fde_has_rows = true;
			check_row(t, a, strtoull(w[0], NULL, 16), w[1], fp_col ? w[fp_col] : "u",
				  ra_col ? w[ra_col] : "u", st);
		}
	}
	if (in_fde && !fde_has_rows && cie_cfa[0])
		check_row(t, a, fde_start, cie_cfa, cie_fp, cie_ra, st);
	for (i = 0; i < ncols; i++)
		free(cols[i]);
	/* readelf exits 1 over what it cannot display elsewhere: the FDE count is checked instead */
	pclose(p);
	st->derefs = NULL;
	free(derefs.v);
}

static void check_sorted(const struct unwind_table *t)
{
	size_t i;

	for (i = 1; i < t->count; i++) {
		assert_true(t->rows[i - 1].pc < t->rows[i].pc);
		assert_false(t->rows[i - 1].cfa == t->rows[i].cfa &&
			     t->rows[i - 1].regs == t->rows[i].regs);
	}
}

/* Builds the table of file (with CFI from debug, if given) and compares it with readelf's. */
static void check_file(const char *file, const char *debug, const struct arch_names *a,
		       size_t min_fdes, struct check_stats *out)
{
	struct opened o, d = {.fd = -1};
	struct check_stats st = {.deref_offsets = {NO_DEREF, NO_DEREF}};
	struct unwind_table t;
	char err[256];

	open_elf(file, &o);
	if (debug)
		open_elf(debug, &d);
	if (unwind_table__build(o.elf, debug ? d.elf : NULL, &t, err, sizeof(err)))
		fail_msg("%s: %s", file, err);
	check_sorted(&t);
	check_against_readelf(debug ? debug : file, &t, a, &st);
	if (debug) /* the file's own .eh_frame, from the C runtime */
		check_against_readelf(file, &t, a, &st);
	print_message("%s: %zu rows (%zu bytes), %zu FDEs, %zu readelf rows (%zu by SP/FP, %zu "
		      "realigned by gcc)\n",
		      file, t.count, t.count * sizeof(struct lp_unwind_row), st.fdes, st.rows,
		      st.sp_rows, st.deref_rows);
	assert_true(st.fdes >= min_fdes);
	assert_true(st.sp_rows > 0);
	unwind_table__free(&t);
	if (debug)
		close_elf(&d);
	close_elf(&o);
	if (out)
		*out = st;
}

static void fixture(const char *name, const char *debug_name, const struct arch_names *a)
{
	char path[PATH_MAX], dpath[PATH_MAX];
	struct check_stats st;

	/* fx.c has 8 functions besides those of the C runtime */
	check_file(fx_path(name, path, sizeof(path)),
		   debug_name ? fx_path(debug_name, dpath, sizeof(dpath)) : NULL, a, 8, &st);
	/* gcc realigned two of them on x86-64: the CFA is *(rbp - 8), and *(rbp - 16) */
	if (a->x86) {
		long lo = st.deref_offsets[0] < st.deref_offsets[1] ? st.deref_offsets[0]
								    : st.deref_offsets[1];

		assert_true(st.deref_rows >= 2);
		assert_int_equal(lo, -16);
		assert_int_equal(st.deref_offsets[0] + st.deref_offsets[1] - lo, -8);
	}
}

static void test_x86_eh_frame(void **state)
{
	fixture("fx-x86-eh", NULL, &x86_names);
}

static void test_x86_debug_frame(void **state)
{
	fixture("fx-x86-debug", NULL, &x86_names);
}

static void test_x86_split_debug(void **state)
{
	fixture("fx-x86-split", "fx-x86-split.debug", &x86_names);
}

static void test_a64_eh_frame(void **state)
{
	fixture("fx-arm64-eh", NULL, &a64_names);
}

static void test_a64_debug_frame(void **state)
{
	fixture("fx-arm64-debug", NULL, &a64_names);
}

static void test_a64_split_debug(void **state)
{
	fixture("fx-arm64-split", "fx-arm64-split.debug", &a64_names);
}

/* Return addresses signed by pointer authentication: the same rules as unsigned ones. */
static void test_a64_pac(void **state)
{
	fixture("fx-arm64-pac", NULL, &a64_names);
}

/* The system's libc, as profiled processes use it: PLT, signal trampoline, entry points. */
static void test_x86_libc(void **state)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct opened o;
	struct unwind_table t;
	size_t i, rules[8] = {};
	char err[256];

	if (access(libc, R_OK)) {
		print_message("[  SKIP    ] no x86-64 glibc at %s\n", libc);
		skip();
	}
	check_file(libc, NULL, &x86_names, 1000, NULL);
	open_elf(libc, &o);
	assert_int_equal(unwind_table__build(o.elf, NULL, &t, err, sizeof(err)), 0);
	for (i = 0; i < t.count; i++)
		rules[t.rows[i].cfa & LP_CFA_RULE_MASK]++;
	/* glibc has a PLT, __restore_rt (a signal frame) and entry points (clone3, start) */
	assert_true(rules[LP_CFA_PLT] >= 1);
	assert_int_equal(rules[LP_CFA_SIGNAL], 1);
	assert_true(rules[LP_CFA_END] >= 1);
	unwind_table__free(&t);
	close_elf(&o);
}

/*
 * A signal trampoline without CFI (arm64's __kernel_rt_sigreturn) made a
 * signal row: inside a row's range, past the last row, before the first.
 */
static void test_set_signal(void **state)
{
	static const struct lp_unwind_row rows[] = {
		{.pc = 0x100, .cfa = LP_CFA_SP | 2 << LP_CFA_RULE_BITS, .regs = -16 | LP_RA_FP_P8},
		{.pc = 0x200, .cfa = LP_CFA_FP | 2 << LP_CFA_RULE_BITS, .regs = -16 | LP_RA_FP_P8},
		{.pc = 0x300, .cfa = LP_CFA_NO_CFI},
	};
	struct unwind_table t = {};
	const struct lp_unwind_row *r;

	t.rows = malloc(sizeof(rows));
	assert_non_null(t.rows);
	memcpy(t.rows, rows, sizeof(rows));
	t.count = t.cap = 3;
	assert_int_equal(unwind_table__set_signal(&t, 0x1fc, 0x208), 0);
	check_sorted(&t);
	assert_int_equal(t.count, 4);
	assert_int_equal(unwind_table__find(&t, 0x1fb)->cfa, rows[0].cfa);
	assert_int_equal(unwind_table__find(&t, 0x1fc)->cfa, LP_CFA_SIGNAL);
	assert_int_equal(unwind_table__find(&t, 0x207)->cfa, LP_CFA_SIGNAL);
	r = unwind_table__find(&t, 0x208);
	assert_int_equal(r->cfa, rows[1].cfa);
	assert_int_equal(r->regs, rows[1].regs);
	assert_int_equal(unwind_table__find(&t, 0x300)->cfa, LP_CFA_NO_CFI);
	/* past the last row, then before the first */
	assert_int_equal(unwind_table__set_signal(&t, 0x400, 0x408), 0);
	assert_int_equal(unwind_table__find(&t, 0x404)->cfa, LP_CFA_SIGNAL);
	assert_int_equal(unwind_table__find(&t, 0x408)->cfa, LP_CFA_NO_CFI);
	assert_int_equal(unwind_table__set_signal(&t, 0x10, 0x18), 0);
	assert_int_equal(unwind_table__find(&t, 0x10)->cfa, LP_CFA_SIGNAL);
	assert_int_equal(unwind_table__find(&t, 0x18)->cfa, LP_CFA_NO_CFI);
	assert_int_equal(unwind_table__find(&t, 0x100)->cfa, rows[0].cfa);
	assert_int_equal(t.count, 8);
	check_sorted(&t);
	unwind_table__free(&t);
}

/* A copy of the fixture with bytes of its CFI changed: an error or rows, never a crash. */
static void test_mutated(void **state)
{
	char path[PATH_MAX], err[256];
	struct unwind_table t;
	unsigned char *buf, *copy;
	struct stat st;
	unsigned int seed = 1, i, k;
	int fd;

	fd = open(fx_path("fx-x86-eh", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	copy = malloc(st.st_size);
	assert_non_null(buf);
	assert_non_null(copy);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	for (i = 0; i < 2000; i++) {
		Elf *elf;
		size_t at;

		memcpy(copy, buf, st.st_size);
		/* the CFI sections sit in the first 16 KiB of the fixture */
		for (k = 0; k < 1 + i % 8; k++) {
			at = rand_r(&seed) % (st.st_size < 16384 ? st.st_size : 16384);
			copy[at] = rand_r(&seed);
		}
		elf = elf_memory((char *)copy, st.st_size);
		if (!elf)
			continue;
		if (!unwind_table__build(elf, NULL, &t, err, sizeof(err))) {
			check_sorted(&t);
			unwind_table__free(&t);
		}
		elf_end(elf);
	}
	free(copy);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_eh_frame),   cmocka_unit_test(test_x86_debug_frame),
		cmocka_unit_test(test_x86_split_debug), cmocka_unit_test(test_a64_eh_frame),
		cmocka_unit_test(test_a64_debug_frame), cmocka_unit_test(test_a64_split_debug),
		cmocka_unit_test(test_a64_pac),
		cmocka_unit_test(test_x86_libc),	cmocka_unit_test(test_set_signal),
		cmocka_unit_test(test_mutated),
	};
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash || (size_t)(slash - self) + sizeof("/unwind") > sizeof(fx_dir))
		return 1;
	memcpy(fx_dir, self, slash - self);
	strcpy(fx_dir + (slash - self), "/unwind");
	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
