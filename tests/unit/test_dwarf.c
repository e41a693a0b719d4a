// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DWARF lookups (dwarf.c) on programs built here with gcc and clang: an
 * inlined chain checked against the fixture's own line numbers and against
 * addr2line, compressed sections, clang's output without .debug_aranges;
 * the memory an open file is counted for, announced before it is read; and
 * hostile DWARF: corrupted and truncated sections, a section lookups do not
 * use claiming a terabyte, a DIE tree nested 100000 deep, a sibling link
 * that points back.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "addr2line.h"
#include "symbolize/dwarf.h"
#include "symbolize/symbols.h" /* SYM_MAX_LINES */

/*
 * Each "@name" comment marks a line the tests look up by name: where the
 * markers' addresses (global labels) must resolve, the call sites of the
 * inlined functions, and the functions' declarations.
 */
static const char fx_src[] =
	"static inline __attribute__((always_inline)) int inner(int x) /* @decl_inner */\n"
	"{\n"
	"	x = x * 3;\n"
	"	__asm__ volatile(\".globl lp_mark_inner\\nlp_mark_inner: nop\" : \"+r\"(x)); /* "
	"@inner */\n"
	"	return x + 1;\n"
	"}\n"
	"\n"
	"static inline __attribute__((always_inline)) int middle(int x) /* @decl_middle */\n"
	"{\n"
	"	int y = inner(x + 2); /* @call_inner */\n"
	"	return y * 5;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int lp_outer(int x) /* @decl_outer */\n"
	"{\n"
	"	__asm__ volatile(\"\" : \"+r\"(x));\n"
	"	return middle(x) + 7; /* @call_middle */\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int lp_plain(int x) /* @decl_plain */\n"
	"{\n"
	"	__asm__ volatile(\".globl lp_mark_plain\\nlp_mark_plain: nop\" : \"+r\"(x)); /* "
	"@plain */\n"
	"	return x - 1;\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	return lp_outer(argc) + lp_plain(argc);\n"
	"}\n";

static char tmpdir[64];

static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static const char *tmp_path(const char *name, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
	return buf;
}

/* The line of fx_src holding marker "@name". */
static __u32 src_line(const char *name)
{
	char marker[64];
	const char *at;
	__u32 line = 1;

	snprintf(marker, sizeof(marker), "/* @%s */", name);
	at = strstr(fx_src, marker);
	assert_non_null(at);
	for (const char *p = fx_src; p < at; p++)
		line += *p == '\n';
	return line;
}

static int setup(void **state)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lp-test-dwarf-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	f = fopen(tmp_path("fx.c", path), "w");
	if (!f)
		return -1;
	fputs(fx_src, f);
	fclose(f);
	return run("cd '%s' && gcc -g -O2 -o fx fx.c && gcc -g -gz=zlib -O2 -o fx_z fx.c && "
		   "gcc -O2 -o fx_nodebug fx.c",
		   tmpdir);
}

static int teardown(void **state)
{
	run("rm -rf '%s'", tmpdir);
	return 0;
}

/* The value of symbol name in file, from nm. */
static __u64 nm_addr(const char *file, const char *name)
{
	char cmd[2 * PATH_MAX], line[1024];
	unsigned long long addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, sname[512];

		if (sscanf(line, "%llx %c %511s", &a, &type, sname) == 3 && !strcmp(sname, name))
			addr = a;
	}
	pclose(p);
	assert_true(addr);
	return addr;
}

