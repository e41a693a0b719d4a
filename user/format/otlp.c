// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the OTLP writer and reader share: the trace Link labels carry (format/otlp.h). */
#include <stdbool.h>
#include <string.h>

#include "format/otlp.h"
#include "profile/symprof.h"

static bool value_hex(const struct sp_string *v, unsigned char *out, size_t n)
{
	unsigned char any = 0;
	size_t i;

	if (v->len != 2 * n)
		return false;
	for (i = 0; i < 2 * n; i++) {
		unsigned char c = v->bytes[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return false;
		out[i / 2] = i % 2 ? out[i / 2] | d : d << 4;
	}
	for (i = 0; i < n; i++)
		any |= out[i];
	return any;
}

/* A decimal 64-bit id in canonical form (no sign, no leading zero), not zero. */
static bool value_decimal(const struct sp_string *v, unsigned char out[8])
{
	__u64 x = 0;
	size_t i;

	if (!v->len || v->len > 20 || v->bytes[0] == '0')
		return false;
	for (i = 0; i < v->len; i++) {
		if (v->bytes[i] < '0' || v->bytes[i] > '9' || __builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, v->bytes[i] - '0', &x))
			return false;
	}
	for (i = 0; i < 8; i++)
		out[i] = x >> (56 - 8 * i);
	return true;
}

enum otlp_link_source otlp__link_from_labels(const struct symprof *sp,
					     const struct sp_label *labels, size_t n,
					     struct otlp_trace_link *link, size_t w3c_labels[2])
{
	const struct sp_string *v[4] = {};
	static const char *const keys[4] = {OTLP_LABEL_TRACE_ID, OTLP_LABEL_SPAN_ID,
					    OTLP_LABEL_DD_ROOT_SPAN, OTLP_LABEL_DD_SPAN_ID};
	size_t at[4] = {}, i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 4; k++)
			if (!v[k] && sp_string__is(symprof__str(sp, labels[i].key), keys[k])) {
				v[k] = symprof__str(sp, labels[i].value);
				at[k] = i;
			}
	memset(link, 0, sizeof(*link));
	if (v[0] && v[1] && value_hex(v[0], link->trace_id, sizeof(link->trace_id)) &&
	    value_hex(v[1], link->span_id, sizeof(link->span_id))) {
		w3c_labels[0] = at[0];
		w3c_labels[1] = at[1];
		return OTLP_LINK_W3C;
	}
	memset(link, 0, sizeof(*link));
	if (v[2] && v[3] && value_decimal(v[2], link->trace_id + 8) &&
	    value_decimal(v[3], link->span_id))
		return OTLP_LINK_DATADOG;
	memset(link, 0, sizeof(*link));
	return OTLP_LINK_NONE;
}
