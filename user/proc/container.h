/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which container and Kubernetes pod a process runs in, from its cgroup path
 * (/proc/PID/cgroup). Recognized layouts, the deepest match winning (nested
 * containers):
 *   docker (cgroupfs)            /docker/<64 hex>
 *   docker (systemd)             .../docker-<64 hex>.scope
 *   containerd (systemd)         .../cri-containerd-<64 hex>.scope
 *   containerd (cgroup v1 CRI)   ...:cri-containerd:<64 hex>
 *   cri-o                        .../crio-<64 hex>.scope
 *   podman                       .../libpod-<64 hex>.scope
 *   kubelet (cgroupfs)           /kubepods[/burstable|/besteffort]/pod<uid>/<64 hex>
 * and the pod uid from kubepods[-burstable|-besteffort]-pod<uid, '_' for '-'>.slice
 * or the cgroupfs pod<uid> directory. A pod uid is a UUID or, for static
 * pods, a 32-digit hex hash.
 */
#ifndef LABELPROF_CONTAINER_H
#define LABELPROF_CONTAINER_H

#include <stddef.h>
#include <sys/types.h>

#define CONTAINER_ID_LEN 64
#define POD_UID_MAX_LEN	 36

struct container_info {
	char id[CONTAINER_ID_LEN + 1];	   /* lowercase hex; "" when none */
	char pod_uid[POD_UID_MAX_LEN + 1]; /* "" when none */
};

/*
 * Parses the text of a /proc/PID/cgroup file (len bytes, need not be
 * NUL-terminated): the cgroup v2 line "0::PATH" is preferred, cgroup v1 lines
 * are used when no v2 line names a container. Fills *out (cleared first);
 * returns 0 if a container id or a pod uid was found, else -ENOENT.
 */
int container__parse_cgroup(const char *text, size_t len, struct container_info *out);

/* The same for process pid: 0, -ENOENT (not in a container) or -errno (unreadable). */
int container__read(pid_t pid, struct container_info *out);

#endif /* LABELPROF_CONTAINER_H */
