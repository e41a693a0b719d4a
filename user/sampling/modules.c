// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The modules of every session (and of inspect and labels, probe.c), in the
 * order they see a process: the label sources in their order of precedence
 * (which the profile applies, docs/design.md section 1), the runtimes
 * (runtime/<name>/module.c), then the unwind tables and the symbolizer. A
 * new source or runtime is one more line here (docs/design.md section 2).
 */
#include <stddef.h>

#include "registry/module.h"
#include "sampling/modules.h"

extern const struct proc_module custom_labels_module;
extern const struct proc_module otel_thread_module;
extern const struct proc_module go_labels_module;
extern const struct proc_module otel_process_module;
extern const struct proc_module python_module;
extern const struct proc_module hotspot_module;
extern const struct proc_module node_module;
extern const struct proc_module unwind_module;
extern const struct proc_module symbols_module;

const struct proc_module *const session_modules[] = {
	&custom_labels_module,
	&otel_thread_module,
	&go_labels_module,
	&otel_process_module,
	&python_module,
	&hotspot_module,
	&node_module,
	&unwind_module,
	&symbols_module,
	NULL,
};
