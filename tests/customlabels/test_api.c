// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcustomlabels API tests. Built once per ABI (-DCL_TEST_ABI_V0 for v0)
 * and link mode (-DCL_TEST_STATIC: the .a linked into this executable, with
 * malloc wrapped to prove the hot path does not allocate). After every change
 * the labels are checked twice: through the API and as a reader sees them,
 * through the dynamic ABI symbols and the ABI layout.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "customlabels.h"
#include "abi.h"

/* The limits these tests configure, small enough to reach. */
#define MAX_LABELS 4
#define MAX_KEY	   8
#define MAX_VALUE  16

/*
 * The ABI symbols, declared as a reader knows them. The TLS object's address
 * comes from the linker (dlsym of TLS symbols is not reliable everywhere).
 */
extern const uint32_t custom_labels_abi_version;
#ifdef CL_TEST_ABI_V0
#define ABI_VERSION	     0
#define ABI_TLS_SYMBOL	     "custom_labels_thread_local_data"
#define ABI_OTHER_TLS_SYMBOL "custom_labels_current_set"
extern __thread struct abi_v0 custom_labels_thread_local_data;
#define ABI_TLS (&custom_labels_thread_local_data)
#else
#define ABI_VERSION	     1
#define ABI_TLS_SYMBOL	     "custom_labels_current_set"
#define ABI_OTHER_TLS_SYMBOL "custom_labels_thread_local_data"
extern __thread struct abi_set *custom_labels_current_set;
#define ABI_TLS		     (&custom_labels_current_set)
#endif

#ifdef CL_TEST_STATIC
/* -Wl,--wrap: counts the library's allocations (it is linked into this executable). */
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static unsigned long allocations;

void *__wrap_malloc(size_t size)
{
	allocations++;
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	allocations++;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	allocations++;
	return __real_realloc(p, size);
}
#endif

/* The labels a reader of this thread sees now. */
static const struct abi_label *abi_read(size_t *count)
{
#ifdef CL_TEST_ABI_V0
	const struct abi_v0 *t = ABI_TLS;

	*count = t->count;
	if (t->count)
		assert_non_null(t->storage);
	return t->storage;
#else
	const struct abi_set *set = *ABI_TLS;

	*count = 0;
	if (!set)
		return NULL;
	assert_int_equal(set->capacity, MAX_LABELS);
	assert_true(set->count <= set->capacity);
	*count = set->count;
	return set->storage;
#endif
}

/* Whether the TLS object says "no set" (NULL pointer; v0: NULL storage, count 0). */
static bool abi_installed_null(void)
{
#ifdef CL_TEST_ABI_V0
	return !ABI_TLS->storage && !ABI_TLS->count;
#else
	return !*ABI_TLS;
#endif
}

struct kv {
	const char *k;
	const char *v;
};

/*
 * The current labels are exactly kv[0..n), in any order, seen by the API and
 * by a reader; no duplicate keys, no NULL buffers, nothing over the limits.
 */
static void expect_labels(const struct kv *kv, size_t n)
{
	const struct abi_label *l;
	const unsigned char *v;
	size_t i, j, count, len;

	assert_int_equal(custom_labels_count(), n);
	l = abi_read(&count);
	assert_int_equal(count, n);
	for (i = 0; i < count; i++) {
		assert_non_null(l[i].key.buf);
		assert_non_null(l[i].value.buf);
		assert_true(l[i].key.len <= MAX_KEY);
		assert_true(l[i].value.len <= MAX_VALUE);
		/* the value right after its key: labelprof reads both at once */
		assert_ptr_equal(l[i].value.buf, l[i].key.buf + l[i].key.len);
		for (j = 0; j < i; j++)
			assert_false(l[j].key.len == l[i].key.len &&
				     !memcmp(l[j].key.buf, l[i].key.buf, l[i].key.len));
	}
	for (i = 0; i < n; i++) {
		size_t klen = strlen(kv[i].k), vlen = strlen(kv[i].v);

		for (j = 0; j < count; j++) {
			if (l[j].key.len == klen && !memcmp(l[j].key.buf, kv[i].k, klen))
				break;
		}
		assert_true(j < count);
		assert_int_equal(l[j].value.len, vlen);
		assert_memory_equal(l[j].value.buf, kv[i].v, vlen);
		assert_int_equal(custom_labels_get(kv[i].k, klen, &v, &len), 0);
		assert_ptr_equal(v, l[j].value.buf);
		assert_int_equal(len, vlen);
	}
}

#define EXPECT(...)                                                                                \
	do {                                                                                       \
		const struct kv expected_[] = {__VA_ARGS__};                                       \
		expect_labels(expected_, sizeof(expected_) / sizeof(expected_[0]));                \
	} while (0)
#define EXPECT_NONE() expect_labels(NULL, 0)

static int reset(void **state)
{
	custom_labels_swap(NULL);
	assert_int_equal(custom_labels_clear(), 0);
	return 0;
}

static void set_ok(const char *k, const char *v)
{
	assert_int_equal(custom_labels_set_str(k, v), 0);
}

