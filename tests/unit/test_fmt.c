// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shared escaping of untrusted bytes: exact JSON and text for hostile
 * bytes, text that decodes back to the same bytes, terminal text in exact
 * columns (wide characters, C1 controls, bidi and zero-width characters,
 * combining marks, invalid UTF-8, cut marks, every width 0..199), and the
 * status names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <locale.h>
#include <wchar.h>

#include "format/fmt.h"
#include "format/output.h"

/* What fn wrote, NUL-terminated; the caller frees it. */
#define CAPTURE(buf, call)                                                                         \
	do {                                                                                       \
		size_t len_;                                                                       \
		FILE *f = open_memstream(&(buf), &len_);                                           \
		assert_non_null(f);                                                                \
		call;                                                                              \
		assert_int_equal(fclose(f), 0);                                                    \
	} while (0)

static void test_json_bytes(void **state)
{
	static const unsigned char in[] = "a\"\\\n\x7f\x01 \xd0\xba \xff\xc3\x28 \xf0\x9f\x9a\x80";
	char *out;

	CAPTURE(out, fmt__json_bytes(f, in, sizeof(in) - 1));
	assert_string_equal(out, "\"a\\\"\\\\\\u000a\\u007f\\u0001 \xd0\xba \\udcff\\udcc3( "
				 "\xf0\x9f\x9a\x80\"");
	free(out);
	/* an embedded NUL, and a sequence cut at the end */
	CAPTURE(out, fmt__json_bytes(f, "k\0v\xe2\x82", 5));
	assert_string_equal(out, "\"k\\u0000v\\udce2\\udc82\"");
	free(out);
}

static void test_json_labels_and_status(void **state)
{
	const struct profile_label labels[] = {
		{(const unsigned char *)"a", (const unsigned char *)"1", 1, 1,
		 LP_SRC_CUSTOM_LABELS},
		{(const unsigned char *)"b\xff", (const unsigned char *)"", 2, 0,
		 LP_SRC_CUSTOM_LABELS},
	};
	char *out;

	CAPTURE(out, fmt__json_labels(f, labels, 2));
	assert_string_equal(out, "{\"a\":\"1\",\"b\\udcff\":\"\"}");
	free(out);
	CAPTURE(out, fmt__json_labels(f, labels, 0));
	assert_string_equal(out, "{}");
	free(out);
	CAPTURE(out, fmt__json_status(f, LP_ST_LABELS_READ | LP_ST_DTV_UNALLOCATED | (1u << 20) |
						 PROFILE_ST_DROPPED));
	assert_string_equal(out, "[\"labels_read\",\"dtv_unallocated\",\"bit_20\",\"dropped\"]");
	free(out);
	CAPTURE(out, fmt__json_status(f, 0));
	assert_string_equal(out, "[]");
	free(out);
}

static void test_status_names(void **state)
{
	assert_string_equal(fmt__status_name(0), "no_recipe");
	assert_string_equal(fmt__status_name(5), "dtv_unallocated");
	assert_string_equal(fmt__status_name(10), "exiting");
	assert_string_equal(fmt__status_name(31), "dropped");
	assert_null(fmt__status_name(20));
	assert_null(fmt__status_name(32));
}

/* Decodes \xHH back to bytes; returns the length. */
static size_t unescape(const char *s, unsigned char *out)
{
	size_t n = 0;

	while (*s) {
		if (s[0] == '\\') {
			assert_int_equal(s[1], 'x');
			out[n++] = (unsigned char)strtoul((char[]){s[2], s[3], 0}, NULL, 16);
			s += 4;
		} else {
			out[n++] = (unsigned char)*s++;
		}
	}
	return n;
}

