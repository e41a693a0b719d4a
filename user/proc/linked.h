/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The label library an ELF file links: labels are often published by a
 * library a program links (DT_NEEDED), not by the program's own file.
 */
#ifndef LABELPROF_PROC_LINKED_H
#define LABELPROF_PROC_LINKED_H

#include <limits.h>
#include <linux/types.h>

/* A label library a file links: what DT_NEEDED names, where it was found. */
struct linked_library {
	char needed[NAME_MAX + 1];
	char path[PATH_MAX];
	__u32 form; /* enum lp_label_form */
};

/*
 * Of the libraries path links (DT_NEEDED), the first that publishes labels,
 * found as the dynamic loader would (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH,
 * the system directories; not ld.so.cache). Returns 0 or -ENOENT.
 */
int linked__label_library(const char *path, struct linked_library *lib);

#endif /* LABELPROF_PROC_LINKED_H */