static struct custom_labels_labelset *labelset(const char *k1, const char *v1, const char *k2,
					       const char *v2)
{
	struct custom_labels_labelset *set = custom_labels_labelset_new();

	assert_non_null(set);
	if (k1)
		assert_int_equal(custom_labels_labelset_set_str(set, k1, v1), 0);
	if (k2)
		assert_int_equal(custom_labels_labelset_set_str(set, k2, v2), 0);
	return set;
}

/* In a child, before any use: the defaults are 16 labels, 128-byte keys, 256-byte values. */
static void test_defaults(void **state)
{
	static char buf[258];
	int status, i;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		const struct custom_labels_config zero = {0};
		int bad = 0;

		memset(buf, 'x', sizeof(buf));
		bad |= custom_labels_configure(&zero) != 0;
		for (i = 0; i < 16; i++) {
			char k[8];

			snprintf(k, sizeof(k), "k%d", i);
			bad |= custom_labels_set_str(k, "v") != 0;
		}
		bad |= custom_labels_set_str("k16", "v") != -ENOSPC;
		bad |= custom_labels_set(buf, 128, "v", 1) != -ENOSPC;
		bad |= custom_labels_set("k0", 2, buf, 256) != 0;
		bad |= custom_labels_set("k0", 2, buf, 257) != -EMSGSIZE;
		bad |= custom_labels_set(buf, 129, "v", 1) != -EMSGSIZE;
		bad |= custom_labels_delete_str("k1") != 0;
		bad |= custom_labels_set(buf, 128, buf, 256) != 0;
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Also runs before any use in this process. */
static void test_configure(void **state)
{
	struct custom_labels_config cfg = {0};

	assert_int_equal(custom_labels_configure(NULL), -EINVAL);
	cfg.max_labels = CUSTOM_LABELS_LIMIT_MAX_LABELS + 1;
	assert_int_equal(custom_labels_configure(&cfg), -EINVAL);
	cfg = (struct custom_labels_config){.max_key_len = CUSTOM_LABELS_LIMIT_MAX_LEN + 1};
	assert_int_equal(custom_labels_configure(&cfg), -EINVAL);
	cfg = (struct custom_labels_config){.max_value_len = CUSTOM_LABELS_LIMIT_MAX_LEN + 1};
	assert_int_equal(custom_labels_configure(&cfg), -EINVAL);
	cfg = (struct custom_labels_config){CUSTOM_LABELS_LIMIT_MAX_LABELS,
					    CUSTOM_LABELS_LIMIT_MAX_LEN,
					    CUSTOM_LABELS_LIMIT_MAX_LEN};
	assert_int_equal(custom_labels_configure(&cfg), 0);
	/* Reading and swapping use no storage: configuring stays possible. */
	assert_int_equal(custom_labels_count(), 0);
	assert_int_equal(custom_labels_get("a", 1, NULL, NULL), -ENOENT);
	assert_int_equal(custom_labels_delete("a", 1), -ENOENT);
	assert_null(custom_labels_swap(NULL));
	assert_int_equal(custom_labels_clear(), 0);
	assert_int_equal(custom_labels_set(NULL, 0, "v", 1), -EINVAL);
	cfg = (struct custom_labels_config){MAX_LABELS, MAX_KEY, MAX_VALUE};
	assert_int_equal(custom_labels_configure(&cfg), 0);
	EXPECT_NONE();
}

static void test_configure_busy(void **state)
{
	const struct custom_labels_config cfg = {8, 8, 8};

	set_ok("a", "1");
	assert_int_equal(custom_labels_configure(&cfg), -EBUSY);
	assert_int_equal(custom_labels_configure(NULL), -EINVAL);
	EXPECT({"a", "1"});
}

/* Both ABI symbols are dynamic symbols of the process, as readers require. */
static void test_abi_symbols(void **state)
{
	const uint32_t *version = dlsym(RTLD_DEFAULT, "custom_labels_abi_version");

	assert_ptr_equal(version, &custom_labels_abi_version);
	assert_int_equal(*version, ABI_VERSION);
	assert_non_null(dlsym(RTLD_DEFAULT, ABI_TLS_SYMBOL));
	assert_null(dlsym(RTLD_DEFAULT, ABI_OTHER_TLS_SYMBOL));
	assert_true(abi_installed_null());
}

static void test_set_get_count(void **state)
{
	const unsigned char *v;
	size_t len;

	EXPECT_NONE();
	set_ok("a", "1");
	EXPECT({"a", "1"});
	set_ok("bb", "22");
	set_ok("ccc", "333");
	EXPECT({"a", "1"}, {"bb", "22"}, {"ccc", "333"});
	assert_int_equal(custom_labels_get("bb", 2, &v, &len), 0);
	assert_int_equal(len, 2);
	assert_memory_equal(v, "22", 2);
	assert_int_equal(custom_labels_get("b", 1, &v, &len), -ENOENT);
	assert_int_equal(custom_labels_get("bbb", 3, &v, &len), -ENOENT);
	assert_int_equal(custom_labels_get("bb", 2, NULL, NULL), 0);
	assert_int_equal(custom_labels_get(NULL, 0, &v, &len), -EINVAL);
}

static void test_set_overwrite(void **state)
{
	set_ok("a", "1");
	set_ok("b", "2");
	set_ok("a", "one");
	EXPECT({"a", "one"}, {"b", "2"});
	set_ok("b", "");
	EXPECT({"a", "one"}, {"b", ""});
	set_ok("b", "0123456789abcdef");
	EXPECT({"a", "one"}, {"b", "0123456789abcdef"});
}

static void test_set_errors(void **state)
{
	static const char long_key[] = "012345678";
	static const char long_value[] = "0123456789abcdefX";

	set_ok("a", "1");
	assert_int_equal(custom_labels_set(NULL, 1, "v", 1), -EINVAL);
	assert_int_equal(custom_labels_set("k", 1, NULL, 1), -EINVAL);
	assert_int_equal(custom_labels_set_str(NULL, "v"), -EINVAL);
	assert_int_equal(custom_labels_set_str("k", NULL), -EINVAL);
	assert_int_equal(custom_labels_set(long_key, MAX_KEY + 1, "v", 1), -EMSGSIZE);
	assert_int_equal(custom_labels_set("k", 1, long_value, MAX_VALUE + 1), -EMSGSIZE);
	assert_int_equal(custom_labels_set("a", 1, long_value, MAX_VALUE + 1), -EMSGSIZE);
	EXPECT({"a", "1"});
	/* exactly at the limits */
	assert_int_equal(custom_labels_set(long_key, MAX_KEY, long_value, MAX_VALUE), 0);
	EXPECT({"a", "1"}, {"01234567", "0123456789abcdef"});
}

static void test_empty_and_binary(void **state)
{
	static const unsigned char bin[] = {'k', 0, 'x'};
	const struct abi_label *l;
	const unsigned char *v;
	size_t count, len;

	/* A NULL empty value: readers must still get a non-NULL buffer. */
	assert_int_equal(custom_labels_set("e", 1, NULL, 0), 0);
	l = abi_read(&count);
	assert_int_equal(count, 1);
	assert_non_null(l[0].value.buf);
	assert_int_equal(l[0].value.len, 0);
	assert_int_equal(custom_labels_get("e", 1, &v, &len), 0);
	assert_non_null(v);
	assert_int_equal(len, 0);
	/* An empty key is a key. */
	assert_int_equal(custom_labels_set("", 0, "empty", 5), 0);
	EXPECT({"e", ""}, {"", "empty"});
	/* NUL bytes are ordinary bytes: "k\0x", "k\0" and "k" are three keys. */
	assert_int_equal(custom_labels_set(bin, 3, "3", 1), 0);
	assert_int_equal(custom_labels_set(bin, 2, "2", 1), 0);
	assert_int_equal(custom_labels_set(bin, 1, "1", 1), -ENOSPC);
	assert_int_equal(custom_labels_delete("e", 1), 0);
	assert_int_equal(custom_labels_set(bin, 1, "1", 1), 0);
	assert_int_equal(custom_labels_count(), 4);
	abi_read(&count);
	assert_int_equal(count, 4);
	assert_int_equal(custom_labels_get(bin, 1, &v, &len), 0);
	assert_memory_equal(v, "1", 1);
	assert_int_equal(custom_labels_get(bin, 3, &v, &len), 0);
	assert_memory_equal(v, "3", 1);
	assert_int_equal(custom_labels_get(bin, 2, &v, &len), 0);
	assert_memory_equal(v, "2", 1);
}

static void test_enospc(void **state)
{
	set_ok("a", "1");
	set_ok("b", "2");
	set_ok("c", "3");
	set_ok("d", "4");
	assert_int_equal(custom_labels_set_str("e", "5"), -ENOSPC);
	EXPECT({"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"});
	set_ok("d", "four");
	EXPECT({"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "four"});
	assert_int_equal(custom_labels_delete_str("b"), 0);
	set_ok("e", "5");
	EXPECT({"a", "1"}, {"c", "3"}, {"d", "four"}, {"e", "5"});
}

static void test_delete(void **state)
{
	set_ok("a", "1");
	set_ok("b", "2");
	set_ok("c", "3");
	set_ok("d", "4");
	assert_int_equal(custom_labels_delete("b", 1), 0); /* middle */
	EXPECT({"a", "1"}, {"c", "3"}, {"d", "4"});
	assert_int_equal(custom_labels_delete("b", 1), -ENOENT);
	assert_int_equal(custom_labels_delete("bb", 2), -ENOENT);
	assert_int_equal(custom_labels_delete(NULL, 0), -EINVAL);
	assert_int_equal(custom_labels_delete_str(NULL), -EINVAL);
	assert_int_equal(custom_labels_delete_str("a"), 0); /* first */
	EXPECT({"c", "3"}, {"d", "4"});
	set_ok("e", "5");
	assert_int_equal(custom_labels_delete_str("e"), 0); /* last */
	EXPECT({"c", "3"}, {"d", "4"});
	assert_int_equal(custom_labels_delete_str("c"), 0);
	assert_int_equal(custom_labels_delete_str("d"), 0);
	EXPECT_NONE();
	assert_int_equal(custom_labels_delete_str("d"), -ENOENT);
	set_ok("f", "6");
	EXPECT({"f", "6"});
}

/* Many changes cycle through every slot: values must never bleed into each other. */
static void test_churn(void **state)
{
	char k[4], v[MAX_VALUE + 1], expected[MAX_LABELS][MAX_VALUE + 1];
	struct kv kv[MAX_LABELS];
	int i, j, n;

	memset(expected, 0, sizeof(expected));
	for (i = 0; i < 2000; i++) {
		j = (i * 7) % MAX_LABELS;
		snprintf(k, sizeof(k), "k%d", j);
		if (i % 5 == 4) {
			assert_int_equal(custom_labels_delete_str(k), expected[j][0] ? 0 : -ENOENT);
			expected[j][0] = 0;
		} else {
			snprintf(v, sizeof(v), "%d-%.*s", i, i % 8, "abcdefgh");
			set_ok(k, v);
			strcpy(expected[j], v);
		}
		for (j = n = 0; j < MAX_LABELS; j++) {
			static char keys[MAX_LABELS][4];

			if (!expected[j][0])
				continue;
			snprintf(keys[j], sizeof(keys[j]), "k%d", j);
			kv[n++] = (struct kv){keys[j], expected[j]};
		}
		expect_labels(kv, n);
	}
}

static void test_clear(void **state)
{
	set_ok("a", "1");
	set_ok("b", "2");
	assert_int_equal(custom_labels_clear(), 0);
	EXPECT_NONE();
	assert_true(abi_installed_null());
	assert_int_equal(custom_labels_clear(), 0);
	set_ok("c", "3");
	EXPECT({"c", "3"});
}

static void test_labelset(void **state)
{
	struct custom_labels_labelset *set = custom_labels_labelset_new();
	const unsigned char *v;
	size_t len;

	assert_non_null(set);
	assert_int_equal(custom_labels_labelset_count(set), 0);
	assert_int_equal(custom_labels_labelset_count(NULL), 0);
	assert_int_equal(custom_labels_labelset_set(set, "a", 1, "1", 1), 0);
	assert_int_equal(custom_labels_labelset_set_str(set, "b", "2"), 0);
	assert_int_equal(custom_labels_labelset_set(set, "e", 1, NULL, 0), 0);
	assert_int_equal(custom_labels_labelset_set_str(set, "a", "one"), 0);
	assert_int_equal(custom_labels_labelset_count(set), 3);
	assert_int_equal(custom_labels_labelset_get(set, "a", 1, &v, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "one", 3);
	assert_int_equal(custom_labels_labelset_get(set, "e", 1, &v, &len), 0);
	assert_non_null(v);
	assert_int_equal(len, 0);
	assert_int_equal(custom_labels_labelset_get(set, "b", 1, NULL, NULL), 0);
	assert_int_equal(custom_labels_labelset_get(set, "c", 1, &v, &len), -ENOENT);

	/* errors */
	assert_int_equal(custom_labels_labelset_set(NULL, "a", 1, "1", 1), -EINVAL);
	assert_int_equal(custom_labels_labelset_set(set, NULL, 1, "1", 1), -EINVAL);
	assert_int_equal(custom_labels_labelset_set(set, "a", 1, NULL, 1), -EINVAL);
	assert_int_equal(custom_labels_labelset_set_str(set, NULL, "1"), -EINVAL);
	assert_int_equal(custom_labels_labelset_set_str(set, "a", NULL), -EINVAL);
	assert_int_equal(custom_labels_labelset_set_str(NULL, "a", "1"), -EINVAL);
	assert_int_equal(custom_labels_labelset_set(set, "012345678", MAX_KEY + 1, "1", 1),
			 -EMSGSIZE);
	assert_int_equal(
		custom_labels_labelset_set(set, "a", 1, "0123456789abcdefX", MAX_VALUE + 1),
		-EMSGSIZE);
	assert_int_equal(custom_labels_labelset_get(NULL, "a", 1, &v, &len), -EINVAL);
	assert_int_equal(custom_labels_labelset_get(set, NULL, 1, &v, &len), -EINVAL);
	assert_int_equal(custom_labels_labelset_delete(NULL, "a", 1), -EINVAL);
	assert_int_equal(custom_labels_labelset_delete(set, NULL, 1), -EINVAL);
	assert_int_equal(custom_labels_labelset_delete(set, "c", 1), -ENOENT);
	assert_int_equal(custom_labels_labelset_set_str(set, "c", "3"), 0);
	assert_int_equal(custom_labels_labelset_set_str(set, "d", "4"), -ENOSPC);
	assert_int_equal(custom_labels_labelset_set_str(set, "c", "three"), 0);

	/* delete the first: the last one moves into its place, bytes and all */
	assert_int_equal(custom_labels_labelset_delete(set, "a", 1), 0);
	assert_int_equal(custom_labels_labelset_count(set), 3);
	assert_int_equal(custom_labels_labelset_get(set, "a", 1, &v, &len), -ENOENT);
	assert_int_equal(custom_labels_labelset_get(set, "c", 1, &v, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(v, "three", 5);
	assert_int_equal(custom_labels_labelset_set_str(set, "d", "4"), 0);
	assert_int_equal(custom_labels_labelset_delete(set, "d", 1), 0);
	assert_int_equal(custom_labels_labelset_count(set), 3);

	/* a value taken from the set itself (overlapping copy) */
	assert_int_equal(custom_labels_labelset_get(set, "c", 1, &v, &len), 0);
	assert_int_equal(custom_labels_labelset_set(set, "c", 1, v, len), 0);
	assert_int_equal(custom_labels_labelset_set(set, "b", 1, v + 1, len - 1), 0);
	assert_int_equal(custom_labels_labelset_get(set, "b", 1, &v, &len), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(v, "hree", 4);

	custom_labels_labelset_free(set);
	custom_labels_labelset_free(NULL);
	EXPECT_NONE();
}

static void test_swap(void **state)
{
	struct custom_labels_labelset *p = labelset("p", "1", "q", "2");
	struct custom_labels_labelset *r = labelset("r", "3", NULL, NULL);
	struct custom_labels_labelset *empty = labelset(NULL, NULL, NULL, NULL);

	set_ok("own", "x");
	assert_null(custom_labels_swap(p)); /* own labels before: NULL */
	EXPECT({"p", "1"}, {"q", "2"});
	assert_ptr_equal(custom_labels_swap(r), p);
	EXPECT({"r", "3"});
	assert_ptr_equal(custom_labels_swap(empty), r);
	EXPECT_NONE();
	assert_ptr_equal(custom_labels_swap(NULL), empty);
	EXPECT_NONE();
	assert_true(abi_installed_null());
	assert_null(custom_labels_swap(p));
	assert_ptr_equal(custom_labels_swap(p), p);

	/* Changing the current labels copies the prepared set, which stays as it was. */
	set_ok("q", "two");
	EXPECT({"p", "1"}, {"q", "two"});
	assert_int_equal(custom_labels_labelset_count(p), 2);
	assert_int_equal(custom_labels_delete_str("p"), 0);
	EXPECT({"q", "two"});
	assert_null(custom_labels_swap(p)); /* own labels again */
	EXPECT({"p", "1"}, {"q", "2"});
	assert_int_equal(custom_labels_delete_str("q"), 0);
	EXPECT({"p", "1"});
	assert_int_equal(custom_labels_delete_str("q"), -ENOENT);
	assert_null(custom_labels_swap(r));
	set_ok("s", "4");
	EXPECT({"r", "3"}, {"s", "4"});
	assert_null(custom_labels_swap(NULL));

	custom_labels_labelset_free(p);
	custom_labels_labelset_free(r);
	custom_labels_labelset_free(empty);
}

/* A full prepared set, then a change: the copy must fit the thread's slots. */
static void test_swap_full_then_change(void **state)
{
	struct custom_labels_labelset *p = labelset("a", "1", "b", "2");

	assert_int_equal(custom_labels_labelset_set_str(p, "c", "3"), 0);
	assert_int_equal(custom_labels_labelset_set_str(p, "d", "4"), 0);
	set_ok("w", "0");
	set_ok("x", "0");
	set_ok("y", "0");
	set_ok("z", "0");
	custom_labels_swap(p);
	assert_int_equal(custom_labels_set_str("e", "5"), -ENOSPC);
	EXPECT({"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"});
	set_ok("a", "one");
	set_ok("b", "two");
	EXPECT({"a", "one"}, {"b", "two"}, {"c", "3"}, {"d", "4"});
	custom_labels_swap(NULL);
	custom_labels_labelset_free(p);
}

static void test_installed_set_is_read_only(void **state)
{
	struct custom_labels_labelset *p = labelset("a", "1", NULL, NULL);

	custom_labels_swap(p);
	assert_int_equal(custom_labels_labelset_set_str(p, "b", "2"), -EBUSY);
	assert_int_equal(custom_labels_labelset_delete(p, "a", 1), -EBUSY);
	EXPECT({"a", "1"});
	custom_labels_swap(NULL);
	assert_int_equal(custom_labels_labelset_set_str(p, "b", "2"), 0);
	custom_labels_swap(p);
	EXPECT({"a", "1"}, {"b", "2"});
	/* Freeing the installed set uninstalls it first. */
	custom_labels_labelset_free(p);
	EXPECT_NONE();
	assert_true(abi_installed_null());
}

static void test_capture(void **state)
{
	struct custom_labels_labelset *c, *p = labelset("p", "1", NULL, NULL);

	set_ok("a", "1");
	set_ok("b", "");
	c = custom_labels_labelset_capture();
	assert_non_null(c);
	assert_int_equal(custom_labels_labelset_count(c), 2);
	set_ok("a", "changed");
	assert_int_equal(custom_labels_clear(), 0);
	assert_null(custom_labels_swap(c));
	EXPECT({"a", "1"}, {"b", ""});
	custom_labels_swap(p);
	custom_labels_labelset_free(c);
	c = custom_labels_labelset_capture(); /* from a prepared set */
	custom_labels_swap(NULL);
	assert_int_equal(custom_labels_labelset_count(c), 1);
	assert_int_equal(custom_labels_labelset_get(c, "p", 1, NULL, NULL), 0);
	custom_labels_labelset_free(c);
	c = custom_labels_labelset_capture(); /* from none */
	assert_int_equal(custom_labels_labelset_count(c), 0);
	custom_labels_labelset_free(c);
	custom_labels_labelset_free(p);
}

/* run_with: fn checks what it sees through the kv list in arg. */
struct run_check {
	const struct kv *expect;
	size_t n;
	int calls;
	void (*then)(struct run_check *rc);
};

static void run_fn(void *arg)
{
	struct run_check *rc = arg;

	rc->calls++;
	expect_labels(rc->expect, rc->n);
	if (rc->then)
		rc->then(rc);
}

static void test_run_with(void **state)
{
	const struct custom_labels_kv kv[] = {{"b", 1, "2", 1}, {"a", 1, "3", 1}};
	const struct kv inside[] = {{"a", "3"}, {"b", "2"}};
	struct run_check rc = {inside, 2, 0, NULL};

	set_ok("a", "1");
	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &rc), 0);
	assert_int_equal(rc.calls, 1);
	EXPECT({"a", "1"});
	/* only additions: restored by dropping them */
	rc = (struct run_check){inside, 2, 0, NULL};
	assert_int_equal(custom_labels_clear(), 0);
	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &rc), 0);
	assert_int_equal(rc.calls, 1);
	EXPECT_NONE();
	/* nothing to add */
	rc = (struct run_check){NULL, 0, 0, NULL};
	assert_int_equal(custom_labels_run_with(NULL, 0, run_fn, &rc), 0);
	assert_int_equal(rc.calls, 1);
}

static void change_everything(struct run_check *rc)
{
	set_ok("c", "30");
	set_ok("a", "10");
	assert_int_equal(custom_labels_delete_str("b"), 0);
	set_ok("d", "40");
	EXPECT({"a", "10"}, {"c", "30"}, {"d", "40"}, {"x", "9"});
}

static void test_run_with_restores_after_changes(void **state)
{
	const struct custom_labels_kv kv[] = {{"x", 1, "9", 1}};
	const struct kv inside[] = {{"a", "1"}, {"b", "2"}, {"x", "9"}};
	struct run_check rc = {inside, 3, 0, change_everything};

	set_ok("a", "1");
	set_ok("b", "2");
	assert_int_equal(custom_labels_run_with(kv, 1, run_fn, &rc), 0);
	assert_int_equal(rc.calls, 1);
	EXPECT({"a", "1"}, {"b", "2"});
	/* the restored labels are the thread's own again, and changeable */
	set_ok("c", "3");
	EXPECT({"a", "1"}, {"b", "2"}, {"c", "3"});
}

static void nested_3(struct run_check *rc)
{
	assert_int_equal(custom_labels_delete_str("a"), 0);
	set_ok("z", "26");
	EXPECT({"s", "span2"}, {"t", "t"}, {"z", "26"});
}

static void nested_2(struct run_check *rc)
{
	const struct custom_labels_kv kv[] = {{"s", 1, "span2", 5}, {"t", 1, "t", 1}};
	const struct kv inside[] = {{"a", "1"}, {"s", "span2"}, {"t", "t"}};
	struct run_check inner = {inside, 3, 0, nested_3};

	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &inner), 0);
	assert_int_equal(inner.calls, 1);
	EXPECT({"a", "1"}, {"s", "span1"});
}

static void test_run_with_nested(void **state)
{
	const struct custom_labels_kv kv[] = {{"s", 1, "span1", 5}};
	const struct kv inside[] = {{"a", "1"}, {"s", "span1"}};
	struct run_check rc = {inside, 2, 0, nested_2};

	set_ok("a", "1");
	assert_int_equal(custom_labels_run_with(kv, 1, run_fn, &rc), 0);
	assert_int_equal(rc.calls, 1);
	EXPECT({"a", "1"});
}

static struct custom_labels_labelset *swap_to;

static void swap_inside(struct run_check *rc)
{
	custom_labels_swap(swap_to);
	EXPECT({"r", "3"});
}

static void test_run_with_prepared(void **state)
{
	const struct custom_labels_kv kv[] = {{"x", 1, "9", 1}, {"p", 1, "one", 3}};
	const struct kv inside[] = {{"p", "one"}, {"q", "2"}, {"x", "9"}};
	struct custom_labels_labelset *p = labelset("p", "1", "q", "2");
	struct run_check rc = {inside, 3, 0, NULL};

	swap_to = labelset("r", "3", NULL, NULL);
	custom_labels_swap(p);
	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &rc), 0);
	EXPECT({"p", "1"}, {"q", "2"});
	assert_int_equal(custom_labels_labelset_count(p), 2);
	/* fn installs another prepared set: the one before comes back */
	rc = (struct run_check){inside, 3, 0, swap_inside};
	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &rc), 0);
	assert_ptr_equal(custom_labels_swap(NULL), p);
	/* from own labels, same */
	set_ok("o", "0");
	rc = (struct run_check){NULL, 0, 0, NULL};
	rc.then = swap_inside;
	rc.expect = (const struct kv[]){{"o", "0"}, {"x", "9"}, {"p", "one"}};
	rc.n = 3;
	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &rc), 0);
	EXPECT({"o", "0"});
	/* from none */
	assert_int_equal(custom_labels_clear(), 0);
	rc.expect = (const struct kv[]){{"x", "9"}, {"p", "one"}};
	rc.n = 2;
	assert_int_equal(custom_labels_run_with(kv, 2, run_fn, &rc), 0);
	EXPECT_NONE();
	assert_true(abi_installed_null());
	custom_labels_labelset_free(p);
	custom_labels_labelset_free(swap_to);
}

