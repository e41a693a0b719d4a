/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading another process's memory. */
#ifndef LABELPROF_PROC_MEM_H
#define LABELPROF_PROC_MEM_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* Reads size bytes of pid's memory at addr: 0, or -errno (-EFAULT: not all of it). */
int proc_mem__read(pid_t pid, __u64 addr, void *buf, size_t size);

#endif /* LABELPROF_PROC_MEM_H */
