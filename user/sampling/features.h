/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What this kernel offers labelprof, checked for real: BPF map types and
 * helpers by libbpf's probes, BTF attach points by name, and finally the
 * sampler itself loaded and attached, and the label reader run once.
 */
#ifndef LABELPROF_FEATURES_H
#define LABELPROF_FEATURES_H

#include <stdbool.h>

enum feature_need {
	FEATURE_REQUIRED, /* labelprof cannot sample without it */
	FEATURE_OPTIONAL, /* a part of labelprof works less well without it */
	FEATURE_UNUSED,	  /* reported because users ask about it; never used */
};

enum feature_state {
	FEATURE_YES,
	FEATURE_NO,
	FEATURE_UNCHECKED, /* a check needs privileges or a feature that is missing */
};

struct feature {
	const char *name;    /* stable, for JSON: "btf", "ringbuf", ... */
	const char *title;   /* for people, with the kernel version that brought it */
	const char *used_by; /* what needs it */
	enum feature_need need;
	enum feature_state state;
	char detail[256]; /* why not, or what was seen; "" when nothing to add */
};

#define FEATURES_MAX 16

struct features {
	char release[65]; /* uname -r */
	char machine[65]; /* uname -m */
	struct feature list[FEATURES_MAX];
	unsigned int count;
	bool ready; /* every required feature is there */
};

/* Checks everything; verbose: libbpf's own messages. */
void features__probe(struct features *f, bool verbose);

const char *features__state_name(enum feature_state s);
const char *features__need_name(enum feature_need n);

#endif /* LABELPROF_FEATURES_H */
