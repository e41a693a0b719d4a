// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "format/fmt.h"
#include "lib/compiler.h"
#include "format/output.h"

static const char hex[] = "0123456789abcdef";

void fmt__json_bytes(FILE *f, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i = 0;

	putc_unlocked('"', f);
	while (i < n) {
		unsigned char c = s[i];
		size_t len;

		if (c == '"' || c == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(c, f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if ((len = output__utf8_len(s + i, n - i))) {
			fwrite_unlocked(s + i, 1, len, f);
			i += len;
		} else {
			fprintf(f, "\\udc%c%c", hex[c >> 4], hex[c & 15]);
			i++;
		}
	}
	putc_unlocked('"', f);
}

void fmt__json_labels(FILE *f, const struct profile_label *labels, size_t n)
{
	size_t i;

	putc_unlocked('{', f);
	for (i = 0; i < n; i++) {
		if (i)
			putc_unlocked(',', f);
		fmt__json_bytes(f, labels[i].key, labels[i].key_len);
		putc_unlocked(':', f);
		fmt__json_bytes(f, labels[i].value, labels[i].value_len);
	}
	putc_unlocked('}', f);
}

const char *fmt__label_source_name(__u32 source)
{
	static const char *const names[] = {
		[LP_SRC_CUSTOM_LABELS] = "custom_labels",
		[LP_SRC_OTEL_THREAD] = "otel_thread",
		[LP_SRC_GO_PPROF] = "go_pprof",
		[LP_SRC_OTEL_PROCESS] = "otel_process",
	};

	return source < ARRAY_SIZE(names) && names[source] ? names[source] : "unknown";
}

void fmt__json_label_sources(FILE *f, const struct profile_label *labels, size_t n)
{
	bool first = true;
	size_t i;

	putc_unlocked('{', f);
	for (i = 0; i < n; i++) {
		if (labels[i].source == LP_SRC_CUSTOM_LABELS)
			continue;
		if (!first)
			putc_unlocked(',', f);
		first = false;
		fmt__json_bytes(f, labels[i].key, labels[i].key_len);
		fprintf(f, ":\"%s\"", fmt__label_source_name(labels[i].source));
	}
	putc_unlocked('}', f);
}

__u32 fmt__label_source_by_name(const void *name, size_t len)
{
	__u32 source;

	for (source = LP_SRC_OTEL_THREAD; source <= LP_SRC_OTEL_PROCESS; source++) {
		const char *s = fmt__label_source_name(source);

		if (len == strlen(s) && !memcmp(name, s, len))
			return source;
	}
	return LP_SRC_CUSTOM_LABELS;
}

__u32 fmt__label_source_of_unit(const char *unit)
{
	size_t prefix = strlen(FMT_LABEL_SOURCE_UNIT);

	if (strncmp(unit, FMT_LABEL_SOURCE_UNIT, prefix))
		return LP_SRC_CUSTOM_LABELS;
	return fmt__label_source_by_name(unit + prefix, strlen(unit + prefix));
}

static const char *const status_names[32] = {
	[0] = "no_recipe",	   [1] = "labels_read",	 [2] = "read_fault",
	[3] = "truncated",	   [4] = "malformed",	 [5] = "dtv_unallocated",
	[6] = "kstack_error",	   [7] = "ustack_error", [8] = "labels_off",
	[9] = "tls_pending",	   [10] = "exiting",	 [11] = "maps_changed",
	[14] = "ustack_truncated", [15] = "worker",	 [31] = "dropped",
};

_Static_assert(LP_ST_NO_RECIPE == 1 << 0 && LP_ST_TRUNCATED == 1 << 3 &&
		       LP_ST_DTV_UNALLOCATED == 1 << 5 && LP_ST_LABELS_OFF == 1 << 8 &&
		       LP_ST_TLS_PENDING == 1 << 9 && LP_ST_EXITING == 1 << 10 &&
		       LP_ST_MAPS_CHANGED == 1 << 11 && LP_ST_USTACK_TRUNCATED == 1 << 14 &&
		       LP_ST_WORKER == 1 << 15 && PROFILE_ST_DROPPED == 1u << 31,
	       "status_names follows the status bits");

const char *fmt__status_name(unsigned int bit)
{
	return bit < 32 ? status_names[bit] : NULL;
}

const char *fmt__unwind_name(__u32 status)
{
	switch (status & FMT_UNWIND_BITS) {
	case LP_ST_UNWIND_CFI:
		return "cfi";
	case LP_ST_UNWIND_FP:
		return "fp";
	case FMT_UNWIND_BITS:
		return "mixed";
	}
	return NULL;
}

__u32 fmt__unwind_bits(const char *name, size_t len)
{
	static const __u32 all[] = {LP_ST_UNWIND_CFI, LP_ST_UNWIND_FP, FMT_UNWIND_BITS};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (strlen(fmt__unwind_name(all[i])) == len &&
		    !memcmp(fmt__unwind_name(all[i]), name, len))
			return all[i];
	return 0;
}

void fmt__json_status(FILE *f, __u32 status)
{
	bool first = true;
	unsigned int bit;

	putc_unlocked('[', f);
	for (bit = 0; bit < 32; bit++) {
		if (!(status & (1u << bit)))
			continue;
		if (!first)
			putc_unlocked(',', f);
		first = false;
		if (status_names[bit])
			fprintf(f, "\"%s\"", status_names[bit]);
		else
			fprintf(f, "\"bit_%u\"", bit);
	}
	putc_unlocked(']', f);
}

/*
 * Widths come from wcwidth() under C.UTF-8, whatever the process's locale:
 * labels are shown as UTF-8. Without that locale, non-ASCII is escaped.
 */
static locale_t utf8_locale;
static pthread_once_t utf8_locale_once = PTHREAD_ONCE_INIT;

static void utf8_locale_init(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static wchar_t utf8_decode(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	wchar_t cp = s[0] & lead_mask[len];
	size_t i;

	for (i = 1; i < len; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

/*
 * The character at s (n bytes left): *len bytes shown in the returned
 * columns, or 0 columns when those bytes are to be escaped: ASCII controls,
 * DEL, the backslash (so escapes stay unambiguous), the ASCII characters in
 * also, invalid UTF-8, and characters without a width of their own (C1
 * controls, which some terminals obey, zero-width and bidirectional
 * formatting characters, combining marks, unassigned code points).
 */
static size_t char_cols(const unsigned char *s, size_t n, const char *also, size_t *len)
{
	size_t u = output__utf8_len(s, n);
	locale_t old;
	int w;

	*len = u ? u : 1;
	if (u == 1)
		return s[0] < 0x20 || s[0] == 0x7f || s[0] == '\\' || (also && strchr(also, s[0]))
			       ? 0
			       : 1;
	pthread_once(&utf8_locale_once, utf8_locale_init);
	if (!u || !utf8_locale)
		return 0;
	old = uselocale(utf8_locale);
	w = wcwidth(utf8_decode(s, u));
	uselocale(old);
	return w > 0 ? w : 0;
}

/* The columns of s, counted up to limit: past it the count stops (any value > limit). */
static size_t text_width(const unsigned char *s, size_t n, const char *also, size_t limit)
{
	size_t i = 0, cols = 0, len, w;

	while (i < n && cols <= limit) {
		w = char_cols(s + i, n - i, also, &len);
		cols += w ? w : 4 * len;
		i += len;
	}
	return cols;
}

size_t fmt__text_width(const void *p, size_t n, const char *also)
{
	return text_width(p, n, also, SIZE_MAX);
}

size_t fmt__text_bytes(FILE *f, const void *p, size_t n, const char *also, size_t max_cols)
{
	const unsigned char *s = p;
	size_t i = 0, cols = 0, budget = max_cols, len, w, k;
	bool cut = max_cols != SIZE_MAX && text_width(s, n, also, max_cols) > max_cols;

	/* what is cut leaves room for the mark */
	if (cut)
		budget = max_cols > 3 ? max_cols - 3 : 0;
	while (i < n) {
		w = char_cols(s + i, n - i, also, &len);
		if ((w ? w : 4 * len) > budget - cols)
			break;
		if (w) {
			fwrite_unlocked(s + i, 1, len, f);
		} else {
			for (k = 0; k < len; k++) {
				putc_unlocked('\\', f);
				putc_unlocked('x', f);
				putc_unlocked(hex[s[i + k] >> 4], f);
				putc_unlocked(hex[s[i + k] & 15], f);
			}
		}
		cols += w ? w : 4 * len;
		i += len;
	}
	for (k = 0; cut && k < 3 && cols < max_cols; k++, cols++)
		putc_unlocked('.', f);
	return cols;
}

void fmt__text_line(FILE *f, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	fmt__text_bytes(f, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, NULL,
			SIZE_MAX);
	putc_unlocked('\n', f);
}
