/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the agent's settings (config.c: the keys, the file, the flags) and
 * their values' parsers (config_value.c) share. Included by those only.
 */
#ifndef LABELPROF_AGENT_CONFIG_INT_H
#define LABELPROF_AGENT_CONFIG_INT_H

#include <stddef.h>
#include <linux/types.h>

#include "agent/config.h"

enum key_type {
	T_UINT,	    /* unsigned int in [min, max] */
	T_BYTES,    /* __u64 in [min, max], with a K/M/G/T suffix */
	T_SIZE,	    /* size_t, likewise */
	T_DURATION, /* __u64 nanoseconds in [min, max] */
	T_BOOL,
	T_PATH,	   /* const char *; empty: unset */
	T_FORMATS, /* pprof, otlp, or both */
	T_LABELS,  /* output__extra_labels_by_names */
	T_ENDPOINT,
	T_HEADERS,
	T_LISTEN,
	T_CGROUP, /* sampling filter */
	/* label keys to keep (patterns), or a boolean: whether to read labels at all */
	T_KEEP_LABELS,
	T_DROP_LABELS, /* label keys to leave out (patterns) */
	T_UNWIND,      /* enum lp_unwind_mode by name */
};

struct key_def {
	const char *name;
	enum key_type type;
	size_t offset;
	__u64 min, max;
	/* argp: the flag's argument name, NULL for keys set through sampling_argp */
	const char *arg;
	const char *doc;
};

#define MS  1000000ull
#define S   1000000000ull
#define DAY (86400 * S)

#define FIELD(c, k, type) ((type *)((char *)(c) + (k)->offset))

/* A copy of len bytes of s the configuration owns; NULL on allocation failure. */
char *agent_config__own(struct agent_config *c, const char *s, size_t len);
/* Sets key k from v; 0, or -errno with what is wrong in err. */
int agent_config__set_key(struct agent_config *c, const struct key_def *k, const char *v, char *err,
			  size_t err_len);

#endif /* LABELPROF_AGENT_CONFIG_INT_H */