static struct dwarf_file *open_dwarf(const char *file, size_t max_bytes, int *err)
{
	struct dwarf_file *df = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	*err = dwarf_file__open(fd, max_bytes, NULL, NULL, &df);
	/* fd is not needed after the open */
	close(fd);
	assert_true(*err ? !df : !!df);
	return df;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The chain at lp_mark_inner and the plain function at lp_mark_plain, in file. */
static void check_fixture(const char *file)
{
	struct sym_line l[SYM_MAX_LINES];
	__u32 want[8];
	struct dwarf_file *df;
	size_t n, i;
	__u64 inner = nm_addr(file, "lp_mark_inner"), plain = nm_addr(file, "lp_mark_plain");
	int err;

	df = open_dwarf(file, 64 << 20, &err);
	assert_int_equal(err, 0);
	assert_true(dwarf_file__bytes(df) > 0);

	n = dwarf_file__lookup(df, inner, l, SYM_MAX_LINES);
	assert_int_equal(n, 3);
	assert_string_equal(l[0].function, "inner");
	assert_string_equal(base_name(l[0].file), "fx.c");
	assert_int_equal(l[0].line, src_line("inner"));
	assert_true(l[0].column > 0);
	assert_int_equal(l[0].start_line, src_line("decl_inner"));
	assert_string_equal(l[1].function, "middle");
	assert_string_equal(base_name(l[1].file), "fx.c");
	assert_int_equal(l[1].line, src_line("call_inner"));
	assert_int_equal(l[1].start_line, src_line("decl_middle"));
	assert_string_equal(l[2].function, "lp_outer");
	assert_string_equal(base_name(l[2].file), "fx.c");
	assert_int_equal(l[2].line, src_line("call_middle"));
	assert_int_equal(l[2].start_line, src_line("decl_outer"));
	/* what binutils says */
	assert_int_equal(addr2line(file, inner, want, 8), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(l[i].line, want[i]);

	/* at most max entries: the innermost ones, then the function holding the address */
	n = dwarf_file__lookup(df, inner, l, 2);
	assert_int_equal(n, 2);
	assert_string_equal(l[0].function, "inner");
	assert_int_equal(l[0].line, src_line("inner"));
	assert_string_equal(l[1].function, "lp_outer");
	assert_int_equal(l[1].line, src_line("call_middle"));

	n = dwarf_file__lookup(df, plain, l, SYM_MAX_LINES);
	assert_int_equal(n, 1);
	assert_string_equal(l[0].function, "lp_plain");
	assert_int_equal(l[0].line, src_line("plain"));
	assert_int_equal(l[0].start_line, src_line("decl_plain"));

	/* no code there */
	assert_int_equal(dwarf_file__lookup(df, 0x10, l, SYM_MAX_LINES), 0);
	assert_int_equal(dwarf_file__lookup(df, ~0ULL, l, SYM_MAX_LINES), 0);
	dwarf_file__close(df);
}

static void test_gcc(void **state)
{
	char path[PATH_MAX];

	check_fixture(tmp_path("fx", path));
}

static void test_compressed_sections(void **state)
{
	char path[PATH_MAX];

	/* the sections really are compressed */
	assert_int_equal(run("readelf -S -W '%s/fx_z' | grep -q ' \\.debug_info .* C '", tmpdir),
			 0);
	check_fixture(tmp_path("fx_z", path));
}

/* clang writes no .debug_aranges: units are found by their own ranges. */
static void test_clang(void **state)
{
	char path[PATH_MAX];

	assert_int_equal(run("cd '%s' && clang -g -O2 -o fx_clang fx.c", tmpdir), 0);
	assert_int_not_equal(run("readelf -S '%s/fx_clang' | grep -q debug_aranges", tmpdir), 0);
	check_fixture(tmp_path("fx_clang", path));
}

static void test_open_errors(void **state)
{
	char path[PATH_MAX];
	int err;

	assert_null(open_dwarf(tmp_path("fx_nodebug", path), 64 << 20, &err));
	assert_int_equal(err, -ENODATA);
	assert_null(open_dwarf(tmp_path("fx", path), 1024, &err));
	assert_int_equal(err, -EFBIG);
	assert_null(open_dwarf(tmp_path("fx.c", path), 64 << 20, &err));
	assert_int_equal(err, -EINVAL);
	dwarf_file__close(NULL);
}

struct reservation {
	int calls;
	size_t bytes;
	int ret; /* what the callback returns */
};

static int reserve(void *ctx, size_t bytes)
{
	struct reservation *r = ctx;

	r->calls++;
	r->bytes = bytes;
	return r->ret;
}

static int open_reserving(const char *file, size_t max_bytes, struct reservation *r,
			  struct dwarf_file **df)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), err;

	assert_true(fd >= 0);
	err = dwarf_file__open(fd, max_bytes, reserve, r, df);
	close(fd);
	return err;
}

/*
 * What readelf says the sections lookups use take in file, decompressed by
 * objcopy: all .debug_ sections but locations, call frames, macros, name
 * indexes and type units.
 */
