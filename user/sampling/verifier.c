// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "sampling/verifier.h"

/* BPF_LOG_STATS: the verifier's totals alone, a few lines per program */
#define LOG_STATS 4
#define LOG_SIZE  4096

struct verifier_log {
	struct bpf_object *obj;
	size_t count;
	char (*logs)[LOG_SIZE]; /* one per program of obj, in its order */
};

struct verifier_log *verifier_log__arm(struct bpf_object *obj)
{
	struct verifier_log *vl = calloc(1, sizeof(*vl));
	struct bpf_program *p;
	size_t i = 0;

	if (!vl)
		return NULL;
	vl->obj = obj;
	bpf_object__for_each_program(p, obj) vl->count++;
	vl->logs = calloc(vl->count ? vl->count : 1, LOG_SIZE);
	if (!vl->logs) {
		free(vl);
		return NULL;
	}
	bpf_object__for_each_program(p, obj)
	{
		if (bpf_program__set_log_level(p, LOG_STATS) ||
		    bpf_program__set_log_buf(p, vl->logs[i], LOG_SIZE)) {
			verifier_log__free(vl);
			return NULL;
		}
		i++;
	}
	return vl;
}

/* The number after key in log, or false. */
static bool log_figure(const char *log, const char *key, unsigned long long *v)
{
	const char *at = strstr(log, key);

	if (!at)
		return false;
	*v = strtoull(at + strlen(key), NULL, 10);
	return true;
}

unsigned long long verifier_log__print(const struct verifier_log *vl, FILE *f)
{
	unsigned long long usec, insns, total = 0;
	struct bpf_program *p;
	size_t i = 0;
	const char *sep = "";

	if (!vl)
		return 0;
	fprintf(f, "labelprof: the kernel verified ");
	bpf_object__for_each_program(p, vl->obj)
	{
		const char *log = vl->logs[i++];

		if (!bpf_program__autoload(p) || !log_figure(log, "verification time ", &usec))
			continue;
		if (!log_figure(log, "processed ", &insns))
			insns = 0;
		fprintf(f, "%s%s in %.1f ms (%llu instructions)", sep, bpf_program__name(p),
			usec / 1e3, insns);
		sep = ", ";
		total += usec;
	}
	fprintf(f, "%s%.1f ms in all\n", *sep ? "; " : "nothing: ", total / 1e3);
	return total;
}

void verifier_log__free(struct verifier_log *vl)
{
	if (!vl)
		return;
	free(vl->logs);
	free(vl);
}
