// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container ids and pod uids from /proc/PID/cgroup texts as runtimes lay them out. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/container.h"

#define ID   "3f1c2b9a8d7e6f5041322314a5b6c7d8e9f00112233445566778899aabbccdde"
#define ID2  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID  "8f1d2c3b-4a5e-6f70-8192-a3b4c5d6e7f8"
#define UID_ "8f1d2c3b_4a5e_6f70_8192_a3b4c5d6e7f8"

static void expect(const char *text, int ret, const char *id, const char *pod_uid)
{
	struct container_info ci;

	assert_int_equal(container__parse_cgroup(text, strlen(text), &ci), ret);
	assert_string_equal(ci.id, id);
	assert_string_equal(ci.pod_uid, pod_uid);
}

static void test_docker(void **state)
{
	/* cgroupfs driver, cgroup v1 only */
	expect("12:pids:/docker/" ID "\n11:memory:/docker/" ID "\n0::/\n", 0, ID, "");
	/* systemd driver, cgroup v2 */
	expect("0::/system.slice/docker-" ID ".scope\n", 0, ID, "");
	/* a process of the container's own init scope */
	expect("0::/system.slice/docker-" ID ".scope/init.scope\n", 0, ID, "");
}

static void test_runtimes(void **state)
{
	expect("0::/system.slice/crio-" ID ".scope\n", 0, ID, "");
	expect("0::/machine.slice/libpod-" ID ".scope/container\n", 0, ID, "");
	expect("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope\n",
	       0, ID, "");
	/* conmon is not the container */
	expect("0::/machine.slice/libpod-conmon-" ID ".scope\n", -ENOENT, "", "");
}

static void test_kubernetes_systemd(void **state)
{
	expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	       ".slice/cri-containerd-" ID ".scope\n",
	       0, ID, UID);
	expect("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	       ".slice/crio-" ID ".scope\n",
	       0, ID, UID);
	/* guaranteed QoS: no QoS level in the name */
	expect("0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope\n", 0, ID,
	       UID);
	/* the pod's sandbox-level cgroup: a pod, no container */
	expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice\n",
	       0, "", UID);
	/* cgroup v1 with containerd's systemd driver: SLICE:RUNTIME:ID */
	expect("4:memory:/kubepods-burstable-pod" UID_ ".slice:cri-containerd:" ID "\n", 0, ID,
	       UID);
}

static void test_kubernetes_cgroupfs(void **state)
{
	expect("0::/kubepods/burstable/pod" UID "/" ID "\n", 0, ID, UID);
	expect("0::/kubepods/pod" UID "/" ID "\n", 0, ID, UID);
	expect("11:cpu,cpuacct:/kubepods/besteffort/pod" UID "/" ID "\n", 0, ID, UID);
	/* a static pod's uid is the 32-digit hash of its manifest */
	expect("0::/kubepods/burstable/pod0123456789abcdef0123456789abcdef/" ID "\n", 0, ID,
	       "0123456789abcdef0123456789abcdef");
}

static void test_nested_deepest_wins(void **state)
{
	/* docker in docker */
	expect("0::/docker/" ID "/docker/" ID2 "\n", 0, ID2, "");
	expect("0::/system.slice/docker-" ID ".scope/docker/" ID2 "\n", 0, ID2, "");
}

static void test_v2_preferred(void **state)
{
	expect("4:memory:/docker/" ID2 "\n0::/system.slice/docker-" ID ".scope\n", 0, ID, "");
	/* v2 line without a container: the v1 one is used */
	expect("0::/\n4:memory:/docker/" ID2 "\n", 0, ID2, "");
}

static void test_no_container(void **state)
{
	expect("0::/\n", -ENOENT, "", "");
	expect("0::/user.slice/user-1000.slice/session-3.scope\n", -ENOENT, "", "");
	expect("0::/system.slice/containerd.service\n", -ENOENT, "", "");
	/* a 32-digit hex name outside kubepods is not a pod (seen on hosting platforms) */
	expect("4:memory:/process_api/b0dbdfcb3c2be444e3d510f7aaaac5eb\n0::/\n", -ENOENT, "", "");
	expect("", -ENOENT, "", "");
}

static void test_malformed(void **state)
{
	/* ids of the wrong length or alphabet */
	expect("0::/system.slice/docker-" ID "0.scope\n", -ENOENT, "", "");
	expect("0::/system.slice/docker-"
	       "zz" ID2 ".scope\n",
	       -ENOENT, "", "");
	expect("0::/docker/"
	       "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
	       -ENOENT, "", "");
	/* a bare id outside /docker/ or a pod is not trusted */
	expect("0::/somewhere/" ID "\n", -ENOENT, "", "");
	/* bad uids */
	expect("0::/kubepods/burstable/podnot-a-uid/" ID "\n", 0, ID, "");
	expect("0::/kubepods.slice/kubepods-pod" UID_ "x.slice\n", -ENOENT, "", "");
	/* lines without the two colons, no trailing newline, an uppercase id */
	expect("garbage\n0::/docker/"
	       "3F1C2B9A8D7E6F5041322314A5B6C7D8E9F00112233445566778899AABBCCDDE",
	       0, ID, "");
}

static void test_not_nul_terminated(void **state)
{
	char text[] = "0::/docker/" ID "XXXX";
	struct container_info ci;

	/* len stops before the XXXX */
	assert_int_equal(container__parse_cgroup(text, strlen(text) - 4, &ci), 0);
	assert_string_equal(ci.id, ID);
}

static void test_read_self(void **state)
{
	struct container_info ci;
	int r = container__read(getpid(), &ci);

	/* whatever this machine is, the call works and the strings are terminated */
	assert_true(r == 0 || r == -ENOENT);
	assert_true(strlen(ci.id) == 0 || strlen(ci.id) == CONTAINER_ID_LEN);
	assert_int_equal(container__read(0x7fffffff, &ci), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docker),
		cmocka_unit_test(test_runtimes),
		cmocka_unit_test(test_kubernetes_systemd),
		cmocka_unit_test(test_kubernetes_cgroupfs),
		cmocka_unit_test(test_nested_deepest_wins),
		cmocka_unit_test(test_v2_preferred),
		cmocka_unit_test(test_no_container),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_read_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
