// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Custom Labels ABI conformance of the built libcustomlabels files, checked
 * the way a reader finds them: the dynamic symbols, their types and sizes,
 * the version value in the file, the TLSDESC relocation, the file name, and
 * nothing exported beyond the documented API. Then each .so is loaded and
 * its labels are read through the TLSDESC recipe a profiler uses (docs/design.md
 * section 3), not through the library.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <link.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include "abi.h"

#ifndef CL_LIB_DIR
#error "CL_LIB_DIR: directory of the built libraries"
#endif
#ifndef CL_TEST_DIR
#error "CL_TEST_DIR: directory of the test executables"
#endif

#define VERSION_SYMBOL "custom_labels_abi_version"
#define V1_TLS_SYMBOL  "custom_labels_current_set"
#define V0_TLS_SYMBOL  "custom_labels_thread_local_data"

#if defined(__x86_64__)
#define MACHINE	      EM_X86_64
#define R_TLSDESC     R_X86_64_TLSDESC
#define DTV_TP_OFFSET 8
#elif defined(__aarch64__)
#define MACHINE	      EM_AARCH64
#define R_TLSDESC     R_AARCH64_TLSDESC
#define DTV_TP_OFFSET 0
#else
#error "x86-64 or aarch64 only"
#endif

/* Everything the library may export: the ABI symbols and the documented API. */
static const char *const api[] = {
	"custom_labels_configure",
	"custom_labels_set",
	"custom_labels_set_str",
	"custom_labels_get",
	"custom_labels_delete",
	"custom_labels_delete_str",
	"custom_labels_clear",
	"custom_labels_count",
	"custom_labels_labelset_new",
	"custom_labels_labelset_capture",
	"custom_labels_labelset_free",
	"custom_labels_labelset_set",
	"custom_labels_labelset_set_str",
	"custom_labels_labelset_delete",
	"custom_labels_labelset_get",
	"custom_labels_labelset_count",
	"custom_labels_swap",
	"custom_labels_run_with",
	"custom_labels_otel_record_init",
	"custom_labels_otel_record_add",
	"custom_labels_otel_attach",
	"custom_labels_otel_current",
	"custom_labels_otel_publish",
	"custom_labels_otel_publish_schema",
	"custom_labels_otel_unpublish",
};

struct variant {
	const char *so;
	const char *archive;
	const char *static_exe; /* a test executable linked with the archive */
	uint32_t version;
	const char *tls_symbol;
	const char *other_tls_symbol;
	size_t tls_size;
};

static const struct variant v1 = {
	CL_LIB_DIR "/libcustomlabels.so",
	CL_LIB_DIR "/libcustomlabels.a",
	CL_TEST_DIR "/test_customlabels_v1_static",
	1,
	V1_TLS_SYMBOL,
	V0_TLS_SYMBOL,
	8,
};

static const struct variant v0 = {
	CL_LIB_DIR "/libcustomlabels-v0.so",
	CL_LIB_DIR "/libcustomlabels-v0.a",
	CL_TEST_DIR "/test_customlabels_v0_static",
	0,
	V0_TLS_SYMBOL,
	V1_TLS_SYMBOL,
	16,
};

struct elf_handle {
	int fd;
	Elf *elf;
};

static Elf *elf_open(struct elf_handle *h, const char *path)
{
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	h->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h->fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	h->elf = elf_begin(h->fd, ELF_C_READ, NULL);
	if (!h->elf)
		fail_msg("%s: %s", path, elf_errmsg(-1));
	return h->elf;
}

static void elf_close(struct elf_handle *h)
{
	elf_end(h->elf);
	close(h->fd);
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		assert_non_null(gelf_getshdr(scn, shdr));
		if (shdr->sh_type == type)
			return scn;
	}
	return NULL;
}

static const char *section_name(Elf *elf, size_t index, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = elf_getscn(elf, index);

	assert_non_null(scn);
	assert_non_null(gelf_getshdr(scn, shdr));
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	return elf_strptr(elf, shstrndx, shdr->sh_name);
}

