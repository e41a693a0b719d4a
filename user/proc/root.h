/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening a process's files as the process sees them. Paths are resolved
 * inside its root (/proc/PID/root), so a container cannot point us at files of
 * the host with an absolute symlink. Every file is opened read-only,
 * O_NONBLOCK (a FIFO planted at the path cannot block us), and must be a
 * regular file.
 */
#ifndef LABELPROF_ROOT_H
#define LABELPROF_ROOT_H

#include <stdbool.h>
#include <sys/stat.h>

#include "proc/maps.h"

/*
 * Opens path as process pid sees it (pid 0: as we see it). Returns the
 * descriptor, with its stat in *st, or -errno (-EINVAL: not a regular file).
 */
int proc_root__open(int pid, const char *path, struct stat *st);

/*
 * Opens the file behind mapping e of pid: its path in the process's root if
 * that is still the mapped inode, else /proc/PID/map_files (the mapped file
 * itself, even deleted; needs privileges), else the path anyway (overlay and
 * btrfs report other device numbers in maps than stat does: callers that
 * must have the mapped file compare st_ino). Returns the descriptor, with its
 * stat in *st, or -errno.
 */
int proc_root__open_mapped(int pid, const struct maps_entry *e, struct stat *st);

/* st is the file mapping e maps: the same device and inode. */
bool proc_root__same_file(const struct stat *st, const struct maps_entry *e);

#endif /* LABELPROF_ROOT_H */
