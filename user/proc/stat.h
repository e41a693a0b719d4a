/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* /proc/PID/stat, the one-line status of a process. */
#ifndef LABELPROF_PROC_STAT_H
#define LABELPROF_PROC_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Reads /proc/PID/stat (pid 0: /proc/self/stat) into buf and returns its
 * fields from the third (the state) on, past the command name, which may
 * hold spaces and ')'. NULL with errno set when it cannot be read (ENOENT or
 * ESRCH: no such process).
 */
const char *proc_stat_fields(pid_t pid, char *buf, size_t size);

/*
 * The process pid belongs to (pid itself for a process, not one of its
 * threads), from /proc/PID/status. -ESRCH when it does not run (gone, or a
 * zombie), other -errno when the status cannot be read.
 */
pid_t proc_tgid(pid_t pid);

/*
 * Whether pid is a kernel thread (PF_KTHREAD): no user memory, so no user
 * stack and no labels, only kernel stacks. False when it cannot be read.
 */
bool proc_is_kernel_thread(pid_t pid);

#endif /* LABELPROF_PROC_STAT_H */
