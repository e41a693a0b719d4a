// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Folding and hiding labels in the text views (labelfold.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "format/labelfold.h"
#include "profile/labelsel.h"
#include "profile/symprof.h"

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

/* Distinct (key, value) pairs of the label sets the samples use, sorted: key << 32 | value. */
static __u64 *used_pairs(const struct symprof *sp, size_t *n)
{
	unsigned char *used = calloc(sp->label_set_count ? sp->label_set_count : 1, 1);
	__u64 *pairs = NULL;
	size_t i, j, count = 0, out;

	if (!used)
		return NULL;
	for (i = 0; i < sp->sample_count; i++)
		if (sp->samples[i].label_set < sp->label_set_count)
			used[sp->samples[i].label_set] = 1;
	for (i = 1; i < sp->label_set_count; i++)
		count += used[i] ? sp->label_sets[i].count : 0;
	pairs = malloc((count ? count : 1) * sizeof(*pairs));
	if (!pairs)
		goto out;
	for (i = 1, count = 0; i < sp->label_set_count; i++) {
		const struct sp_range *r = &sp->label_sets[i];

		for (j = 0; used[i] && j < r->count; j++)
			pairs[count++] = (__u64)sp->labels[r->first + j].key << 32 |
					 sp->labels[r->first + j].value;
	}
	qsort(pairs, count, sizeof(*pairs), cmp_u64);
	for (i = 0, out = 0; i < count; i++)
		if (!out || pairs[out - 1] != pairs[i])
			pairs[out++] = pairs[i];
	*n = out;
out:
	free(used);
	return pairs;
}

static int cmp_folded(const void *a, const void *b, void *sp)
{
	const struct sp_string *x = symprof__str(sp, ((const struct labelfold_key *)a)->key);
	const struct sp_string *y = symprof__str(sp, ((const struct labelfold_key *)b)->key);

	return symprof__bytes_cmp(x->bytes, x->len, y->bytes, y->len);
}

int labelfold__init(struct labelfold *lf, const struct symprof *sp, unsigned int max_values)
{
	size_t n = 0, i, first;
	__u64 *pairs = used_pairs(sp, &n);

	memset(lf, 0, sizeof(*lf));
	lf->max_values = max_values;
	if (!pairs)
		return -ENOMEM;
	lf->nshown = sp->string_count;
	lf->shown = calloc(lf->nshown ? lf->nshown : 1, 1);
	lf->folded = calloc(n ? n : 1, sizeof(*lf->folded));
	if (!lf->shown || !lf->folded) {
		free(pairs);
		labelfold__free(lf);
		return -ENOMEM;
	}
	for (first = 0; first < n; first = i) {
		__u32 key = pairs[first] >> 32;
		const struct sp_string *k = symprof__str(sp, key);

		for (i = first + 1; i < n && pairs[i] >> 32 == key; i++)
			;
		if (key >= lf->nshown)
			continue;
		if (labelsel__is_trace_key(k->bytes, k->len)) {
			lf->shown[key] = LABEL_HIDDEN;
		} else if (max_values && i - first > max_values) {
			lf->shown[key] = LABEL_FOLDED;
			lf->folded[lf->nfolded++] = (struct labelfold_key){key, i - first};
		}
	}
	free(pairs);
	/* the order of keys in every view */
	qsort_r(lf->folded, lf->nfolded, sizeof(*lf->folded), cmp_folded, (void *)sp);
	return 0;
}

void labelfold__free(struct labelfold *lf)
{
	free(lf->shown);
	free(lf->folded);
	memset(lf, 0, sizeof(*lf));
}

void labelfold__describe(const struct labelfold *lf, const struct symprof *sp, FILE *f,
			 const char *prefix)
{
	size_t i;

	for (i = 0; i < lf->nfolded; i++) {
		const struct sp_string *k = symprof__str(sp, lf->folded[i].key);

		fputs(prefix, f);
		fmt__text_bytes(f, k->bytes, k->len, NULL, SIZE_MAX);
		fprintf(f, " has %u values, shown as ", lf->folded[i].values);
		fmt__text_bytes(f, k->bytes, k->len, NULL, SIZE_MAX);
		fprintf(f, "=" LABELFOLD_VALUE " (--max-label-values %u)\n", lf->max_values);
	}
}
