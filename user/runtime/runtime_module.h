/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every runtime module (Python, HotSpot, Node.js) keeps for a session:
 * the symbolizer its frames are named through, and whether to say what it
 * finds; and how they look for their runtime's files.
 */
#ifndef LABELPROF_RUNTIME_MODULE_H
#define LABELPROF_RUNTIME_MODULE_H

#include <stdbool.h>

struct registry_env;
struct symbolizer;

struct runtime_module {
	struct symbolizer *sym;
	bool verbose;
};

/* proc_module.open: -ENODEV without a symbolizer (no frame could be named). */
int runtime_module__open(const struct registry_env *env, void **mod);
/* proc_module.close */
void runtime_module__close(void *mod);

struct elf_file;
struct maps;
struct maps_entry;

/*
 * fn on the ELF file behind each file mapping of pid that want accepts, a
 * file once (at its first mapping; first: no file was accepted before it, as
 * for the executable), until fn returns other than -ENOENT. Returns that, or
 * -ENOENT. Files that cannot be opened or are not ELF are passed over.
 */
int runtime__each_elf(int pid, const struct maps *maps,
		      bool (*want)(const struct maps_entry *e, bool first),
		      int (*fn)(struct elf_file *ef, const struct maps_entry *e, void *ctx),
		      void *ctx);

#endif /* LABELPROF_RUNTIME_MODULE_H */
