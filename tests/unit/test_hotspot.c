// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * HotSpot (runtime/hotspot_*.c): the compressed line number table, and a
 * JVM started here (Debian's OpenJDK 17) read from its memory: VMStructs,
 * its code cache and interpreter, the frame layout BPF walks by.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/maps.h"
#include "runtime/hotspot/hotspot.h"

#define JAVA "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"

static void test_line_table(void **state)
{
	/*
	 * (bci, line): (0, 10) escaped (line delta > 7), (4, 11) in one byte,
	 * (2, 15) escaped (bci back), (300, 16) escaped with a two-byte bci delta
	 */
	static const unsigned char t[] = {0xff, 0x00, 0x14, 0x21, 0xff, 0x03, 0x08,
					  0xff, 0xd4, 0x06, 0x02, 0x00, 0x21};
	static const int bci[] = {0, 1, 2, 3, 4, 299, 300, 500, -1};
	static const __u32 want[] = {10, 10, 15, 15, 11, 11, 16, 16, 0};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(hs_line_table__line(t, sizeof(t), bci[i]), want[i]);
	/* a table cut short names what it read */
	assert_int_equal(hs_line_table__line(t, 4, 300), 11);
}

static void test_jvm(void **state)
{
	static const char source[] = "public class Wait { public static void main(String[] a) "
				     "throws Exception { System.out.println(\"ready\"); "
				     "Thread.sleep(30000); } }\n";
	char dir[] = "/tmp/lp-hotspot-XXXXXX", path[64], err[160] = "", buf[16];
	const struct lp_java_ref *r;
	const struct maps_entry *file;
	struct maps *maps;
	struct hs_vm vm;
	int out[2], ret;
	__u32 i;
	FILE *f;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/Wait.java", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(source, f);
	fclose(f);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(out[1], 1);
		/* a source file runs as is (JEP 330): no javac here */
		execl(JAVA, JAVA, "-Xshare:auto", path, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	assert_true(read(out[0], buf, sizeof(buf)) > 0);
	close(out[0]);
	assert_int_equal(maps__read(pid, 0, &maps), 0);
	ret = hs_vm__find(pid, maps, &vm, &file, err, sizeof(err));
	if (ret)
		print_message("hs_vm__find: %d %s\n", ret, err);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(file->path, "libjvm.so"));
	print_message("HotSpot %s, %u entries, code cache 0x%llx-0x%llx, %u heaps\n", vm.release,
		      vm.entries, (unsigned long long)vm.ref.cc_low,
		      (unsigned long long)vm.ref.cc_high, vm.ref.heap_count);
	assert_int_equal(strncmp(vm.release, "17.", 3), 0);
	assert_true(vm.entries > 1000);
	r = &vm.ref;
	/* every heap and the interpreter inside the code cache, each in a mapping */
	assert_true(r->cc_low && r->cc_low < r->cc_high);
	assert_true(r->heap_count >= 1 && r->heap_count <= LP_JAVA_MAX_HEAPS);
	for (i = 0; i < r->heap_count; i++) {
		assert_true(r->heaps[i].low >= r->cc_low && r->heaps[i].high <= r->cc_high);
		assert_true(r->heaps[i].low < r->heaps[i].high);
		assert_non_null(maps__find(maps, r->heaps[i].segmap));
	}
	assert_true(r->interp_low >= r->cc_low && r->interp_high <= r->cc_high &&
		    r->interp_low < r->interp_high);
	assert_non_null(maps__find(maps, r->interp_low));
	/* CodeCacheSegmentSize: 64 or 128 by default */
	assert_true(r->log2_segment == 6 || r->log2_segment == 7);
	/* the layout of frame_x86.hpp: sender SP, last SP, method ... bcp */
	assert_int_equal(r->fp_sender_sp, -8);
	assert_int_equal(r->fp_method, -24);
	assert_int_equal(r->fp_bcp, -64);
	assert_int_equal(r->heap_block, 16);
	assert_true(r->nmethod_vtable);
	assert_non_null(maps__find(maps, r->nmethod_vtable));
	maps__free(maps);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_table),
		cmocka_unit_test(test_jvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