static size_t used_sections_size(const char *file)
{
	char cmd[3 * PATH_MAX], line[1024];
	size_t total = 0;
	FILE *p;

	assert_int_equal(run("objcopy --decompress-debug-sections '%s' '%s.plain'", file, file), 0);
	snprintf(cmd, sizeof(cmd), "readelf -S -W '%s.plain'", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr, off, size;
		char name[64], type[32];

		if (sscanf(line, " [%*[^]]] %63s %31s %llx %llx %llx", name, type, &addr, &off,
			   &size) != 5 ||
		    strncmp(name, ".debug_", 7))
			continue;
		if (strcmp(name, ".debug_loc") && strcmp(name, ".debug_loclists") &&
		    strcmp(name, ".debug_frame") && strcmp(name, ".debug_macro") &&
		    strcmp(name, ".debug_macinfo") && strcmp(name, ".debug_pubnames") &&
		    strcmp(name, ".debug_pubtypes") && strcmp(name, ".debug_gnu_pubnames") &&
		    strcmp(name, ".debug_gnu_pubtypes") && strcmp(name, ".debug_names") &&
		    strcmp(name, ".debug_types"))
			total += size;
	}
	pclose(p);
	assert_true(total);
	return total;
}

/* The caller learns what the sections take before libdw reads them, and may refuse. */
static void test_reserve(void **state)
{
	struct reservation plain = {0}, z = {0}, refused = {.ret = -ENOSPC}, small = {0};
	size_t plain_used, z_used;
	char path[PATH_MAX];
	struct dwarf_file *df;

	assert_int_equal(open_reserving(tmp_path("fx", path), 64 << 20, &plain, &df), 0);
	assert_int_equal(plain.calls, 1);
	/* the unit tables come on top */
	assert_true(plain.bytes > 0 && plain.bytes < dwarf_file__bytes(df));
	dwarf_file__close(df);

	/*
	 * compressed sections count at their size once decompressed: beyond
	 * the sections, both count the same (the handle itself)
	 */
	assert_int_equal(open_reserving(tmp_path("fx_z", path), 64 << 20, &z, &df), 0);
	assert_int_equal(z.calls, 1);
	dwarf_file__close(df);
	z_used = used_sections_size(path);
	plain_used = used_sections_size(tmp_path("fx", path));
	assert_true(z.bytes > z_used && plain.bytes > plain_used);
	assert_int_equal(z.bytes - z_used, plain.bytes - plain_used);

	assert_int_equal(open_reserving(tmp_path("fx", path), 64 << 20, &refused, &df), -ENOSPC);
	assert_null(df);
	assert_int_equal(refused.calls, 1);
	/* too large: refused before the caller is asked */
	assert_int_equal(open_reserving(tmp_path("fx", path), plain.bytes - 1, &small, &df),
			 -EFBIG);
	assert_int_equal(small.calls, 0);
}

struct section {
	size_t offset, size;
};

/* Where section name lies in file. */
static struct section section_of(const char *file, const char *name)
{
	struct section sec = {0};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd = open(file, O_RDONLY);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name))
			sec = (struct section){sh.sh_offset, sh.sh_size};
	}
	elf_end(elf);
	close(fd);
	assert_true(sec.size);
	return sec;
}