/* Finds a symbol by name in a symbol table section; returns its index or -1. */
static long find_symbol(Elf *elf, Elf_Scn *symtab, const char *name, GElf_Sym *sym)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t i, n;

	assert_non_null(gelf_getshdr(symtab, &shdr));
	data = elf_getdata(symtab, NULL);
	assert_non_null(data);
	n = shdr.sh_size / shdr.sh_entsize;
	for (i = 1; i < n; i++) {
		const char *s;

		assert_non_null(gelf_getsym(data, i, sym));
		s = elf_strptr(elf, shdr.sh_link, sym->st_name);
		if (s && !strcmp(s, name) && sym->st_shndx != SHN_UNDEF)
			return (long)i;
	}
	return -1;
}

static bool documented(const char *name)
{
	size_t i;

#ifdef __SANITIZE_ADDRESS__
	/* ASan's one-definition-rule indicators for exported globals */
	if (!strncmp(name, "__odr_asan.", 11))
		return documented(name + 11);
#endif
	if (!strcmp(name, VERSION_SYMBOL) || !strcmp(name, V1_TLS_SYMBOL) ||
	    !strcmp(name, V0_TLS_SYMBOL) || !strcmp(name, "otel_thread_ctx_v1"))
		return true;
	for (i = 0; i < sizeof(api) / sizeof(api[0]); i++) {
		if (!strcmp(name, api[i]))
			return true;
	}
	return false;
}

/*
 * Every defined global symbol of default visibility in symtab is documented;
 * returns how many of the API functions it defines.
 */
static size_t check_exports(Elf *elf, Elf_Scn *symtab, const char *file)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t i, n, api_found = 0;
	GElf_Sym sym;

	assert_non_null(gelf_getshdr(symtab, &shdr));
	data = elf_getdata(symtab, NULL);
	n = shdr.sh_size / shdr.sh_entsize;
	for (i = 1; i < n; i++) {
		const char *name;

		assert_non_null(gelf_getsym(data, i, &sym));
		if (sym.st_shndx == SHN_UNDEF || GELF_ST_BIND(sym.st_info) == STB_LOCAL ||
		    GELF_ST_VISIBILITY(sym.st_other) != STV_DEFAULT)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		assert_non_null(name);
		if (!documented(name))
			fail_msg("%s exports undocumented symbol %s", file, name);
		if (GELF_ST_TYPE(sym.st_info) == STT_FUNC)
			api_found++;
	}
	return api_found;
}

/* The version constant: 4 bytes in read-only .rodata, with the right value in the file. */
static void check_version_symbol(Elf *elf, Elf_Scn *symtab, const struct variant *v, bool rel)
{
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	uint32_t value;
	size_t off;

	assert_true(find_symbol(elf, symtab, VERSION_SYMBOL, &sym) > 0);
	assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_OBJECT);
	assert_int_equal(GELF_ST_BIND(sym.st_info), STB_GLOBAL);
	assert_int_equal(GELF_ST_VISIBILITY(sym.st_other), STV_DEFAULT);
	assert_int_equal(sym.st_size, 4);
	assert_string_equal(section_name(elf, sym.st_shndx, &shdr), ".rodata");
	assert_true(shdr.sh_flags & SHF_ALLOC);
	assert_false(shdr.sh_flags & SHF_WRITE);
	data = elf_getdata(elf_getscn(elf, sym.st_shndx), NULL);
	assert_non_null(data);
	off = rel ? sym.st_value : sym.st_value - shdr.sh_addr;
	assert_true(off + 4 <= data->d_size);
	memcpy(&value, (char *)data->d_buf + off, 4);
	assert_int_equal(value, v->version);
}

