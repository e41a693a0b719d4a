/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the OTLP profiles writer (output_otlp.c) and reader (input_otlp.c)
 * share (otlp.c): short names for the generated protobuf-c types, the attribute keys
 * (OpenTelemetry semantic conventions) and the rule that turns trace labels
 * into a Link, so that the reader undoes exactly what the writer did; and the
 * writer's printer of OTLP's JSON mapping (output_otlp_json.c).
 */
#ifndef LABELPROF_OTLP_H
#define LABELPROF_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

struct symprof;
struct sp_label;

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	otlp_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary otlp_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles otlp_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles otlp_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile otlp_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType otlp_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample otlp_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping otlp_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location otlp_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line otlp_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function otlp_function;
typedef Opentelemetry__Proto__Profiles__V1development__Stack otlp_stack;
typedef Opentelemetry__Proto__Profiles__V1development__Link otlp_link;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit otlp_attribute;
typedef Opentelemetry__Proto__Resource__V1__Resource otlp_resource;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope otlp_scope;
typedef Opentelemetry__Proto__Common__V1__KeyValue otlp_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue otlp_any_value;

#define OTLP_REQUEST_DESCRIPTOR                                                                    \
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor

#define OTLP_SCOPE_NAME "labelprof"

/* Resource attributes. */
#define OTLP_HOST_NAME	     "host.name"
#define OTLP_PROCESS_PID     "process.pid"
#define OTLP_EXECUTABLE_NAME "process.executable.name"
#define OTLP_EXECUTABLE_PATH "process.executable.path"
#define OTLP_CONTAINER_ID    "container.id"
#define OTLP_K8S_POD_UID     "k8s.pod.uid"
/* Sample attributes beside the labels (enum output_extra_labels). */
#define OTLP_THREAD_ID	 "thread.id"
#define OTLP_THREAD_NAME "thread.name"
/* Mapping and location attributes. */
#define OTLP_BUILD_ID	"process.executable.build_id.gnu"
#define OTLP_FRAME_TYPE "profile.frame.type"

#define OTLP_TRACE_ID_BYTES 16
#define OTLP_SPAN_ID_BYTES  8

/*
 * Trace labels. A label set that holds both W3C labels (lowercase hex, 32
 * and 16 digits, neither all zero) links to that span, and the two labels
 * are written only as the Link. Otherwise, both Datadog labels (decimal
 * 64-bit ids without leading zeros, neither zero) give a Link whose span_id
 * is span-id and whose trace_id is root-span-id in its low 64 bits: that is
 * not the trace's id, so the labels stay attributes too, and a reader that
 * derives the same Link from them adds nothing.
 */
#define OTLP_LABEL_TRACE_ID	"trace_id"
#define OTLP_LABEL_SPAN_ID	"span_id"
#define OTLP_LABEL_DD_SPAN_ID	"span-id"
#define OTLP_LABEL_DD_ROOT_SPAN "root-span-id"

enum otlp_link_source {
	OTLP_LINK_NONE,
	OTLP_LINK_W3C,	   /* from trace_id and span_id, which the Link replaces */
	OTLP_LINK_DATADOG, /* from span-id and root-span-id, which stay */
};

struct otlp_trace_link {
	unsigned char trace_id[OTLP_TRACE_ID_BYTES];
	unsigned char span_id[OTLP_SPAN_ID_BYTES];
};

/*
 * The Link that labels (n of them, strings of sp) carry, in *link; for
 * OTLP_LINK_W3C, *w3c_labels gets the indexes in labels of trace_id and span_id.
 */
enum otlp_link_source otlp__link_from_labels(const struct symprof *sp,
					     const struct sp_label *labels, size_t n,
					     struct otlp_trace_link *link, size_t w3c_labels[2]);

/* Prints m in OTLP's JSON mapping (output_otlp_json.c); -EINVAL for a field type OTLP never uses. */
int otlp_json__print(FILE *f, const ProtobufCMessage *m);

#endif /* LABELPROF_OTLP_H */
