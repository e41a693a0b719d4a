// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The label library an ELF file links (linked.h). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "lib/elf.h"
#include "proc/linked.h"
#include "proc/tls.h"

/*
 * Where the dynamic loader looks for a DT_NEEDED library besides DT_RPATH,
 * DT_RUNPATH and LD_LIBRARY_PATH (ld.so.cache aside): the multiarch and
 * plain system directories.
 */
static const char *const system_lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

/* The first of the colon-separated dirs ($ORIGIN: origin) holding name, into out. */
static bool find_in_dirs(const char *dirs, const char *origin, const char *name, char *out,
			 size_t len)
{
	const char *dir, *end;
	size_t n;

	for (dir = dirs; dir && *dir; dir = *end ? end + 1 : end) {
		end = strchrnul(dir, ':');
		n = end - dir;
		if (n >= 7 && !strncmp(dir, "$ORIGIN", 7))
			snprintf(out, len, "%s%.*s/%s", origin, (int)(n - 7), dir + 7, name);
		else if ((size_t)snprintf(out, len, "%.*s/%s", (int)n, dir, name) >= len)
			continue;
		if (!access(out, R_OK))
			return true;
	}
	return false;
}

int linked__label_library(const char *path, struct linked_library *lib)
{
	char origin[PATH_MAX], real[PATH_MAX], err[256];
	const char *needed[64], *rpath = NULL, *runpath = NULL, *name;
	struct tls_file_info info;
	struct elf_file *ef;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Dyn dyn;
	Elf_Data *data;
	size_t i, k, n = 0;
	int ret = -ENOENT;
	bool found;

	ef = elf_file__open(path, err, sizeof(err));
	if (!ef)
		return -ENOENT;
	snprintf(origin, sizeof(origin), "%s", realpath(path, real) ? dirname(real) : ".");
	while ((scn = elf_nextscn(elf_file__elf(ef), scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; gelf_getdyn(data, i, &dyn) && dyn.d_tag != DT_NULL; i++) {
			name = elf_strptr(elf_file__elf(ef), shdr.sh_link, dyn.d_un.d_val);
			if (!name)
				continue;
			if (dyn.d_tag == DT_NEEDED && n < ARRAY_SIZE(needed))
				needed[n++] = name;
			else if (dyn.d_tag == DT_RPATH)
				rpath = name;
			else if (dyn.d_tag == DT_RUNPATH)
				runpath = name;
		}
	}
	for (k = 0; k < n && ret; k++) {
		name = needed[k];
		if (strchr(name, '/')) {
			snprintf(lib->path, sizeof(lib->path), "%s", name);
			found = !access(lib->path, R_OK);
		} else {
			/* ld.so's order: DT_RPATH (unless DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH */
			found = (!runpath && find_in_dirs(rpath, origin, name, lib->path,
							  sizeof(lib->path))) ||
				find_in_dirs(getenv("LD_LIBRARY_PATH"), origin, name, lib->path,
					     sizeof(lib->path)) ||
				find_in_dirs(runpath, origin, name, lib->path, sizeof(lib->path));
		}
		for (i = 0; !found && i < ARRAY_SIZE(system_lib_dirs); i++)
			found = find_in_dirs(system_lib_dirs[i], origin, name, lib->path,
					     sizeof(lib->path));
		if (!found || tls__inspect_file(lib->path, &info, NULL, 0) ||
		    info.form == LP_FORM_NONE)
			continue;
		if (realpath(lib->path, real))
			snprintf(lib->path, sizeof(lib->path), "%s", real);
		snprintf(lib->needed, sizeof(lib->needed), "%s", name);
		lib->form = info.form;
		ret = 0;
	}
	elf_file__close(ef);
	return ret;
}