/* The TLS symbol: STT_TLS, global, of the ABI's size; the other version's is absent. */
static long check_tls_symbol(Elf *elf, Elf_Scn *symtab, const struct variant *v)
{
	GElf_Shdr shdr;
	GElf_Sym sym;
	long index;

	index = find_symbol(elf, symtab, v->tls_symbol, &sym);
	assert_true(index > 0);
	assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_TLS);
	assert_int_equal(GELF_ST_BIND(sym.st_info), STB_GLOBAL);
	assert_int_equal(GELF_ST_VISIBILITY(sym.st_other), STV_DEFAULT);
	assert_int_equal(sym.st_size, v->tls_size);
	section_name(elf, sym.st_shndx, &shdr);
	assert_true(shdr.sh_flags & SHF_TLS);
	assert_int_equal(find_symbol(elf, symtab, v->other_tls_symbol, &sym), -1);
	return index;
}

/*
 * The r_offset of the TLSDESC relocation against the TLS symbol (dynamic
 * symbol index tls_index); fails if any other dynamic relocation names it.
 */
static GElf_Addr tlsdesc_offset(Elf *elf, long tls_index)
{
	GElf_Addr offset = 0;
	Elf_Scn *scn = NULL;
	int found = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t i;

		assert_non_null(gelf_getshdr(scn, &shdr));
		if (shdr.sh_type != SHT_RELA || !(shdr.sh_flags & SHF_ALLOC))
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Rela r;

			assert_non_null(gelf_getrela(data, i, &r));
			if ((long)GELF_R_SYM(r.r_info) != tls_index)
				continue;
			assert_int_equal(GELF_R_TYPE(r.r_info), R_TLSDESC);
			offset = r.r_offset;
			found++;
		}
	}
	assert_int_equal(found, 1);
	return offset;
}

static void check_so(const struct variant *v)
{
	struct elf_handle h;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	Elf_Scn *dynsym, *dynamic;
	Elf_Data *data;
	bool soname_ok = false, now = false, nodelete = false;
	char path[512], *base;
	regex_t re;
	size_t i;
	long tls;

	/* readers match the mapped file's name */
	snprintf(path, sizeof(path), "%s", v->so);
	base = basename(path);
	assert_int_equal(regcomp(&re, "libcustomlabels.*\\.so", REG_EXTENDED | REG_NOSUB), 0);
	assert_int_equal(regexec(&re, base, 0, NULL, 0), 0);
	regfree(&re);

	elf_open(&h, v->so);
	assert_non_null(gelf_getehdr(h.elf, &ehdr));
	assert_int_equal(ehdr.e_type, ET_DYN);
	assert_int_equal(ehdr.e_machine, MACHINE);
	dynsym = find_section(h.elf, SHT_DYNSYM, &shdr);
	assert_non_null(dynsym);
	check_version_symbol(h.elf, dynsym, v, false);
	tls = check_tls_symbol(h.elf, dynsym, v);
	tlsdesc_offset(h.elf, tls);
	assert_int_equal(check_exports(h.elf, dynsym, v->so), sizeof(api) / sizeof(api[0]));

	/* the soname is what a DT_NEEDED entry, and so the mapped file, will be called */
	dynamic = find_section(h.elf, SHT_DYNAMIC, &shdr);
	assert_non_null(dynamic);
	data = elf_getdata(dynamic, NULL);
	for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
		GElf_Dyn dyn;

		assert_non_null(gelf_getdyn(data, i, &dyn));
		if (dyn.d_tag == DT_SONAME)
			soname_ok = !strcmp(elf_strptr(h.elf, shdr.sh_link, dyn.d_un.d_val), base);
		if (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_BIND_NOW))
			now = true;
		if (dyn.d_tag == DT_FLAGS_1) {
			now |= !!(dyn.d_un.d_val & DF_1_NOW);
			nodelete = dyn.d_un.d_val & DF_1_NODELETE;
		}
	}
	assert_true(soname_ok);
	/* descriptors resolved at load: a reader never meets a lazy one */
	assert_true(now);
	assert_true(nodelete);
	elf_close(&h);
}

