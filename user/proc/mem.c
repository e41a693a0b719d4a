// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>

#include "proc/mem.h"

int proc_mem__read(pid_t pid, __u64 addr, void *buf, size_t size)
{
	struct iovec local = {buf, size}, remote = {(void *)(uintptr_t)addr, size};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == size ? 0 : -EFAULT;
}
