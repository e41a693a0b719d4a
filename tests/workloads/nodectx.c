// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nodectx: an LD_PRELOAD library that publishes a Node.js test app's
 * OpenTelemetry process context (OTEP 4719) through libcustomlabels, as
 * its application would from native code: schema nodejs_v1_dev (the
 * Node.js thread context, @datadog/pprof's ThreadContext) and the key map
 * the app's records use. NODECTX_KEYS: the key map, comma-separated;
 * NODECTX_SERVICE: service.name. Linked so that it exports none of
 * libcustomlabels' own symbols: the process's thread context is Node's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "customlabels.h"

#define MAX_KEYS 16

__attribute__((constructor)) static void nodectx_publish(void)
{
	const char *keys_env = getenv("NODECTX_KEYS"), *service = getenv("NODECTX_SERVICE");
	struct custom_labels_otel_attr resource = {"service.name", service ? service : "node"};
	const char *keys[MAX_KEYS];
	char *copy, *tok, *save;
	size_t n = 0;
	int ret;

	if (!keys_env)
		return;
	copy = strdup(keys_env);
	if (!copy)
		abort();
	for (tok = strtok_r(copy, ",", &save); tok && n < MAX_KEYS;
	     tok = strtok_r(NULL, ",", &save))
		keys[n++] = tok;
	ret = custom_labels_otel_publish_schema("nodejs_v1_dev", &resource, 1, keys, n);
	if (ret) {
		fprintf(stderr, "nodectx: cannot publish the process context: %d\n", ret);
		abort();
	}
	/* copy stays: the key names are copied, but the process keeps them for its life */
}
