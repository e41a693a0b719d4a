// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ELF reader tests: the API on real files built by tests/tls/build.mk, and
 * truncated, patched and randomly mutated copies of them, which must give
 * errors or consistent answers and never crash (run under ASan/UBSan too).
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/elf.h"
#include "proc/tls.h"
#include "fixtures.h"

#if defined(__x86_64__)
#define NATIVE_EM      EM_X86_64
#define NATIVE_TLSDESC R_X86_64_TLSDESC
#elif defined(__aarch64__)
#define NATIVE_EM      EM_AARCH64
#define NATIVE_TLSDESC R_AARCH64_TLSDESC
#endif

/* A fixture's bytes. */
static unsigned char *load_fixture(const char *name, size_t *size)
{
	char path[PATH_MAX];
	unsigned char *buf;
	struct stat st;
	int fd;

	fd = open(fixture_path(name, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("fixture %s: %s", path, strerror(errno));
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*size = st.st_size;
	return buf;
}

static struct elf_file *open_fixture(const char *name)
{
	char path[PATH_MAX], err[256];
	struct elf_file *ef;

	ef = elf_file__open(fixture_path(name, path, sizeof(path)), err, sizeof(err));
	if (!ef)
		fail_msg("%s", err);
	return ef;
}

/* An in-memory file holding buf, for the _fd entry point. */
static int memfile(const void *buf, size_t size)
{
	int fd = memfd_create("elf-test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	return fd;
}

static void test_open_basic(void **state)
{
	struct elf_file *ef = open_fixture("exe-gcc-pie-v1");
	char path[PATH_MAX];
	GElf_Phdr phdr;
	struct stat st;

	assert_int_equal(elf_file__type(ef), ET_DYN);
	assert_int_equal(elf_file__machine(ef), NATIVE_EM);
	assert_string_equal(elf_file__name(ef), fixture_path("exe-gcc-pie-v1", path, sizeof(path)));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(elf_file__size(ef), st.st_size);
	assert_non_null(elf_file__elf(ef));
	assert_true(elf_file__phnum(ef) > 0);
	assert_int_equal(elf_file__phdr(ef, 0, &phdr), 0);
	assert_int_equal(phdr.p_type, PT_PHDR);
	assert_int_equal(elf_file__phdr(ef, elf_file__phnum(ef), &phdr), -EINVAL);
	elf_file__close(ef);
	elf_file__close(NULL);

#ifdef __x86_64__
	/* another machine's file: x86-64 hosts cross-build the aarch64 fixtures */
	ef = open_fixture("a64-exe-static-v1-a64");
	assert_int_equal(elf_file__type(ef), ET_EXEC);
	assert_int_equal(elf_file__machine(ef), EM_AARCH64);
	elf_file__close(ef);
#endif
}

static void test_build_id(void **state)
{
	unsigned char id[ELF_BUILD_ID_MAX], debug_id[ELF_BUILD_ID_MAX], small[4];
	struct elf_file *ef = open_fixture("exe-gcc-pie-v1");
	struct elf_file *dbg = open_fixture("exe-debuglink.debug");
	size_t len;

	len = elf_file__build_id(ef, id, sizeof(id));
	assert_int_equal(len, 20); /* ld's default: SHA-1 */
	assert_int_equal(elf_file__build_id(ef, small, sizeof(small)), 0);
	/* The separate debug file has the same build id. */
	assert_int_equal(elf_file__build_id(dbg, debug_id, sizeof(debug_id)), len);
	assert_memory_equal(id, debug_id, len);
	elf_file__close(dbg);
	elf_file__close(ef);
}

static void test_debuglink(void **state)
{
	struct elf_file *ef = open_fixture("exe-debuglink");

	assert_non_null(elf_file__debuglink(ef));
	assert_string_equal(elf_file__debuglink(ef), "exe-debuglink.debug");
	elf_file__close(ef);
	ef = open_fixture("exe-gcc-pie-v1");
	assert_null(elf_file__debuglink(ef));
	elf_file__close(ef);
}

static void test_find_symbol(void **state)
{
	static const char *const names[] = {"custom_labels_current_set", "no_such_symbol",
					    "custom_labels_abi_version", "main"};
	struct elf_file *ef = open_fixture("exe-gcc-pie-v1");
	GElf_Sym sym, version, syms[4];
	unsigned int found[4];
	bool dynamic;

	assert_int_equal(elf_file__find_symbol(ef, "custom_labels_abi_version", &version, &dynamic),
			 0);
	assert_true(dynamic);
	assert_int_equal(version.st_size, 4);
	assert_int_equal(elf_file__find_symbol(ef, "custom_labels_current_set", &sym, NULL), 0);
	assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_TLS);
	/* Only defined symbols count: printf is an undefined reference here. */
	assert_int_equal(elf_file__find_symbol(ef, "printf", &sym, NULL), -ENOENT);
	assert_int_equal(elf_file__find_symbol(ef, "", &sym, NULL), -ENOENT);

	assert_int_equal(elf_file__find_symbols(ef, names, 4, syms, found), 3);
	assert_int_equal(found[0], SHT_DYNSYM);
	assert_int_equal(found[1], 0);
	assert_int_equal(found[2], SHT_DYNSYM);
	assert_true(found[3] == SHT_DYNSYM || found[3] == SHT_SYMTAB);
	assert_int_equal(syms[0].st_value, sym.st_value);
	assert_int_equal(syms[2].st_value, version.st_value);
	elf_file__close(ef);

	/* Not exported: found in .symtab. */
	ef = open_fixture("exe-gcc-pie-v1-symtab");
	assert_int_equal(elf_file__find_symbol(ef, "custom_labels_abi_version", &sym, &dynamic), 0);
	assert_false(dynamic);
	elf_file__close(ef);

	/* Stripped and not exported: nowhere. */
	ef = open_fixture("exe-stripped");
	assert_int_equal(elf_file__find_symbol(ef, "custom_labels_abi_version", &sym, NULL),
			 -ENOENT);
	elf_file__close(ef);
}

static void test_read_vaddr(void **state)
{
	struct elf_file *ef = open_fixture("exe-gcc-pie-v1");
	Elf_Scn *scn = NULL;
	uint32_t version;
	uint64_t word;
	GElf_Sym sym;
	size_t i;

	assert_int_equal(elf_file__find_symbol(ef, "custom_labels_abi_version", &sym, NULL), 0);
	assert_int_equal(elf_file__read_vaddr(ef, sym.st_value, &version, 4), 0);
	assert_int_equal(version, 1);
	assert_int_equal(elf_file__read_vaddr(ef, UINT64_MAX - 2, &word, 8), -ENOENT);
	assert_int_equal(elf_file__read_vaddr(ef, 0, &word, 8), 0); /* the ELF header */
	assert_int_equal(word & 0xffffffff, 0x464c457f);
	/* .bss has no bytes in the file. */
	for (i = 1; (scn = elf_getscn(elf_file__elf(ef), i)); i++) {
		GElf_Shdr shdr;

		assert_non_null(gelf_getshdr(scn, &shdr));
		if (shdr.sh_type == SHT_NOBITS && (shdr.sh_flags & SHF_ALLOC) &&
		    !(shdr.sh_flags & SHF_TLS) && shdr.sh_size >= 8) {
			assert_int_equal(elf_file__read_vaddr(ef, shdr.sh_addr, &word, 8), -ENOENT);
			break;
		}
	}
	assert_non_null(scn);
	elf_file__close(ef);
}

struct rela_count {
	int tlsdesc, total, stop_at;
};

static int count_rela(const GElf_Rela *rela, const GElf_Sym *sym, const char *name, void *ctx)
{
	struct rela_count *c = ctx;

	c->total++;
	if (GELF_R_TYPE(rela->r_info) == NATIVE_TLSDESC &&
	    !strcmp(name, "custom_labels_current_set")) {
		assert_int_equal(GELF_ST_TYPE(sym->st_info), STT_TLS);
		c->tlsdesc++;
	}
	if (!GELF_R_SYM(rela->r_info))
		assert_string_equal(name, "");
	return c->total == c->stop_at ? 42 : 0;
}

static void test_for_each_rela(void **state)
{
	struct elf_file *ef = open_fixture("lib-desc-v1.so");
	struct rela_count c = {0};

	assert_int_equal(elf_file__for_each_rela(ef, count_rela, &c), 0);
	assert_int_equal(c.tlsdesc, 1);
	assert_true(c.total > 1);
	c = (struct rela_count){.stop_at = 1};
	assert_int_equal(elf_file__for_each_rela(ef, count_rela, &c), 42);
	assert_int_equal(c.total, 1);
	elf_file__close(ef);
}

static void test_open_errors(void **state)
{
	static const char text[] =
		"#!/bin/sh\necho this is not an ELF file, but long enough.....\n";
	unsigned char *buf;
	char err[256];
	size_t size;
	int fd;

	err[0] = '\0';
	assert_null(elf_file__open("/nonexistent/x", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/x"));
	assert_null(elf_file__open("/tmp", err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
	assert_null(elf_file__open("/proc/self/status", NULL, 0));

	fd = memfile(text, sizeof(text));
	assert_null(elf_file__open_fd(fd, "text", err, sizeof(err)));
	assert_non_null(strstr(err, "text"));
	close(fd);
	fd = memfile(text, 10);
	assert_null(elf_file__open_fd(fd, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "too small"));
	close(fd);

	buf = load_fixture("exe-gcc-pie-v1", &size);
	buf[EI_CLASS] = ELFCLASS32;
	fd = memfile(buf, size);
	assert_null(elf_file__open_fd(fd, "class32", err, sizeof(err)));
	close(fd);
	buf[EI_CLASS] = ELFCLASS64;
	buf[EI_DATA] = ELFDATA2MSB;
	fd = memfile(buf, size);
	assert_null(elf_file__open_fd(fd, "msb", err, sizeof(err)));
	assert_non_null(strstr(err, "little-endian"));
	close(fd);
	free(buf);
}

/* Reads 16 bytes at vaddr from ef; a prefix of reference must agree with it. */
static void check_read(struct elf_file *ef, struct elf_file *reference, GElf_Addr vaddr)
{
	unsigned char bytes[16], ref_bytes[16];

	if (elf_file__read_vaddr(ef, vaddr, bytes, sizeof(bytes)) || !reference)
		return;
	assert_int_equal(elf_file__read_vaddr(reference, vaddr, ref_bytes, sizeof(ref_bytes)), 0);
	assert_memory_equal(bytes, ref_bytes, sizeof(bytes));
}

/*
 * Calls every reader on ef. reference (may be NULL) is the intact file ef is
 * a prefix of: whatever ef still answers must match it.
 */
static void exercise(struct elf_file *ef, struct elf_file *reference)
{
	static const char *const names[] = {"custom_labels_abi_version",
					    "custom_labels_current_set", "main"};
	unsigned char id[ELF_BUILD_ID_MAX], ref_id[ELF_BUILD_ID_MAX];
	struct rela_count c = {0};
	unsigned int found[3];
	GElf_Sym syms[3];
	GElf_Phdr phdr;
	size_t i, len;

	len = elf_file__build_id(ef, id, sizeof(id));
	assert_true(len <= ELF_BUILD_ID_MAX);
	if (len && reference) {
		assert_int_equal(elf_file__build_id(reference, ref_id, sizeof(ref_id)), len);
		assert_memory_equal(id, ref_id, len);
	}
	if (elf_file__debuglink(ef))
		assert_true(strlen(elf_file__debuglink(ef)) < 4096);
	elf_file__find_symbols(ef, names, 3, syms, found);
	elf_file__for_each_rela(ef, count_rela, &c);
	for (i = 0; i < 3; i++)
		if (found[i])
			check_read(ef, reference, syms[i].st_value);
	for (i = 0; i < elf_file__phnum(ef) && i < 64; i++)
		if (!elf_file__phdr(ef, i, &phdr) && phdr.p_type == PT_LOAD)
			check_read(ef, reference, phdr.p_vaddr);
}

/* Opens a damaged copy and runs every reader, the TLS inspection included. */
static void check_damaged(const unsigned char *buf, size_t size, struct elf_file *reference)
{
	struct tls_file_info info;
	struct elf_file *ef;
	char err[256], path[64];
	int fd = memfile(buf, size);

	ef = elf_file__open_fd(fd, "damaged", err, sizeof(err));
	if (ef) {
		exercise(ef, reference);
		elf_file__close(ef);
	} else {
		assert_true(err[0] != '\0');
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (tls__inspect_file(path, &info, err, sizeof(err)) == 0)
		assert_true(info.nr_relocs <= TLS_MAX_RELOCS);
	close(fd);
}

static void test_truncated(void **state)
{
	static const char *const files[] = {"lib-desc-v1.so", "exe-gcc-pie-v1", "exe-debuglink"};
	size_t f, size, len, step, checked = 0;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct elf_file *reference = open_fixture(files[f]);
		unsigned char *buf = load_fixture(files[f], &size);

		assert_non_null(buf);
		/* Every length through the headers, then a sweep, then the last bytes. */
		for (len = 0; len < size; len += step) {
			check_damaged(buf, len, reference);
			checked++;
			step = len < 1024 ? 1 : len > size - 256 ? 1 : 97;
		}
		free(buf);
		elf_file__close(reference);
	}
	print_message("[          ] %zu truncated files checked\n", checked);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Specific hostile values in each section header field, one at a time. */
static void test_hostile_section_headers(void **state)
{
	static const uint64_t values[] = {
		0, 1, 7, 0xffffffff, UINT64_MAX, UINT64_MAX - 7, 0x7fffffffffffffff, 24, 0x1000000};
	static const size_t fields[] = {
		offsetof(Elf64_Shdr, sh_type),	  offsetof(Elf64_Shdr, sh_offset),
		offsetof(Elf64_Shdr, sh_size),	  offsetof(Elf64_Shdr, sh_link),
		offsetof(Elf64_Shdr, sh_entsize), offsetof(Elf64_Shdr, sh_addr),
		offsetof(Elf64_Shdr, sh_name),	  offsetof(Elf64_Shdr, sh_flags),
	};
	unsigned char *orig, *buf;
	struct elf_file *reference = open_fixture("lib-desc-v1.so");
	size_t size, s, f, v, checked = 0;
	Elf64_Ehdr ehdr;

	orig = load_fixture("lib-desc-v1.so", &size);
	assert_non_null(orig);
	buf = malloc(size);
	assert_non_null(buf);
	memcpy(&ehdr, orig, sizeof(ehdr));
	assert_true(ehdr.e_shoff + (uint64_t)ehdr.e_shnum * sizeof(Elf64_Shdr) <= size);
	for (s = 1; s < ehdr.e_shnum; s++) {
		for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
				unsigned char *field =
					buf + ehdr.e_shoff + s * sizeof(Elf64_Shdr) + fields[f];

				memcpy(buf, orig, size);
				if (fields[f] == offsetof(Elf64_Shdr, sh_type) ||
				    fields[f] == offsetof(Elf64_Shdr, sh_link) ||
				    fields[f] == offsetof(Elf64_Shdr, sh_name))
					put32(field, (uint32_t)values[v]);
				else
					put64(field, values[v]);
				check_damaged(buf, size, NULL);
				checked++;
			}
		}
	}
	/* And in the ELF header's table fields. */
	for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		memcpy(buf, orig, size);
		put64(buf + offsetof(Elf64_Ehdr, e_shoff), values[v]);
		check_damaged(buf, size, NULL);
		memcpy(buf, orig, size);
		put64(buf + offsetof(Elf64_Ehdr, e_phoff), values[v]);
		check_damaged(buf, size, NULL);
		memcpy(buf, orig, size);
		memcpy(buf + offsetof(Elf64_Ehdr, e_shnum), &(uint16_t){(uint16_t)values[v]}, 2);
		check_damaged(buf, size, NULL);
		memcpy(buf, orig, size);
		memcpy(buf + offsetof(Elf64_Ehdr, e_phnum), &(uint16_t){(uint16_t)values[v]}, 2);
		check_damaged(buf, size, NULL);
		memcpy(buf, orig, size);
		memcpy(buf + offsetof(Elf64_Ehdr, e_shstrndx), &(uint16_t){(uint16_t)values[v]}, 2);
		check_damaged(buf, size, NULL);
		checked += 5;
	}
	print_message("[          ] %zu hostile headers checked\n", checked);
	free(buf);
	free(orig);
	elf_file__close(reference);
}

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Random mutations aimed at the tables libelf and we parse. */
static void test_fuzz(void **state)
{
	static const char *const files[] = {"lib-desc-v1.so", "lib-gd-v1.so", "exe-gcc-pie-v1",
					    "a64-lib-desc-v1.so"};
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t f, iter, checked = 0;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		unsigned char *orig, *buf;
		Elf64_Ehdr ehdr;
		size_t size;

		orig = load_fixture(files[f], &size);
		if (!orig)
			continue;
		buf = malloc(size);
		assert_non_null(buf);
		memcpy(&ehdr, orig, sizeof(ehdr));
		for (iter = 0; iter < 1000; iter++) {
			unsigned int k, n = 1 + rnd(&seed) % 8;

			memcpy(buf, orig, size);
			for (k = 0; k < n; k++) {
				uint64_t r = rnd(&seed), pos;

				switch (r % 4) {
				case 0: /* section headers */
					pos = ehdr.e_shoff +
					      rnd(&seed) % (ehdr.e_shnum * sizeof(Elf64_Shdr));
					break;
				case 1: /* program headers */
					pos = ehdr.e_phoff +
					      rnd(&seed) % (ehdr.e_phnum * sizeof(Elf64_Phdr));
					break;
				case 2: /* the ELF header */
					pos = rnd(&seed) % sizeof(Elf64_Ehdr);
					break;
				default: /* anywhere: symbols, strings, notes, relocations */
					pos = rnd(&seed) % size;
					break;
				}
				if (pos >= size)
					continue;
				buf[pos] = (r >> 8) & 1	   ? (uint8_t)(r >> 16)
					   : (r >> 16) & 1 ? 0xff
							   : 0;
			}
			check_damaged(buf, size, NULL);
			checked++;
		}
		free(buf);
		free(orig);
	}
	print_message("[          ] %zu mutated files checked\n", checked);
}

static int setup(void **state)
{
	return find_fixture_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_basic),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_find_symbol),
		cmocka_unit_test(test_read_vaddr),
		cmocka_unit_test(test_for_each_rela),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_hostile_section_headers),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