static void test_run_with_errors(void **state)
{
	struct run_check rc = {NULL, 0, 0, NULL};
	const struct custom_labels_kv ok = {"x", 1, "9", 1};
	struct custom_labels_kv bad;
	const struct custom_labels_kv three[] = {
		{"x", 1, "1", 1}, {"y", 1, "2", 1}, {"x", 1, "3", 1}};
	const struct custom_labels_kv four[] = {
		{"x", 1, "1", 1}, {"y", 1, "2", 1}, {"z", 1, "3", 1}, {"a", 1, "4", 1}};

	set_ok("a", "1");
	set_ok("b", "2");
	assert_int_equal(custom_labels_run_with(&ok, 1, NULL, NULL), -EINVAL);
	assert_int_equal(custom_labels_run_with(NULL, 1, run_fn, &rc), -EINVAL);
	bad = (struct custom_labels_kv){NULL, 0, "v", 1};
	assert_int_equal(custom_labels_run_with(&bad, 1, run_fn, &rc), -EINVAL);
	bad = (struct custom_labels_kv){"k", 1, NULL, 1};
	assert_int_equal(custom_labels_run_with(&bad, 1, run_fn, &rc), -EINVAL);
	bad = (struct custom_labels_kv){"012345678", MAX_KEY + 1, "v", 1};
	assert_int_equal(custom_labels_run_with(&bad, 1, run_fn, &rc), -EMSGSIZE);
	bad = (struct custom_labels_kv){"k", 1, "0123456789abcdefX", MAX_VALUE + 1};
	assert_int_equal(custom_labels_run_with(&bad, 1, run_fn, &rc), -EMSGSIZE);
	/* 2 present + x, y, z = 5 > 4 */
	assert_int_equal(custom_labels_run_with(four, 3, run_fn, &rc), -ENOSPC);
	assert_int_equal(rc.calls, 0);
	EXPECT({"a", "1"}, {"b", "2"});
	/* a present key adds nothing; a repeated key counts once and takes its last value */
	rc.expect = (const struct kv[]){{"a", "4"}, {"b", "2"}};
	rc.n = 2;
	assert_int_equal(custom_labels_run_with(four + 3, 1, run_fn, &rc), 0);
	rc.expect = (const struct kv[]){{"a", "1"}, {"b", "2"}, {"x", "3"}, {"y", "2"}};
	rc.n = 4;
	assert_int_equal(custom_labels_run_with(three, 3, run_fn, &rc), 0);
	assert_int_equal(rc.calls, 2);
	EXPECT({"a", "1"}, {"b", "2"});
}