static unsigned char *read_file(const char *file, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(file, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

static void write_file(const char *file, const void *buf, size_t len)
{
	int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* What a lookup found at lp_mark_inner: entries (-1: no DWARF), and the innermost one. */
struct found {
	int n;
	bool has_file;
	__u32 line;
	char function[64];
};

/*
 * Looks up the markers in file: never crashes, and every string returned is
 * readable (ASan checks).
 */
static struct found lookup_all(const char *file, __u64 inner, __u64 plain)
{
	const __u64 addrs[] = {inner, plain, plain + 1, inner - 1, 0x10};
	struct found found = {.n = -1};
	struct sym_line l[SYM_MAX_LINES];
	struct dwarf_file *df;
	size_t i, k;
	int err;

	df = open_dwarf(file, 64 << 20, &err);
	if (!df)
		return found;
	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		size_t n = dwarf_file__lookup(df, addrs[i], l, SYM_MAX_LINES);

		assert_true(n <= SYM_MAX_LINES);
		for (k = 0; k < n; k++)
			assert_true(strlen(l[k].function ? l[k].function : "") +
					    strlen(l[k].file ? l[k].file : "") <
				    (1u << 20));
		if (i)
			continue;
		found.n = n;
		if (n) {
			found.has_file = l[0].file;
			found.line = l[0].line;
			snprintf(found.function, sizeof(found.function), "%s",
				 l[0].function ? l[0].function : "");
		}
	}
	dwarf_file__close(df);
	return found;
}

static void test_corrupted_sections(void **state)
{
	char fx[PATH_MAX], bad[PATH_MAX];
	struct section info, line;
	unsigned char *orig, *buf;
	unsigned int rng = 1;
	__u64 inner, plain;
	struct found found;
	size_t len, i;

	tmp_path("fx", fx);
	tmp_path("bad", bad);
	inner = nm_addr(fx, "lp_mark_inner");
	plain = nm_addr(fx, "lp_mark_plain");
	info = section_of(fx, ".debug_info");
	line = section_of(fx, ".debug_line");
	orig = read_file(fx, &len);
	buf = malloc(len);
	assert_non_null(buf);

	/* .debug_info overwritten: no unit, so no lines */
	memcpy(buf, orig, len);
	memset(buf + info.offset, 0xff, info.size);
	write_file(bad, buf, len);
	assert_true(lookup_all(bad, inner, plain).n <= 0);

	/* the unit's abbreviations (DWARF 5 header: at 8) past their section */
	memcpy(buf, orig, len);
	memset(buf + info.offset + 8, 0x7f, 4);
	write_file(bad, buf, len);
	assert_true(lookup_all(bad, inner, plain).n <= 0);

	/* a unit length past the section: libdw may still read the unit */
	memcpy(buf, orig, len);
	memset(buf + info.offset, 0x7f, 4);
	write_file(bad, buf, len);
	lookup_all(bad, inner, plain);

	/* .debug_line overwritten: the functions are known, not where the address is */
	memcpy(buf, orig, len);
	memset(buf + line.offset, 0xff, line.size);
	write_file(bad, buf, len);
	found = lookup_all(bad, inner, plain);
	assert_int_equal(found.n, 3);
	assert_false(found.has_file);
	assert_int_equal(found.line, 0);
	assert_string_equal(found.function, "inner");

	/* cut in the middle of .debug_info, and of .debug_line */
	write_file(bad, orig, info.offset + info.size / 2);
	assert_true(lookup_all(bad, inner, plain).n <= 0);
	write_file(bad, orig, line.offset + line.size / 2);
	found = lookup_all(bad, inner, plain);
	assert_true(found.n <= 0 || !found.line);

	/* random bytes anywhere in either section */
	for (i = 0; i < 300; i++) {
		struct section sec = i & 1 ? info : line;
		unsigned int flips = 1 + i % 16, k;

		memcpy(buf, orig, len);
		for (k = 0; k < flips; k++) {
			rng = rng * 1103515245 + 12345;
			buf[sec.offset + (rng >> 8) % sec.size] = rng >> 16;
		}
		write_file(bad, buf, len);
		lookup_all(bad, inner, plain);
	}
	free(buf);
	free(orig);
}

/*
 * A unit whose DIE tree nests depth lexical blocks in deep_fn, each holding
 * its code (libdw's recursive walkers would overflow the stack), and a unit
 * where two base types before loop_fn have sibling links that point back.
 */
static bool build_hostile(const char *so, unsigned int depth)
{
	char src[PATH_MAX];
	unsigned int i;
	FILE *f;

	f = fopen(tmp_path("deep.s", src), "w");
	assert_non_null(f);
	fputs(".text\n.globl deep_fn\n.type deep_fn, @function\ndeep_fn:\n"
	      "\tnop\n\tnop\n\tnop\n\tret\n.size deep_fn, . - deep_fn\n"
	      ".globl loop_fn\n.type loop_fn, @function\nloop_fn:\n"
	      "\tnop\n\tnop\n\tnop\n\tret\n.size loop_fn, . - loop_fn\n"
	      ".section .debug_abbrev,\"\",@progbits\n"
	      /* 1: compile unit with children, low_pc addr, high_pc data8 */
	      ".uleb128 1\n.uleb128 0x11\n.byte 1\n.uleb128 0x11\n.uleb128 0x1\n"
	      ".uleb128 0x12\n.uleb128 0x7\n.byte 0\n.byte 0\n"
	      /* 2: subprogram with children, name string, low_pc, high_pc */
	      ".uleb128 2\n.uleb128 0x2e\n.byte 1\n.uleb128 0x3\n.uleb128 0x8\n"
	      ".uleb128 0x11\n.uleb128 0x1\n.uleb128 0x12\n.uleb128 0x7\n.byte 0\n.byte 0\n"
	      /* 3: lexical block with children, low_pc, high_pc */
	      ".uleb128 3\n.uleb128 0x0b\n.byte 1\n.uleb128 0x11\n.uleb128 0x1\n"
	      ".uleb128 0x12\n.uleb128 0x7\n.byte 0\n.byte 0\n"
	      /* 4: base type without children, sibling ref4 */
	      ".uleb128 4\n.uleb128 0x24\n.byte 0\n.uleb128 0x1\n.uleb128 0x13\n.byte 0\n.byte 0\n"
	      ".byte 0\n"
	      ".section .debug_info,\"\",@progbits\n"
	      ".Lcu2:\n.long .Lend2 - .Lstart2\n.Lstart2:\n.value 4\n.long 0\n.byte 8\n"
	      ".uleb128 1\n.quad loop_fn\n.quad 4\n"
	      ".Lt1:\n.uleb128 4\n.long .Lt1 - .Lcu2\n"
	      ".Lt2:\n.uleb128 4\n.long .Lt1 - .Lcu2\n"
	      ".uleb128 2\n.asciz \"loop_fn\"\n.quad loop_fn\n.quad 4\n"
	      ".byte 0\n.byte 0\n.Lend2:\n"
	      ".Lcu:\n.long .Lend - .Lstart\n.Lstart:\n.value 4\n.long 0\n.byte 8\n"
	      ".uleb128 1\n.quad deep_fn\n.quad 4\n"
	      ".uleb128 2\n.asciz \"deep_fn\"\n.quad deep_fn\n.quad 4\n",
	      f);
	for (i = 0; i < depth; i++)
		fputs(".uleb128 3\n.quad deep_fn\n.quad 4\n", f);
	/* every DIE with children ends its list */
	fprintf(f, ".fill %u, 1, 0\n.Lend:\n", depth + 2);
	fclose(f);
	return !run("gcc -shared -nostdlib -o '%s' '%s'", so, src);
}

/*
 * Sections lookups do not use are not read: a compressed .debug_loclists
 * that claims a terabyte once decompressed does not cost the lines (binutils
 * refuses the file: the lines are the fixture's own).
 */
static void test_unused_sections(void **state)
{
	__u64 huge = 1ULL << 40, inner, plain;
	char fx_z[PATH_MAX], bad[PATH_MAX];
	struct section loc;
	struct found found;
	unsigned char *buf;
	size_t len;

	loc = section_of(tmp_path("fx_z", fx_z), ".debug_loclists");
	assert_true(loc.size >= sizeof(Elf64_Chdr));
	buf = read_file(fx_z, &len);
	assert_int_equal(((Elf64_Chdr *)(buf + loc.offset))->ch_type, ELFCOMPRESS_ZLIB);
	memcpy(buf + loc.offset + offsetof(Elf64_Chdr, ch_size), &huge, sizeof(huge));
	write_file(tmp_path("fx_huge_loclists", bad), buf, len);
	free(buf);
	inner = nm_addr(bad, "lp_mark_inner");
	plain = nm_addr(bad, "lp_mark_plain");
	found = lookup_all(bad, inner, plain);
	assert_int_equal(found.n, 3);
	assert_string_equal(found.function, "inner");
	assert_int_equal(found.line, src_line("inner"));
}

static void test_hostile_tree(void **state)
{
	struct sym_line l[SYM_MAX_LINES];
	char so[PATH_MAX];
	struct dwarf_file *df;
	__u64 fn, loop;
	int err;

	tmp_path("deep.so", so);
	assert_true(build_hostile(so, 100000));
	fn = nm_addr(so, "deep_fn");
	loop = nm_addr(so, "loop_fn");
	df = open_dwarf(so, 64 << 20, &err);
	assert_int_equal(err, 0);
	/* the walk stops at its depth limit, inside deep_fn */
	assert_int_equal(dwarf_file__lookup(df, fn + 1, l, SYM_MAX_LINES), 1);
	assert_string_equal(l[0].function, "deep_fn");
	assert_null(l[0].file);
	assert_int_equal(l[0].line, 0);
	assert_int_equal(dwarf_file__lookup(df, fn + 4, l, SYM_MAX_LINES), 0);
	/* a walk that does not move forward ends */
	assert_true(dwarf_file__lookup(df, loop + 1, l, SYM_MAX_LINES) <= 1);
	dwarf_file__close(df);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc),
		cmocka_unit_test(test_compressed_sections),
		cmocka_unit_test(test_clang),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_corrupted_sections),
		cmocka_unit_test(test_unused_sections),
		cmocka_unit_test(test_hostile_tree),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
