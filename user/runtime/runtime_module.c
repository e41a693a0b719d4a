// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/elf.h"
#include "proc/maps.h"
#include "proc/root.h"
#include "registry/module.h"
#include "runtime/runtime_module.h"

int runtime_module__open(const struct registry_env *env, void **mod)
{
	struct runtime_module *m;

	if (!env->symbolizer && !env->describe_only)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->env = env;
	m->sym = env->symbolizer;
	m->verbose = env->verbose;
	*mod = m;
	return 0;
}

void runtime_module__close(void *mod)
{
	free(mod);
}

int runtime_module__bpf_counters(const struct runtime_module *m, const char *map, void *out,
				 size_t size)
{
	if (!m->env->bpf_counters)
		return -ENODEV;
	return m->env->bpf_counters(m->env->bpf_ctx, map, out, size);
}

int runtime__each_elf(int pid, const struct maps *maps,
		      bool (*want)(const struct maps_entry *e, bool first),
		      int (*fn)(struct elf_file *ef, const struct maps_entry *e, void *ctx),
		      void *ctx)
{
	const struct maps_entry *e, *prev = NULL;
	struct elf_file *ef;
	int ret = -ENOENT, fd;
	struct stat st;
	size_t i;

	for (i = 0; maps && i < maps__count(maps) && ret == -ENOENT; i++) {
		e = maps__entry(maps, i);
		if (e->kind != MAPS_FILE || !want(e, !prev))
			continue;
		/* the file's other mappings follow its first */
		if (prev && prev->inode == e->inode && prev->dev_major == e->dev_major &&
		    prev->dev_minor == e->dev_minor)
			continue;
		prev = e;
		fd = proc_root__open_mapped(pid, e, &st);
		if (fd < 0)
			continue;
		ef = elf_file__open_fd(fd, e->path, NULL, 0);
		if (ef) {
			ret = fn(ef, e, ctx);
			elf_file__close(ef);
		}
		close(fd);
	}
	return ret;
}
