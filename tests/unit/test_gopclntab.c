// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Go's function table (symbolize/gopclntab.c) through the symbolizer: the
 * golabels workload stripped with -s -w, and a copy of it without section
 * headers, name every function, file and line as the unstripped build's
 * symbols and DWARF do; truncated tables give what they hold, or nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "fixtures.h"
#include "lib/elf.h"
#include "symbolize/gopclntab.h"
#include "symbolize/symbols.h"

/* A whole file, read and mapped executable into this process. */
struct image {
	unsigned char *bytes;
	size_t len;
	void *map;
	struct elf_file *ef;
};

static void image_open(struct image *im, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		fail_msg("%s: %s (build it with 'make test-build')", path, strerror(errno));
	im->len = st.st_size;
	im->bytes = malloc(im->len);
	assert_non_null(im->bytes);
	assert_int_equal(pread(fd, im->bytes, im->len, 0), im->len);
	im->map = mmap(NULL, im->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(im->map != MAP_FAILED);
	im->ef = elf_file__open_fd(fd, path, NULL, 0);
	assert_non_null(im->ef);
	close(fd);
}

static void image_close(struct image *im)
{
	elf_file__close(im->ef);
	munmap(im->map, im->len);
	free(im->bytes);
}

/* Where ELF address vaddr of im is mapped in this process. */
static __u64 mapped(const struct image *im, __u64 vaddr)
{
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < elf_file__phnum(im->ef); i++)
		if (!elf_file__phdr(im->ef, i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			return (uintptr_t)im->map + vaddr - ph.p_vaddr + ph.p_offset;
	fail_msg("0x%llx is in no segment", (unsigned long long)vaddr);
	return 0;
}

static char dir[PATH_MAX];

static int setup(void **state)
{
	if (find_fixture_dir())
		return -1;
	/* $(OUTPUT)/tests/tls -> $(OUTPUT)/workloads */
	snprintf(dir, sizeof(dir), "%s/../../workloads", fixture_dir);
	return 0;
}

/* The table of the stripped build, as the file's section holds it. */
static void table_of(const struct image *im, struct gopcln *t)
{
	static const unsigned char magic[] = {0xf0, 0xff, 0xff, 0xff, 0, 0};
	unsigned char *p = memmem(im->bytes, im->len, magic, sizeof(magic));

	/* Debian's Go (1.19) writes the 1.18 format */
	assert_non_null(p);
	assert_int_equal(gopcln__init(t, p, im->bytes + im->len - p), 0);
	assert_int_equal(t->version, 118);
}

static void test_stripped_like_unstripped(void **state)
{
	struct symbolizer_opts opts = {.max_symbol_bytes = 256u << 20};
	struct image plain, stripped, noshdr;
	char path[PATH_MAX + 64];
	size_t i, named = 0, same_name = 0, lines = 0, same_line = 0;
	struct symbolizer *sym;
	struct gopcln t;
	__u32 snap;
	int fd;

	snprintf(path, sizeof(path), "%s/golabels-cgo0-plain", dir);
	image_open(&plain, path);
	snprintf(path, sizeof(path), "%s/golabels-cgo0-stripped", dir);
	image_open(&stripped, path);
	/* the stripped build without section headers (e_shoff, e_shnum, e_shstrndx zeroed) */
	snprintf(path, sizeof(path), "%s/../tests/gopclntab-noshdr", dir);
	memset(stripped.bytes + 0x28, 0, 8);
	memset(stripped.bytes + 0x3c, 0, 4);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0700);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, stripped.bytes, stripped.len), stripped.len);
	close(fd);
	image_open(&noshdr, path);
	unlink(path);
	table_of(&noshdr, &t);

	sym = symbolizer__new(&opts);
	assert_non_null(sym);
	snap = symbolizer__snapshot(sym, getpid(), NULL);
	for (i = 0; i < t.nfunc; i++) {
		const char *name;
		char want[512] = "", want_file[512] = "";
		__u32 want_line = 0;
		__u64 start, end, pc;
		struct sym_frame f;
		int k;

		assert_int_equal(gopcln__func(&t, i, &start, &end, &name), 0);
		pc = start + (end - start) / 2;
		if (!symbolizer__resolve_user(sym, snap, mapped(&plain, pc), 0, &f)) {
			snprintf(want, sizeof(want), "%s", f.function);
			if (f.line_count && f.lines[0].file) {
				snprintf(want_file, sizeof(want_file), "%s", f.lines[0].file);
				want_line = f.lines[0].line;
			}
		}
		for (k = 0; k < 2; k++) {
			const struct image *im = k ? &noshdr : &stripped;

			assert_int_equal(symbolizer__resolve_user(sym, snap, mapped(im, pc), 0, &f),
					 0);
			assert_string_equal(f.function, name);
			/*
			 * The symbol table marks assembly functions "NAME.abi0", and
			 * names some generated functions in full ("type..eq.[5]T")
			 * where Go's table shortens them ("type..eq.[...]T").
			 */
			if (*want) {
				named++;
				same_name += !strcmp(want, name) ||
					     !strcmp(want + strnlen(want, strlen(name)), ".abi0");
			}
			if (!want_line)
				continue;
			lines++;
			assert_int_equal(f.line_count, 1);
			/*
			 * DWARF's innermost line: the table names no inlined
			 * function. DWARF says "./<autogenerated>" where Go's table
			 * says "<autogenerated>".
			 */
			same_line += f.lines[0].line == want_line && f.lines[0].file &&
				     (!strcmp(f.lines[0].file, want_file) ||
				      (!strncmp(want_file, "./", 2) &&
				       !strcmp(f.lines[0].file, want_file + 2)));
		}
	}
	print_message("%zu functions: %zu of %zu names as the symbol table's, %zu of %zu lines "
		      "as DWARF's\n",
		      t.nfunc, same_name, named, same_line, lines);
	assert_true(named >= 2 * t.nfunc * 9 / 10 && same_name >= named * 99 / 100);
	assert_true(same_line == lines);
	symbolizer__free(sym);
	image_close(&plain);
	image_close(&stripped);
	image_close(&noshdr);
}

/* Every prefix of a real table: names within it or nothing, no read past it (ASan). */
static void test_truncated(void **state)
{
	char path[PATH_MAX + 64];
	struct image im;
	struct gopcln t, cut;
	size_t len, i;

	snprintf(path, sizeof(path), "%s/golabels-cgo0-stripped", dir);
	image_open(&im, path);
	table_of(&im, &t);
	for (len = 0; len < t.len; len += len < 4096 ? 1 : 4093) {
		unsigned char *copy = malloc(len ? len : 1);

		assert_non_null(copy);
		memcpy(copy, t.p, len);
		if (!gopcln__init(&cut, copy, len)) {
			for (i = 0; i < cut.nfunc; i += 97) {
				const char *name, *file;
				__u64 start, end;
				__u32 line, first;

				if (!gopcln__func(&cut, i, &start, &end, &name))
					assert_true(strlen(name) < len);
				if (!gopcln__line(&cut, i, start, &file, &line, &first))
					assert_true(!file || strlen(file) < len);
			}
		}
		free(copy);
	}
	/* the header's claims are checked: a table cut inside its function list is refused */
	assert_int_not_equal(gopcln__init(&cut, t.p, t.pcln + 8), 0);
	image_close(&im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stripped_like_unstripped),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
