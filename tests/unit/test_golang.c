// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Go programs (proc/golang.c): the build info of the golabels workloads, which
 * the build made with this host's Go (Debian's golang-go) with and without
 * cgo, stripped and not; the offset table checked against the DWARF of the
 * unstripped builds (libdw); versions without offsets refused.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "labelprof.h"
#include "lib/elf.h"
#include "proc/golang.h"
#include "proc/tls.h"

static char workloads[PATH_MAX / 2];

static int find_workloads(void **state)
{
	char self[PATH_MAX / 2 - 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	/* $(OUTPUT)/tests/test_golang -> $(OUTPUT)/workloads */
	snprintf(workloads, sizeof(workloads), "%s/../workloads", self);
	return 0;
}

static void inspect(const char *name, struct tls_file_info *info)
{
	char path[PATH_MAX], err[256] = "";
	int ret;

	snprintf(path, sizeof(path), "%s/%s", workloads, name);
	ret = tls__inspect_file(path, info, err, sizeof(err));
	if (ret)
		fail_msg("%s: %s (build it with 'make test-build')", path, err);
}

/* The offset of member in struct type, from the DWARF of path; -1 if not found. */
static long dwarf_member_offset(const char *path, const char *type, const char *member)
{
	Dwarf_Off off = 0, next;
	long found = -1;
	size_t hdr;
	Dwarf *dw;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		fail_msg("%s: no DWARF: %s", path, dwarf_errmsg(-1));
	while (found < 0 && !dwarf_nextcu(dw, off, &next, &hdr, NULL, NULL, NULL)) {
		Dwarf_Die cu, die, m;

		if (dwarf_offdie(dw, off + hdr, &cu) && !dwarf_child(&cu, &die)) {
			do {
				const char *name = dwarf_diename(&die);

				if (dwarf_tag(&die) != DW_TAG_structure_type || !name ||
				    strcmp(name, type) || dwarf_child(&die, &m))
					continue;
				do {
					Dwarf_Attribute a;
					Dwarf_Word w;

					name = dwarf_diename(&m);
					if (name && !strcmp(name, member) &&
					    !dwarf_formudata(
						    dwarf_attr(&m, DW_AT_data_member_location, &a), &w))
						found = (long)w;
				} while (found < 0 && !dwarf_siblingof(&m, &m));
			} while (found < 0 && !dwarf_siblingof(&die, &die));
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return found;
}

/* The byte size of a type, from the DWARF of path; -1 if not found. */
static long dwarf_type_size(const char *path, const char *type)
{
	Dwarf_Off off = 0, next;
	long found = -1;
	size_t hdr;
	Dwarf *dw;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	while (found < 0 && !dwarf_nextcu(dw, off, &next, &hdr, NULL, NULL, NULL)) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hdr, &cu) && !dwarf_child(&cu, &die)) {
			do {
				const char *name = dwarf_diename(&die);

				if (name && !strcmp(name, type))
					found = dwarf_bytesize(&die);
			} while (found < 0 && !dwarf_siblingof(&die, &die));
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return found;
}

/* The table's entry for this host's Go agrees with its binaries' DWARF. */
static void test_offsets_match_dwarf(void **state)
{
	static const char *const builds[] = {"golabels-cgo0-plain", "golabels-cgo1-plain"};
	struct tls_file_info info;
	struct lp_go_ref ref;
	char path[PATH_MAX], msg[256];
	long size;
	size_t i;

	for (i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		inspect(builds[i], &info);
		snprintf(path, sizeof(path), "%s/%s", workloads, builds[i]);
		assert_true(info.go.is_go);
		assert_int_equal(golang__recipe(&info, &ref, msg, sizeof(msg)), 0);
		print_message("%s: %s\n", builds[i], msg);
		assert_int_equal(ref.m_offset, dwarf_member_offset(path, "runtime.g", "m"));
		assert_int_equal(ref.curg_offset, dwarf_member_offset(path, "runtime.m", "curg"));
		assert_int_equal(ref.labels_offset, dwarf_member_offset(path, "runtime.g", "labels"));
		if (golang__minor_version(info.go.version) > 23) {
			assert_int_equal(ref.format, LP_GO_LABELS_SLICE);
			continue;
		}
		/* the map layout the BPF walk assumes (bpf/labelprof.h, bpf/labels_go.bpf.h) */
		assert_int_equal(ref.format, LP_GO_LABELS_MAP);
		assert_int_equal(dwarf_member_offset(path, "runtime.hmap", "count"), 0);
		assert_int_equal(dwarf_member_offset(path, "runtime.hmap", "B"), 9);
		assert_int_equal(dwarf_member_offset(path, "runtime.hmap", "buckets"), 16);
		assert_int_equal(dwarf_member_offset(path, "runtime.hmap", "oldbuckets"), 24);
		/* named bucket<K,V> by Go 1.19's linker, map.bucket[K]V by later ones */
		size = dwarf_type_size(path, "bucket<string,string>");
		if (size < 0)
			size = dwarf_type_size(path, "map.bucket[string]string");
		assert_int_equal(size, LP_GO_BUCKET_SIZE);
	}
}

/* The offset from tp of the TLS symbol name in path, as the static TLS layout places it. */
static int64_t tls_symbol_offset(const char *path, const struct tls_file_info *info,
				 const char *name)
{
	struct elf_file *ef;
	char err[256] = "";
	int64_t offset;
	GElf_Sym sym;

	ef = elf_file__open(path, err, sizeof(err));
	if (!ef)
		fail_msg("%s: %s", path, err);
	assert_int_equal(elf_file__find_symbol(ef, name, &sym, NULL), 0);
	assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_TLS);
	elf_file__close(ef);
	assert_int_equal(tls__exe_tls_offset(info, sym.st_value, &offset), 0);
	return offset;
}

/* Stripped builds (-s -w) give the same recipe as the plain ones. */
static void test_stripped_same_recipe(void **state)
{
	static const char *const pairs[][2] = {
		{"golabels-cgo0-plain", "golabels-cgo0-stripped"},
		{"golabels-cgo1-plain", "golabels-cgo1-stripped"},
	};
	struct tls_file_info plain, stripped;
	char path[PATH_MAX];
	struct lp_go_ref a, b;
	size_t i;

	for (i = 0; i < 2; i++) {
		inspect(pairs[i][0], &plain);
		inspect(pairs[i][1], &stripped);
		assert_true(stripped.go.is_go);
		assert_false(stripped.go.has_g_sym);
		assert_string_equal(plain.go.version, stripped.go.version);
		assert_int_equal(golang__recipe(&plain, &a, NULL, 0), 0);
		assert_int_equal(golang__recipe(&stripped, &b, NULL, 0), 0);
		assert_memory_equal(&a, &b, sizeof(a));
		assert_int_equal(a.g_in_register, 0);
		if (i == 0) {
			/* Go's own linker: g just below tp */
			assert_false(plain.has_tls);
			assert_int_equal(a.g_offset, -8);
			continue;
		}
		/*
		 * cgo, with C thread-locals beside runtime.tlsg: the offset
		 * Go's code reads g at, in either build, is that symbol's.
		 */
		assert_true(plain.go.has_g_sym);
		assert_true(plain.tls_memsz > sizeof(uint64_t));
		assert_true(stripped.go.has_code_g);
		snprintf(path, sizeof(path), "%s/%s", workloads, pairs[i][0]);
		assert_int_equal(a.g_offset, tls_symbol_offset(path, &plain, "runtime.tlsg"));
	}
}

/*
 * aarch64 with cgo: runtime.load_g reads g at tp plus runtime.tls_g's offset;
 * runtime.tlsg, which the linker makes on every architecture, is another,
 * unused word of the same TLS segment. Plain and stripped builds agree.
 */
static void test_aarch64_cgo(void **state)
{
	struct tls_file_info plain, stripped;
	char path[PATH_MAX], msg[256];
	struct lp_go_ref a, b;
	int64_t tls_g;

	inspect("golabels-a64-cgo1-plain", &plain);
	inspect("golabels-a64-cgo1-stripped", &stripped);
	snprintf(path, sizeof(path), "%s/golabels-a64-cgo1-plain", workloads);
	assert_int_equal(plain.machine, EM_AARCH64);
	assert_true(plain.go.is_go);
	assert_true(plain.has_tls);
	assert_true(plain.tls_memsz > sizeof(uint64_t));
	tls_g = tls_symbol_offset(path, &plain, "runtime.tls_g");
	assert_int_not_equal(tls_g, tls_symbol_offset(path, &plain, "runtime.tlsg"));

	assert_int_equal(golang__recipe(&plain, &a, msg, sizeof(msg)), 0);
	print_message("golabels-a64-cgo1-plain: %s\n", msg);
	assert_int_equal(a.g_in_register, 0);
	assert_int_equal(a.g_offset, tls_g);
	assert_non_null(strstr(msg, "runtime.load_g"));
	assert_int_equal(golang__recipe(&stripped, &b, msg, sizeof(msg)), 0);
	print_message("golabels-a64-cgo1-stripped: %s\n", msg);
	assert_memory_equal(&a, &b, sizeof(a));
}

/* Versions without offsets get no recipe and say so. */
static void test_unknown_versions(void **state)
{
	static const char *const unknown[] = {"go1.16.15", "go1.27.0", "go2.0", "devel go1.24-abc",
					      "go1."};
	struct tls_file_info info;
	struct lp_go_ref ref;
	char msg[256];
	size_t i;

	inspect("golabels-cgo0-plain", &info);
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		snprintf(info.go.version, sizeof(info.go.version), "%s", unknown[i]);
		assert_int_equal(golang__recipe(&info, &ref, msg, sizeof(msg)), -ENOTSUP);
		assert_non_null(strstr(msg, "labels not supported"));
		assert_int_equal(ref.format, LP_GO_NONE);
	}
	snprintf(info.go.version, sizeof(info.go.version), "go1.24.3");
	assert_int_equal(golang__recipe(&info, &ref, msg, sizeof(msg)), 0);
	assert_int_equal(ref.format, LP_GO_LABELS_SLICE);
	snprintf(info.go.version, sizeof(info.go.version), "go1.17rc1");
	assert_int_equal(golang__recipe(&info, &ref, msg, sizeof(msg)), 0);
	assert_int_equal(ref.format, LP_GO_LABELS_MAP);
}

/* A C program is not a Go program. */
static void test_not_go(void **state)
{
	struct tls_file_info info;
	struct lp_go_ref ref;

	inspect("deepstack", &info);
	assert_false(info.go.is_go);
	assert_int_equal(golang__recipe(&info, &ref, NULL, 0), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_match_dwarf),
		cmocka_unit_test(test_stripped_same_recipe),
		cmocka_unit_test(test_aarch64_cgo),
		cmocka_unit_test(test_unknown_versions),
		cmocka_unit_test(test_not_go),
	};

	return cmocka_run_group_tests(tests, find_workloads, NULL);
}