static void test_so_v1(void **state)
{
	check_so(&v1);
}

static void test_so_v0(void **state)
{
	check_so(&v0);
}

/* Relocations an object uses to reach its TLS symbol: TLS descriptors only. */
static bool tlsdesc_reloc(unsigned int type)
{
#if defined(__x86_64__)
	return type == R_X86_64_GOTPC32_TLSDESC || type == R_X86_64_TLSDESC_CALL;
#else
	return type >= R_AARCH64_TLSDESC_LD_PREL19 && type <= R_AARCH64_TLSDESC_CALL;
#endif
}

static void check_archive(const struct variant *v)
{
	struct elf_handle h;
	Elf *member;
	int with_abi = 0;
	size_t api_found = 0;

	elf_open(&h, v->archive);
	assert_int_equal(elf_kind(h.elf), ELF_K_AR);
	while ((member = elf_begin(h.fd, ELF_C_READ, h.elf))) {
		GElf_Ehdr ehdr;
		GElf_Shdr shdr;
		GElf_Sym sym;
		Elf_Scn *symtab, *scn = NULL;
		Elf_Arhdr *arhdr = elf_getarhdr(member);
		long tls;

		assert_non_null(arhdr);
		if (arhdr->ar_name[0] == '/') { /* the archive's symbol index */
			elf_next(member);
			elf_end(member);
			continue;
		}
		assert_non_null(gelf_getehdr(member, &ehdr));
		assert_int_equal(ehdr.e_type, ET_REL);
		assert_int_equal(ehdr.e_machine, MACHINE);
		symtab = find_section(member, SHT_SYMTAB, &shdr);
		assert_non_null(symtab);
		api_found += check_exports(member, symtab, v->archive);
		if (find_symbol(member, symtab, VERSION_SYMBOL, &sym) > 0) {
			check_version_symbol(member, symtab, v, true);
			tls = check_tls_symbol(member, symtab, v);
			/* every access to the TLS symbol goes through a descriptor */
			while ((scn = elf_nextscn(member, scn))) {
				GElf_Shdr target;
				Elf_Data *data;
				size_t i;

				assert_non_null(gelf_getshdr(scn, &shdr));
				if (shdr.sh_type != SHT_RELA)
					continue;
				/* code and data only: DWARF locates TLS variables by DTPOFF */
				assert_non_null(
					gelf_getshdr(elf_getscn(member, shdr.sh_info), &target));
				if (!(target.sh_flags & SHF_ALLOC))
					continue;
				data = elf_getdata(scn, NULL);
				for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
					GElf_Rela r;

					assert_non_null(gelf_getrela(data, i, &r));
					if ((long)GELF_R_SYM(r.r_info) == tls)
						assert_true(tlsdesc_reloc(GELF_R_TYPE(r.r_info)));
				}
			}
			with_abi++;
		}
		elf_next(member);
		elf_end(member);
	}
	assert_int_equal(with_abi, 1);
	assert_int_equal(api_found, sizeof(api) / sizeof(api[0]));
	elf_close(&h);
}

static void test_archive_v1(void **state)
{
	check_archive(&v1);
}

static void test_archive_v0(void **state)
{
	check_archive(&v0);
}

/* An executable linked with the .a as the header documents exports both ABI symbols. */
static void check_static_exe(const struct variant *v)
{
	struct elf_handle h;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Scn *dynsym;

	elf_open(&h, v->static_exe);
	dynsym = find_section(h.elf, SHT_DYNSYM, &shdr);
	assert_non_null(dynsym);
	assert_true(find_symbol(h.elf, dynsym, VERSION_SYMBOL, &sym) > 0);
	assert_int_equal(sym.st_size, 4);
	assert_true(find_symbol(h.elf, dynsym, v->tls_symbol, &sym) > 0);
	assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_TLS);
	elf_close(&h);
}

