/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every runtime module (runtime/<name>/module.c) keeps for a session:
 * the symbolizer its frames are named through, whether to say what it
 * finds, how to read its BPF walker's counters; and how they look for
 * their runtime's files.
 */
#ifndef LABELPROF_RUNTIME_MODULE_H
#define LABELPROF_RUNTIME_MODULE_H

#include <stdbool.h>
#include <stddef.h>

struct registry_env;
struct symbolizer;

struct runtime_module {
	const struct registry_env *env;
	struct symbolizer *sym;
	bool verbose;
};

/*
 * proc_module.open: -ENODEV without a symbolizer (no frame could be named),
 * unless the registry only describes processes.
 */
int runtime_module__open(const struct registry_env *env, void **mod);
/* proc_module.close */
void runtime_module__close(void *mod);
/* The walker's counters of BPF map map (size bytes): 0, -ENODEV without BPF, -errno. */
int runtime_module__bpf_counters(const struct runtime_module *m, const char *map, void *out,
				 size_t size);

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