static void test_text_bytes(void **state)
{
	static const unsigned char in[] = "a=b \\\n\t\x7f\xff\xd0\xba:\0z";
	unsigned char back[64];
	size_t cols;
	char *out;

	CAPTURE(out, cols = fmt__text_bytes(f, in, sizeof(in) - 1, "=:", SIZE_MAX));
	assert_string_equal(out, "a\\x3db \\x5c\\x0a\\x09\\x7f\\xff\xd0\xba\\x3a\\x00z");
	/* a, \x3d, b, space, five escapes, one character, two escapes, z */
	assert_int_equal(cols, 1 + 4 + 1 + 1 + 5 * 4 + 1 + 2 * 4 + 1);
	/* lossless: every byte comes back */
	assert_int_equal(unescape(out, back), sizeof(in) - 1);
	assert_memory_equal(back, in, sizeof(in) - 1);
	free(out);
	/* no extra characters: '=' and ':' stay as they are */
	CAPTURE(out, fmt__text_bytes(f, "a=b:c", 5, NULL, SIZE_MAX));
	assert_string_equal(out, "a=b:c");
	free(out);
	/* cut within max_cols, the mark included */
	CAPTURE(out, cols = fmt__text_bytes(f, "abcdef", 6, NULL, 5));
	assert_string_equal(out, "ab...");
	assert_int_equal(cols, 5);
	free(out);
	CAPTURE(out, cols = fmt__text_bytes(f, "abcdef", 6, NULL, 3));
	assert_string_equal(out, "...");
	assert_int_equal(cols, 3);
	free(out);
	/* the width counts what also escapes */
	assert_int_equal(fmt__text_width("a=b", 3, "="), 1 + 4 + 1);
	assert_int_equal(fmt__text_width("a=b", 3, NULL), 3);
	assert_int_equal(fmt__text_width("", 0, NULL), 0);
}

/* What fmt__text_bytes writes for s (n bytes) in max_cols; *cols gets its return. */
static char *put(const char *s, size_t n, size_t max_cols, size_t *cols)
{
	char *out;

	CAPTURE(out, *cols = fmt__text_bytes(f, s, n, NULL, max_cols));
	return out;
}

#define ASSERT_PUT(s, max, want, want_cols)                                                        \
	do {                                                                                       \
		size_t cols;                                                                       \
		char *out = put(s, sizeof(s) - 1, max, &cols);                                     \
		assert_string_equal(out, want);                                                    \
		assert_int_equal(cols, want_cols);                                                 \
		free(out);                                                                         \
	} while (0)