static void test_static_exe_v1(void **state)
{
	check_static_exe(&v1);
}

static void test_static_exe_v0(void **state)
{
	check_static_exe(&v0);
}

static uintptr_t thread_pointer(void)
{
	uintptr_t tp;

#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#else
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#endif
	return tp;
}

/*
 * Loads the .so and reads a label it set, the way a profiler does: the
 * TLSDESC relocation's GOT slot holds (resolver, argument); for static TLS
 * the argument is the offset from the thread pointer, otherwise it points to
 * { module id, offset } for a walk of the DTV.
 */
static void check_reader_recipe(const struct variant *v)
{
	int (*set_str)(const char *, const char *);
	int (*clear)(void);
	const struct abi_label *labels;
	const uint32_t *version;
	struct elf_handle h;
	struct link_map *map;
	GElf_Shdr shdr;
	GElf_Addr rel_off;
	Elf_Scn *dynsym;
	uintptr_t addr, tp = thread_pointer();
	const uint64_t *desc;
	int64_t arg;
	size_t count;
	void *lib;

	elf_open(&h, v->so);
	dynsym = find_section(h.elf, SHT_DYNSYM, &shdr);
	rel_off = tlsdesc_offset(h.elf, check_tls_symbol(h.elf, dynsym, v));
	elf_close(&h);

	lib = dlopen(v->so, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("dlopen %s: %s", v->so, dlerror());
	version = dlsym(lib, VERSION_SYMBOL);
	assert_non_null(version);
	assert_int_equal(*version, v->version);
	*(void **)&set_str = dlsym(lib, "custom_labels_set_str");
	*(void **)&clear = dlsym(lib, "custom_labels_clear");
	assert_non_null(set_str);
	assert_non_null(clear);
	assert_int_equal(set_str("span", "abc123"), 0);

	assert_int_equal(dlinfo(lib, RTLD_DI_LINKMAP, &map), 0);
	desc = (const uint64_t *)(map->l_addr + rel_off);
	arg = (int64_t)desc[1];
	if (arg > -(INT64_C(1) << 32) && arg < (INT64_C(1) << 20)) {
		addr = tp + arg;
	} else {
		const uint64_t *ti = (const uint64_t *)(uintptr_t)desc[1];
		const uintptr_t *dtv = *(const uintptr_t *const *)(tp + DTV_TP_OFFSET);

		addr = dtv[2 * ti[0]] + ti[1];
	}

	if (v->version == 1) {
		const struct abi_set *set = *(const struct abi_set *const *)addr;

		assert_non_null(set);
		assert_true(set->count <= set->capacity);
		count = set->count;
		labels = set->storage;
	} else {
		const struct abi_v0 *t = (const struct abi_v0 *)addr;

		count = t->count;
		labels = t->storage;
	}
	assert_int_equal(count, 1);
	assert_int_equal(labels[0].key.len, 4);
	assert_memory_equal(labels[0].key.buf, "span", 4);
	assert_int_equal(labels[0].value.len, 6);
	assert_memory_equal(labels[0].value.buf, "abc123", 6);
	assert_int_equal(clear(), 0);
	if (v->version == 1)
		assert_null(*(void *const *)addr);
	else
		assert_int_equal(((const struct abi_v0 *)addr)->count, 0);
}

static void test_reader_recipe_v1(void **state)
{
	check_reader_recipe(&v1);
}

static void test_reader_recipe_v0(void **state)
{
	check_reader_recipe(&v0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_so_v1),
		cmocka_unit_test(test_so_v0),
		cmocka_unit_test(test_archive_v1),
		cmocka_unit_test(test_archive_v0),
		cmocka_unit_test(test_static_exe_v1),
		cmocka_unit_test(test_static_exe_v0),
		cmocka_unit_test(test_reader_recipe_v1),
		cmocka_unit_test(test_reader_recipe_v0),
	};

	setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines, in order with cmocka's stderr */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