static void exit_now(void *arg)
{
	pthread_exit(NULL);
}

static size_t count_at_cleanup;
static int inner_at_cleanup;

static void record_labels(void *arg)
{
	count_at_cleanup = custom_labels_count();
	inner_at_cleanup = custom_labels_get("inner", 5, NULL, NULL);
}

static void *exiting_in_run_with(void *arg)
{
	const struct custom_labels_kv kv = {"inner", 5, "2", 1};

	custom_labels_set_str("outer", "1");
	pthread_cleanup_push(record_labels, NULL);
	custom_labels_run_with(&kv, 1, exit_now, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

/* Unwinding out of fn (here by pthread_exit) still restores the labels. */
static void test_run_with_unwind(void **state)
{
	pthread_t t;

	count_at_cleanup = 99;
	assert_int_equal(pthread_create(&t, NULL, exiting_in_run_with, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(count_at_cleanup, 1);
	assert_int_equal(inner_at_cleanup, -ENOENT);
}

static pthread_key_t probe_key;
static int probe_labels_gone;
static int probe_late_set;

/*
 * Runs after the library's destructor (glibc runs them in key order, and the
 * library's key was created first): readers must already see no labels.
 */
static void probe_destructor(void *arg)
{
	probe_labels_gone = abi_installed_null() && custom_labels_count() == 0;
	/* Labels set this late get their own storage, freed by another round. */
	probe_late_set = custom_labels_set_str("late", "1");
}

static void *exiting_with_labels(void *arg)
{
	if (custom_labels_set_str("a", "1") || custom_labels_set_str("b", "2") ||
	    pthread_setspecific(probe_key, arg))
		return (void *)1;
	return NULL;
}

static void test_thread_exit(void **state)
{
	pthread_t t;
	void *ret;

	assert_int_equal(pthread_key_create(&probe_key, probe_destructor), 0);
	probe_labels_gone = -1;
	probe_late_set = -1;
	assert_int_equal(pthread_create(&t, NULL, exiting_with_labels, &probe_key), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_null(ret);
	assert_int_equal(probe_labels_gone, 1);
	assert_int_equal(probe_late_set, 0);
	pthread_key_delete(probe_key);
}

static void *labels_on_new_thread(void *arg)
{
	struct custom_labels_labelset *p = arg;

	/* a fresh thread starts without labels, whatever others have */
	if (custom_labels_count() != 0 || !abi_installed_null())
		return (void *)1;
	if (custom_labels_swap(p) || custom_labels_count() != 1)
		return (void *)2;
	if (custom_labels_set_str("t", "2") || custom_labels_count() != 2)
		return (void *)3;
	return NULL;
}

static void test_threads_are_separate(void **state)
{
	struct custom_labels_labelset *p = labelset("p", "1", NULL, NULL);
	void *ret;
	pthread_t t;

	set_ok("main", "1");
	assert_int_equal(pthread_create(&t, NULL, labels_on_new_thread, p), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_null(ret);
	EXPECT({"main", "1"});
	assert_int_equal(custom_labels_labelset_count(p), 1);
	custom_labels_labelset_free(p);
}

#ifdef CL_TEST_STATIC
static void run_change(void *arg)
{
	custom_labels_set_str("x", "fn");
}

/* After the first use, nothing but labelset_new/capture allocates. */
static void test_no_allocation_on_hot_path(void **state)
{
	const struct custom_labels_kv kv[] = {{"x", 1, "9", 1}, {"q", 1, "3", 1}};
	struct custom_labels_labelset *p = labelset("p", "1", "q", "2");
	unsigned long before;
	int i;

	set_ok("a", "1");
	before = allocations;
	for (i = 0; i < 1000; i++) {
		set_ok("a", i & 1 ? "1" : "one");
		set_ok("b", "2");
		assert_int_equal(custom_labels_get("b", 1, NULL, NULL), 0);
		assert_int_equal(custom_labels_delete_str("b"), 0);
		assert_int_equal(custom_labels_run_with(kv, 2, run_change, NULL), 0);
		custom_labels_swap(p);
		set_ok("c", "3");
		assert_int_equal(custom_labels_run_with(kv, 2, run_change, NULL), 0);
		custom_labels_swap(p);
		assert_int_equal(custom_labels_run_with(kv, 2, run_change, NULL), 0);
		custom_labels_clear();
		set_ok("a", "1");
	}
	assert_int_equal(allocations, before);
	custom_labels_labelset_free(p);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: they need a process where the library is still unused */
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_configure),
		cmocka_unit_test(test_configure_busy),
		cmocka_unit_test_setup(test_abi_symbols, reset),
		cmocka_unit_test_setup(test_set_get_count, reset),
		cmocka_unit_test_setup(test_set_overwrite, reset),
		cmocka_unit_test_setup(test_set_errors, reset),
		cmocka_unit_test_setup(test_empty_and_binary, reset),
		cmocka_unit_test_setup(test_enospc, reset),
		cmocka_unit_test_setup(test_delete, reset),
		cmocka_unit_test_setup(test_churn, reset),
		cmocka_unit_test_setup(test_clear, reset),
		cmocka_unit_test_setup(test_labelset, reset),
		cmocka_unit_test_setup(test_swap, reset),
		cmocka_unit_test_setup(test_swap_full_then_change, reset),
		cmocka_unit_test_setup(test_installed_set_is_read_only, reset),
		cmocka_unit_test_setup(test_capture, reset),
		cmocka_unit_test_setup(test_run_with, reset),
		cmocka_unit_test_setup(test_run_with_restores_after_changes, reset),
		cmocka_unit_test_setup(test_run_with_nested, reset),
		cmocka_unit_test_setup(test_run_with_prepared, reset),
		cmocka_unit_test_setup(test_run_with_errors, reset),
		cmocka_unit_test_setup(test_run_with_unwind, reset),
		cmocka_unit_test_setup(test_thread_exit, reset),
		cmocka_unit_test_setup(test_threads_are_separate, reset),
#ifdef CL_TEST_STATIC
		cmocka_unit_test_setup(test_no_allocation_on_hot_path, reset),
#endif
	};

	setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines, in order with cmocka's stderr */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
