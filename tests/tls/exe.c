// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A labelled process for the TLS tests. It prints, one "key=value" per line:
 *   tp, addr      main thread: thread pointer and its label object's address
 *   tp1, addr1    a second thread that touched its label object
 *   tp2           a third thread that never touched it (dynamic TLS stays unallocated)
 *   ready
 * and then waits until stdin is closed. The label object is the executable's
 * own (built with LABELS_FORM), the startup library's (FX_LINKED) or, when
 * argv[1] names one, a dlopen'd library's; with both, the library's is printed.
 * With FX_NO_THREADS the main thread stands in for the other two (qemu-user
 * 7.2 hangs in pthread_create of dynamically linked aarch64 programs).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef FX_STATIC
#include <dlfcn.h>
#endif

#ifdef LABELS_FORM
#include "labels.h"
#endif

#ifndef ARCH_GET_FS
#define ARCH_GET_FS 0x1003
#endif

#ifdef FX_LINKED
void *fx_lib_labels_addr(void);
#endif

static void *(*lib_labels_addr)(void);
static pthread_barrier_t barrier;
static uintptr_t thread_tp[2];
static void *thread_addr;

static uintptr_t thread_pointer(void)
{
#if defined(__x86_64__)
	unsigned long fs = 0;

	/* The kernel's fsbase, which is what the profiler reads. */
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs))
		abort();
	return fs;
#elif defined(__aarch64__)
	uintptr_t tp;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
	return tp;
#else
#error "unsupported architecture"
#endif
}

static void *labels_addr(void)
{
	if (lib_labels_addr)
		return lib_labels_addr();
#if defined(FX_LINKED)
	return fx_lib_labels_addr();
#elif defined(LABELS_FORM)
	return fx_labels_addr();
#else
	return NULL;
#endif
}

static void *thread_main(void *arg)
{
	int idx = (int)(intptr_t)arg;

	thread_tp[idx] = thread_pointer();
	if (idx == 0)
		thread_addr = labels_addr();
	pthread_barrier_wait(&barrier);
	/* Stay alive (blocked) until the process exits. */
	for (;;)
		pause();
	return NULL;
}

static int start_threads(void *addr)
{
#ifdef FX_NO_THREADS
	thread_tp[0] = thread_tp[1] = thread_pointer();
	thread_addr = addr;
#else
	pthread_t threads[2];
	int i;

	pthread_barrier_init(&barrier, NULL, 3);
	for (i = 0; i < 2; i++) {
		if (pthread_create(&threads[i], NULL, thread_main, (void *)(intptr_t)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return -1;
		}
	}
	pthread_barrier_wait(&barrier);
#endif
	return 0;
}

int main(int argc, char **argv)
{
	char buf[64];
	void *addr;

	if (argc > 1) {
#ifdef FX_STATIC
		fprintf(stderr, "static fixture: cannot dlopen %s\n", argv[1]);
		return 2;
#else
		void *handle = dlopen(argv[1], RTLD_NOW);

		if (!handle) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 2;
		}
		*(void **)&lib_labels_addr = dlsym(handle, "fx_lib_labels_addr");
		if (!lib_labels_addr) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			return 2;
		}
#endif
	}
	addr = labels_addr();
	if (start_threads(addr))
		return 2;
	printf("tp=%#lx\naddr=%#lx\n", (unsigned long)thread_pointer(), (unsigned long)addr);
	printf("tp1=%#lx\naddr1=%#lx\n", (unsigned long)thread_tp[0], (unsigned long)thread_addr);
	printf("tp2=%#lx\nready\n", (unsigned long)thread_tp[1]);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