static void test_text_terminal(void **state)
{
	ASSERT_PUT("acme", 10, "acme", 4);
	/* controls, DEL and the backslash itself are escaped */
	ASSERT_PUT("a\nb\\\x7f", 40, "a\\x0ab\\x5c\\x7f", 14);
	ASSERT_PUT("\033[2J", 40, "\\x1b[2J", 7);
	/* invalid UTF-8, and valid UTF-8 a terminal obeys or shows as nothing */
	ASSERT_PUT("\xff\xc3", 40, "\\xff\\xc3", 8);
	ASSERT_PUT("\xc2\x9b"
		   "1m",
		   40, "\\xc2\\x9b1m", 10); /* C1 CSI */
	ASSERT_PUT("a\xe2\x80\xae"
		   "b",
		   40, "a\\xe2\\x80\\xaeb", 14); /* RTL override */
	ASSERT_PUT("a\xe2\x80\x8b"
		   "b",
		   40, "a\\xe2\\x80\\x8bb", 14);       /* zero-width space */
	ASSERT_PUT("e\xcc\x81", 40, "e\\xcc\\x81", 9); /* combining accent */
	/* printable UTF-8 as it is, wide characters two columns */
	ASSERT_PUT("caf\xc3\xa9", 4, "caf\xc3\xa9", 4);
	ASSERT_PUT("\xe4\xb8\xad\xe6\x96\x87", 4, "\xe4\xb8\xad\xe6\x96\x87", 4);
	ASSERT_PUT("\xf0\x9f\x9a\x80", 2, "\xf0\x9f\x9a\x80", 2);
	assert_int_equal(fmt__text_width("\xe4\xb8\xad\x01", 4, NULL), 6);

	/* cut with "...", never through a character or an escape */
	ASSERT_PUT("abcdefghij", 10, "abcdefghij", 10);
	ASSERT_PUT("abcdefghij", 6, "abc...", 6);
	ASSERT_PUT("ab\x01"
		   "cdef",
		   7, "ab...", 5);
	ASSERT_PUT("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 5, "\xe4\xb8\xad...", 5);
	ASSERT_PUT("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 4, "...", 3);
	ASSERT_PUT("abcdefghij", 2, "..", 2);
	ASSERT_PUT("abcdefghij", 0, "", 0);
	ASSERT_PUT("", 0, "", 0);
}

/* The terminal columns of text written by fmt__text_bytes (valid UTF-8). */
static size_t columns(const char *s)
{
	locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0), old;
	size_t cols = 0, n = strlen(s), k;
	mbstate_t mb = {};
	wchar_t wc;
	int w;

	assert_non_null(loc);
	old = uselocale(loc);
	while (n) {
		k = mbrtowc(&wc, s, n, &mb);
		assert_true(k > 0 && k <= n);
		w = wcwidth(wc);
		assert_true(w > 0);
		cols += w;
		s += k;
		n -= k;
	}
	uselocale(old);
	freelocale(loc);
	return cols;
}

/*
 * In every width from 0 to 199, hostile text takes exactly the columns it
 * says, never more than it has; whole when it fits, else a prefix of it and
 * the mark.
 */
static void test_text_fits(void **state)
{
	static const char *const texts[] = {
		"tenant-\xe4\xb8\xad\xe6\x96\x87\x01\xc2\x9b\xe2\x80\xae"
		"e\xcc\x81\xff\\ caf\xc3\xa9 \xf0\x9f\x9a\x80\x1b[2J",
		"\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97"
		"\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97",
		"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
		"a\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81"
		"\xcc\x81",
	};
	unsigned char back[512];
	size_t t, max, cols, width, n, len, dots, next;
	char *out;

	for (t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		n = strlen(texts[t]);
		width = fmt__text_width(texts[t], n, NULL);
		for (max = 0; max < 200; max++) {
			out = put(texts[t], n, max, &cols);
			if (columns(out) != cols || cols > max)
				fail_msg("text %zu in %zu columns: %zu (says %zu): %s", t, max,
					 columns(out), cols, out);
			len = strlen(out);
			if (width <= max) {
				assert_int_equal(cols, width);
				assert_int_equal(unescape(out, back), n);
				assert_memory_equal(back, texts[t], n);
			} else {
				dots = max < 3 ? max : 3;
				assert_true(len >= dots);
				assert_memory_equal(out + len - dots, "...", dots);
				out[len - dots] = 0;
				len = unescape(out, back);
				assert_true(len < n);
				assert_memory_equal(back, texts[t], len);
				/* as much as fits: the next character would not */
				next = output__utf8_len((const unsigned char *)texts[t] + len,
							n - len);
				next = len + (next ? next : 1);
				assert_int_equal(fmt__text_width(texts[t], len, NULL) + dots, cols);
				assert_true(fmt__text_width(texts[t], next, NULL) + 3 > max);
			}
			free(out);
		}
	}
}

static void test_text_line(void **state)
{
	char *out, big[5000];

	CAPTURE(out, fmt__text_line(f, "pid %d: %s", 7, "/tmp/evil\n\x1b[2J"));
	assert_string_equal(out, "pid 7: /tmp/evil\\x0a\\x1b[2J\n");
	free(out);
	/* cut, but still one line */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CAPTURE(out, fmt__text_line(f, "%s", big));
	assert_int_equal(strlen(out), 4096);
	assert_int_equal(out[4095], '\n');
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_bytes),    cmocka_unit_test(test_json_labels_and_status),
		cmocka_unit_test(test_status_names),  cmocka_unit_test(test_text_bytes),
		cmocka_unit_test(test_text_terminal), cmocka_unit_test(test_text_fits),
		cmocka_unit_test(test_text_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
