// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer: this process's own functions, libc (whose local symbols live
 * in the separate debug file), PLT stubs, the vDSO, libraries built here with
 * .gnu_debuglink and then deleted, exited processes, hostile files, the
 * kernel, and the cache limits; DWARF lines and inlined frames (from the file,
 * a debug file found by .gnu_debuglink or by build id, corrupted DWARF, DWARF
 * closed to stay within the byte budget and opened again), JIT
 * code named by a perf map, and process identity. Expected values come from
 * independent sources: dladdr, nm, objdump, addr2line, /proc and
 * /proc/kallsyms.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "addr2line.h"
#include "kallsyms.h"
#include "own_snapshot.h"
#include "proc/maps.h"
#include "profile/profile.h"
#include "skip.h"
#include "symbolize/symbols.h"

/* Targets: global and not inlined, so that they have their own symbols. */
int lp_sym_target_a(int x);
int lp_sym_target_b(int x);

static const unsigned int target_a_line = __LINE__ + 1;
__attribute__((noinline)) int lp_sym_target_a(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + 1;
}

static const unsigned int target_b_line = __LINE__ + 1;
__attribute__((noinline)) int lp_sym_target_b(int x)
{
	__asm__ volatile("" : "+r"(x));
	return lp_sym_target_a(x) + 3;
}

/*
 * lp_asm_fn is a sized function with a local label inside; right after it
 * comes lp_asm_untyped, a local function without type or size, as hand-written
 * assembly often has. lp_asm_tail_call ends with a call (to a function that
 * would not return), so its return address is the first byte of lp_asm_next.
 */
__asm__(".text\n"
	".globl lp_asm_fn\n"
	".type lp_asm_fn, @function\n"
	"lp_asm_fn:\n"
	"	nop\n"
	"lp_asm_inner_label:\n"
	"	nop\n"
	"	ret\n"
	".size lp_asm_fn, . - lp_asm_fn\n"
	"lp_asm_untyped:\n"
	"	nop\n"
	"	nop\n"
	"	ret\n"
	".globl lp_asm_tail_call\n"
	".type lp_asm_tail_call, @function\n"
	"lp_asm_tail_call:\n"
	"	call lp_asm_fn\n"
	".size lp_asm_tail_call, . - lp_asm_tail_call\n"
	".globl lp_asm_next\n"
	".type lp_asm_next, @function\n"
	"lp_asm_next:\n"
	"	ret\n"
	".size lp_asm_next, . - lp_asm_next\n");
void lp_asm_fn(void);
void lp_asm_next(void);

/* The least time between two reads of a process's maps or perf map (symbols.c). */
#define REFRESH_MIN_NS (100ULL * 1000 * 1000)
/* How long a test waits for one at most. */
#define REFRESH_WAIT_NS (10ULL * 1000 * 1000 * 1000)

static char tmpdir[64];

/* The symbolizer's clock. */
static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/*
 * Calls check_ips with ip until the snapshot is read again (refreshes counts
 * it). Returns the time after the call that did it; *before (if not NULL)
 * is the time before it.
 */
static __u64 check_until_refreshed(struct symbolizer *sym, __u32 id, __u64 ip, __u64 *before)
{
	__u64 deadline = mono_ns() + REFRESH_WAIT_NS, refreshes, start, end;
	struct symbolizer_stats st;

	symbolizer__stats(sym, &st);
	refreshes = st.refreshes;
	do {
		assert_true(mono_ns() < deadline);
		usleep(1000);
		start = mono_ns();
		symbolizer__check_ips(sym, id, &ip, 1);
		end = mono_ns();
		symbolizer__stats(sym, &st);
	} while (st.refreshes == refreshes);
	assert_int_equal(st.refreshes, refreshes + 1);
	if (before)
		*before = start;
	return end;
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lp-test-symbols-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	run("rm -rf '%s'", tmpdir);
	return 0;
}

static __u64 load_base(const void *addr)
{
	Dl_info info;

	assert_true(dladdr(addr, &info));
	return (uintptr_t)info.dli_fbase;
}

static void test_own_functions(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	__u64 a = (uintptr_t)lp_sym_target_a, b = (uintptr_t)lp_sym_target_b;
	char exe[PATH_MAX];
	struct sym_frame f;
	__u32 id;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_not_equal(id, 0);
	assert_true(symbolizer__snapshot_current(sym, id));

	assert_int_equal(symbolizer__resolve_user(sym, id, a, 0, &f), 0);
	assert_string_equal(f.function, "lp_sym_target_a");
	assert_int_equal(f.offset, 0);
	assert_int_equal(f.address, a);
	assert_false(f.kernel);
	assert_string_equal(f.module, exe);
	/* A PIE: the ELF address is the runtime address minus the load base. */
	assert_int_equal(f.module_offset, a - load_base(lp_sym_target_a));
	assert_non_null(f.build_id);
	assert_int_equal(f.build_id_len, 20);

	assert_int_equal(symbolizer__resolve_user(sym, id, b + 5, 0, &f), 0);
	assert_string_equal(f.function, "lp_sym_target_b");
	assert_int_equal(f.offset, 5);

	/* A return address just past a function is attributed to the call that ends it. */
	assert_int_equal(
		symbolizer__resolve_user(sym, id, (uintptr_t)lp_asm_next, SYM_RETURN_ADDRESS, &f),
		0);
	assert_string_equal(f.function, "lp_asm_tail_call");
	assert_int_equal(f.offset, 5);
	assert_int_equal(f.address, (uintptr_t)lp_asm_next);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_asm_next, 0, &f), 0);
	assert_string_equal(f.function, "lp_asm_next");
	assert_int_equal(symbolizer__resolve_user(sym, id, a + 1, SYM_RETURN_ADDRESS, &f), 0);
	assert_string_equal(f.function, "lp_sym_target_a");
	assert_int_equal(f.offset, 1);

	/* A label inside a function does not split it; an untyped function is one. */
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_asm_fn + 1, 0, &f), 0);
	assert_string_equal(f.function, "lp_asm_fn");
	assert_int_equal(f.offset, 1);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_asm_fn + 4, 0, &f), 0);
	assert_string_equal(f.function, "lp_asm_untyped");
	assert_int_equal(f.offset, 1);

	/* Nothing is mapped at page 0, and 0 is no snapshot. */
	assert_int_equal(symbolizer__resolve_user(sym, id, 16, 0, &f), -ENOENT);
	assert_null(f.module);
	assert_null(f.function);
	assert_int_equal(symbolizer__resolve_user(sym, 0, a, 0, &f), -ENOENT);
	symbolizer__free(sym);
	symbolizer__free(NULL);
}

/* The first symbol nm lists at a given address, and every alias there must be accepted. */
static bool nm_has(const char *file, __u64 vaddr, const char *name)
{
	char cmd[2 * PATH_MAX], line[1024];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char type, sname[512];

		if (sscanf(line, "%llx %c %511s", &addr, &type, sname) == 3 && addr == vaddr &&
		    !strcmp(sname, name))
			found = true;
	}
	pclose(p);
	return found;
}

static void test_libc_and_debug_file(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	void *getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	char debug[PATH_MAX], cmd[2 * PATH_MAX], line[1024];
	unsigned long long vaddr = 0;
	struct sym_frame f;
	__u64 base;
	size_t i, len;
	FILE *p;
	__u32 id;

	assert_non_null(getpid_addr);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)getpid_addr, 0, &f), 0);
	assert_non_null(strstr(f.function, "getpid"));
	assert_int_equal(f.offset, 0);
	len = strlen(f.module);
	assert_true(len > 9 && !strcmp(f.module + len - 9, "libc.so.6"));
	assert_int_equal(f.build_id_len, 20);

	/* A local function of libc exists only in the debug file named by its build id. */
	len = snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%02x/", f.build_id[0]);
	for (i = 1; i < f.build_id_len; i++)
		len += snprintf(debug + len, sizeof(debug) - len, "%02x", f.build_id[i]);
	snprintf(debug + len, sizeof(debug) - len, ".debug");
	if (access(debug, R_OK))
		fail_msg("%s: %s (libc6-dbg: make deps)", debug, strerror(errno));
	snprintf(cmd, sizeof(cmd),
		 "nm --defined-only -S '%s' | awk '$3 == \"t\" && $2 != \"0000000000000000\"'",
		 debug);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (!vaddr && fgets(line, sizeof(line), p)) {
		unsigned long long size;
		char name[512];

		if (sscanf(line, "%llx %llx t %511s", &vaddr, &size, name) != 3 || name[0] == '_')
			vaddr = 0;
	}
	pclose(p);
	assert_true(vaddr);
	base = load_base(getpid_addr);
	assert_int_equal(symbolizer__resolve_user(sym, id, base + vaddr, 0, &f), 0);
	assert_int_equal(f.offset, 0);
	assert_true(nm_has(debug, vaddr, f.function));
	assert_int_equal(f.module_offset, vaddr);

	/*
	 * The signal trampoline: an untyped local symbol that signal frames
	 * return to (no call precedes it), so it must resolve as a return address.
	 */
	vaddr = 0;
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", debug);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, " __restore_rt\n"))
			sscanf(line, "%llx", &vaddr);
	pclose(p);
	if (vaddr) {
		assert_int_equal(
			symbolizer__resolve_user(sym, id, base + vaddr, SYM_RETURN_ADDRESS, &f), 0);
		assert_string_equal(f.function, "__restore_rt");
		assert_int_equal(f.offset, 0);
	}
	symbolizer__free(sym);
}

static void test_plt(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	char cmd[PATH_MAX], line[1024], want[512] = "";
	unsigned long long vaddr = 0;
	struct sym_frame f;
	__u32 id;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d -j .plt -j .plt.sec -j .plt.got /proc/%d/exe 2>/dev/null", getpid());
	p = popen(cmd, "r");
	assert_non_null(p);
	/* objdump names the stubs "<name@plt>:" by decoding them, independently of us. */
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char name[512];

		if (!want[0] && sscanf(line, "%llx <%511[^>]>:", &a, name) == 2 &&
		    strstr(name, "@plt") && !strpbrk(name, "+-")) {
			vaddr = a;
			snprintf(want, sizeof(want), "%s", name);
		}
	}
	pclose(p);
	if (!want[0])
		fail_msg("objdump shows no PLT stub in this test program");
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(
		symbolizer__resolve_user(sym, id, load_base(lp_sym_target_a) + vaddr + 2, 0, &f),
		0);
	assert_string_equal(f.function, want);
	assert_int_equal(f.offset, 2);
	/* PLT0 is no stub, and no zero-sized symbol before it extends over it. */
	symbolizer__resolve_user(sym, id, load_base(lp_sym_target_a) + vaddr - 8, 0, &f);
	assert_null(f.function);
	symbolizer__free(sym);
}

/* The vDSO's own dynamic symbols, read with libelf straight from memory. */
static __u64 vdso_symbol(const char *name)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	__u64 first_vaddr = ~0ULL, addr = 0;
	const struct maps_entry *e;
	Elf_Scn *scn = NULL;
	size_t i, phnum;
	struct maps *m;
	Elf *elf;

	if (!base)
		return 0;
	assert_int_equal(maps__read(getpid(), 0, &m), 0);
	e = maps__find(m, base);
	assert_non_null(e);
	assert_int_equal(e->kind, MAPS_VDSO);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)base, e->end - base);
	maps__free(m);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &phnum), 0);
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first_vaddr)
			first_vaddr = ph.p_vaddr;
	}
	while ((scn = elf_nextscn(elf, scn)) && !addr) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym s;

			if (gelf_getsym(d, i, &s) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				addr = base + s.st_value - first_vaddr;
		}
	}
	elf_end(elf);
	return addr;
}

static void test_vdso(void **state)
{
#if defined(__x86_64__)
	__u64 addr = vdso_symbol("__vdso_clock_gettime");
#elif defined(__aarch64__)
	__u64 addr = vdso_symbol("__kernel_clock_gettime");
#endif
	struct symbolizer *sym;
	struct sym_frame f;
	__u32 id;

	if (!addr)
		fail_msg("no clock_gettime in the vDSO (booted with vdso=0?)");
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, addr + 1, 0, &f), 0);
	assert_string_equal(f.module, "[vdso]");
	assert_non_null(strstr(f.function, "clock_gettime"));
	assert_int_equal(f.offset, 1);
	symbolizer__free(sym);
}

static const char lib_src[] = "static __attribute__((noinline)) int lp_hidden_fn(int x)\n"
			      "{ __asm__ volatile(\"\" : \"+r\"(x)); return x * 3 + VARIANT; }\n"
			      "int lp_lib_entry(int x) { return lp_hidden_fn(x) + 1; }\n"
			      "void *lp_lib_hidden_addr(void) { return (void *)lp_hidden_fn; }\n";

/*
 * Builds tmpdir/<name>.so, stripped, with its symbols in
 * tmpdir/.debug/<name>.debug found through .gnu_debuglink. With
 * debug_from set, the debug file is the one of that other build instead.
 */
static void build_lib(const char *name, int variant, const char *debug_from)
{
	char src[PATH_MAX];
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s.c", tmpdir, name);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(lib_src, f);
	fclose(f);
	assert_int_equal(
		run("cd '%s' && mkdir -p .debug && "
		    "gcc -shared -fPIC -O1 -g -DVARIANT=%d -o %s.so %s.c && "
		    "objcopy --only-keep-debug %s.so .debug/%s.debug && strip --strip-all %s.so && "
		    "objcopy --add-gnu-debuglink=.debug/%s.debug %s.so",
		    tmpdir, variant, name, name, name, name, name, name, name),
		0);
	if (debug_from)
		assert_int_equal(run("cp '%s/.debug/%s.debug' '%s/.debug/%s.debug'", tmpdir,
				     debug_from, tmpdir, name),
				 0);
}

struct lib {
	void *handle;
	__u64 entry, hidden;
};

static bool open_lib(const char *name, struct lib *l)
{
	char path[PATH_MAX];
	void *(*hidden)(void);

	snprintf(path, sizeof(path), "%s/%s.so", tmpdir, name);
	l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle)
		return false;
	l->entry = (uintptr_t)dlsym(l->handle, "lp_lib_entry");
	hidden = (void *(*)(void))dlsym(l->handle, "lp_lib_hidden_addr");
	assert_true(l->entry && hidden);
	l->hidden = (uintptr_t)hidden();
	return true;
}

static void test_debuglink_and_deleted(void **state)
{
	struct symbolizer *sym;
	char path[PATH_MAX];
	struct sym_frame f;
	struct lib good, bad;
	__u32 id;

	if (geteuid())
		skip_because("deleted files are opened through /proc/PID/map_files: needs root");
	build_lib("libgood", 1, NULL);
	build_lib("libother", 2, NULL);
	build_lib("libbad", 3, "libother");
	assert_true(open_lib("libgood", &good));
	assert_true(open_lib("libbad", &bad));
	/* Both files are gone from the file system but stay mapped. */
	snprintf(path, sizeof(path), "%s/libgood.so", tmpdir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/libbad.so", tmpdir);
	assert_int_equal(unlink(path), 0);

	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, good.entry, 0, &f), 0);
	assert_string_equal(f.function, "lp_lib_entry");
	snprintf(path, sizeof(path), "%s/libgood.so", tmpdir);
	assert_string_equal(f.module, path);
	/* Only in the debug file. */
	assert_int_equal(symbolizer__resolve_user(sym, id, good.hidden + 1, 0, &f), 0);
	assert_string_equal(f.function, "lp_hidden_fn");
	assert_int_equal(f.offset, 1);
	/* libbad's debuglink leads to a debug file with another build id: not used. */
	assert_int_equal(symbolizer__resolve_user(sym, id, bad.entry, 0, &f), 0);
	assert_string_equal(f.function, "lp_lib_entry");
	symbolizer__resolve_user(sym, id, bad.hidden, 0, &f);
	assert_true(!f.function || strcmp(f.function, "lp_hidden_fn"));
	symbolizer__free(sym);
	dlclose(good.handle);
	dlclose(bad.handle);
}

static void test_refresh_on_unknown_ip(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	__u64 first, second;
	struct symbolizer_stats st;
	struct sym_frame f;
	struct lib lib;
	__u32 id;

	build_lib("libnew", 4, NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_true(open_lib("libnew", &lib));
	assert_int_equal(symbolizer__resolve_user(sym, id, lib.entry, 0, &f), -ENOENT);
	assert_null(f.module);
	first = mono_ns();
	symbolizer__check_ips(sym, id, &lib.entry, 1);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.refreshes, 1);
	assert_int_equal(symbolizer__resolve_user(sym, id, lib.entry, 0, &f), 0);
	assert_string_equal(f.function, "lp_lib_entry");
	/* Known addresses never cause a refresh. */
	symbolizer__check_ips(sym, id, &lib.entry, 1);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.refreshes, 1);
	/*
	 * An unknown one does, 100 ms after the last refresh at the earliest;
	 * found in no mapping again, the next one waits twice as long.
	 */
	assert_true(check_until_refreshed(sym, id, 16, &second) - first >= REFRESH_MIN_NS);
	assert_true(check_until_refreshed(sym, id, 16, NULL) - second >= 2 * REFRESH_MIN_NS);
	symbolizer__free(sym);
	dlclose(lib.handle);
}

static void test_snapshot_lifecycle(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	__u64 a = (uintptr_t)lp_sym_target_a;
	struct symbolizer_stats st;
	struct sym_frame f;
	__u32 id1, id2;

	id1 = symbolizer__snapshot(sym, getpid(), NULL);
	symbolizer__snapshot_end(sym, id1);
	assert_false(symbolizer__snapshot_current(sym, id1));
	id2 = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_not_equal(id1, id2);
	/* Samples taken before the exec keep their snapshot. */
	assert_int_equal(symbolizer__resolve_user(sym, id1, a, 0, &f), 0);
	assert_int_equal(symbolizer__resolve_user(sym, id2, a, 0, &f), 0);
	symbolizer__release_unused(sym);
	assert_int_equal(symbolizer__resolve_user(sym, id1, a, 0, &f), -ENOENT);
	assert_int_equal(symbolizer__resolve_user(sym, id2, a, 0, &f), 0);
	symbolizer__snapshot_end(sym, id2);
	symbolizer__release_unused(sym);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.snapshots, 0);
	assert_int_equal(st.map_entries, 0);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.open_files, 0);
	assert_int_equal(symbolizer__resolve_user(sym, id2, a, 0, &f), -ENOENT);
	symbolizer__free(sym);
}

static void test_missing_process(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct symbolizer_stats st;
	struct sym_frame f;
	__u64 observed = mono_ns();
	__u32 id = symbolizer__snapshot(sym, INT_MAX, NULL);

	assert_int_not_equal(id, 0);
	assert_true(symbolizer__snapshot_current(sym, id));
	assert_int_equal(symbolizer__resolve_user(sym, id, 0x401000, 0, &f), -ENOENT);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.snapshot_failures, 1);
	assert_int_equal(st.refreshes, 0);
	/* Retried 100 ms after the failed read at the earliest, failing again. */
	assert_true(check_until_refreshed(sym, id, 0x401000, NULL) - observed >= REFRESH_MIN_NS);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.snapshot_failures, 2);
	symbolizer__free(sym);
}

/*
 * A forked child maps a library that is deleted and that we unmap: once the
 * child is gone too, only the descriptor opened when the child was first
 * observed leads to the file.
 */
static void test_exited_process(void **state)
{
	struct symbolizer *sym;
	char path[PATH_MAX];
	struct sym_frame f;
	struct lib lib;
	pid_t child;
	__u32 id;

	if (geteuid())
		skip_because("deleted files are opened through /proc/PID/map_files: needs root");
	build_lib("libexit", 5, NULL);
	assert_true(open_lib("libexit", &lib));
	snprintf(path, sizeof(path), "%s/libexit.so", tmpdir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/.debug/libexit.debug", tmpdir);
	assert_int_equal(unlink(path), 0);
	sym = symbolizer__new(NULL);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	id = symbolizer__snapshot(sym, child, NULL);
	dlclose(lib.handle);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	symbolizer__snapshot_end(sym, id);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_sym_target_b + 2, 0, &f),
			 0);
	assert_string_equal(f.function, "lp_sym_target_b");
	assert_int_equal(symbolizer__resolve_user(sym, id, lib.entry, 0, &f), 0);
	assert_string_equal(f.function, "lp_lib_entry");
	symbolizer__free(sym);
}

/*
 * A process that has exited but is not reaped yet has an empty memory map:
 * a refresh then (an address in no mapping) must keep what was seen.
 */
static void test_refresh_of_zombie_keeps_maps(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct sym_frame f;
	siginfo_t info;
	int go[2];
	pid_t child;
	char c;
	__u32 id;

	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		/* alive until the parent has its snapshot */
		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	id = symbolizer__snapshot(sym, child, NULL);
	close(go[1]);
	/* exited, not reaped: /proc/PID/maps is empty from now on */
	assert_int_equal(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
	symbolizer__check_ips(sym, id, (const __u64[]){0x10}, 1);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_sym_target_b + 2, 0, &f),
			 0);
	assert_string_equal(f.function, "lp_sym_target_b");
	assert_int_equal(waitpid(child, NULL, 0), child);
	symbolizer__free(sym);
}

/*
 * Samples are resolved after the fact: a re-read after the process exec'd
 * shows another image, whose maps would make the old samples unresolvable.
 */
static void test_refresh_after_exec_keeps_maps(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct symbolizer_stats st;
	struct sym_frame f;
	__u64 deadline, ip;
	struct maps *m;
	int go[2];
	pid_t child;
	size_t i;
	__u32 id;
	char c;

	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		/* this image until the parent has its snapshot, then another */
		close(go[1]);
		if (read(go[0], &c, 1) == 0)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	id = symbolizer__snapshot(sym, child, NULL);
	close(go[1]);
	/* until the exec has mapped sleep's code: [vsyscall] alone was in the old image too */
	deadline = mono_ns() + REFRESH_WAIT_NS;
	for (ip = 0; !ip;) {
		assert_true(mono_ns() < deadline);
		usleep(1000);
		assert_int_equal(maps__read(child, MAPS_EXEC_ONLY, &m), 0);
		for (i = 0; i < maps__count(m) && !ip; i++)
			if (strstr(maps__entry(m, i)->path, "sleep"))
				ip = maps__entry(m, i)->start;
		maps__free(m);
	}

	check_until_refreshed(sym, id, ip, NULL);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.other_images, 1);
	assert_int_equal(symbolizer__resolve_user(sym, id, ip, 0, &f), -ENOENT);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_sym_target_b + 2, 0, &f),
			 0);
	assert_string_equal(f.function, "lp_sym_target_b");
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	symbolizer__free(sym);
}

static void test_limits(void **state)
{
	struct symbolizer_opts opts = {
		.max_snapshots = 2,
		.max_symbol_bytes = 1,
		.max_open_files = 1,
	};
	struct symbolizer *sym = symbolizer__new(&opts);
	void *getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	struct symbolizer_stats st;
	struct sym_frame f;
	__u32 id, id_parent, id_init;
	int round;

	id = symbolizer__snapshot(sym, getpid(), NULL);
	symbolizer__stats(sym, &st);
	assert_true(st.open_files <= 1);
	/* Each file's table evicts the other's; descriptors are reopened on demand. */
	for (round = 0; round < 3; round++) {
		assert_int_equal(
			symbolizer__resolve_user(sym, id, (uintptr_t)lp_sym_target_a, 0, &f), 0);
		assert_string_equal(f.function, "lp_sym_target_a");
		assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)getpid_addr, 0, &f),
				 0);
		assert_non_null(strstr(f.function, "getpid"));
	}
	symbolizer__stats(sym, &st);
	assert_true(st.evictions >= 5);
	assert_true(st.open_files <= 1);
	assert_true(st.symbol_bytes > 0);

	id_parent = symbolizer__snapshot(sym, getppid(), NULL);
	id_init = symbolizer__snapshot(sym, 1, NULL);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.snapshots, 2);
	/* The least recently used snapshot went. */
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_sym_target_a, 0, &f),
			 -ENOENT);
	assert_int_not_equal(id_parent, id_init);
	symbolizer__free(sym);
}

/* Garbage and truncated ELF files mapped executable: no crash, no symbols. */
static void test_hostile_files(void **state)
{
	char garbage[PATH_MAX], truncated[PATH_MAX];
	unsigned char buf[8192];
	struct symbolizer *sym;
	void *g, *t;
	struct sym_frame f;
	unsigned int rng = 7;
	size_t i;
	__u32 id;
	int fd;

	snprintf(garbage, sizeof(garbage), "%s/garbage.bin", tmpdir);
	snprintf(truncated, sizeof(truncated), "%s/truncated.so", tmpdir);
	for (i = 0; i < sizeof(buf); i++) {
		rng = rng * 1103515245 + 12345;
		buf[i] = rng >> 16;
	}
	/* An ELF header on top of random bytes. */
	memcpy(buf,
	       "\x7f"
	       "ELF\x02\x01\x01",
	       7);
	fd = open(garbage, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	close(fd);
	assert_int_equal(run("cp /proc/%d/exe '%s' && truncate -s 6000 '%s'", getpid(), truncated,
			     truncated),
			 0);

	fd = open(garbage, O_RDONLY);
	g = mmap(NULL, sizeof(buf), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	fd = open(truncated, O_RDONLY);
	t = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (g == MAP_FAILED || t == MAP_FAILED)
		fail_msg("executable mappings of files in %s: %s (a noexec /tmp?)", tmpdir,
			 strerror(errno));

	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)g + 100, 0, &f), -ENOENT);
	assert_string_equal(f.module, garbage);
	assert_int_equal(f.module_offset, 100);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)t + 100, 0, &f), -ENOENT);
	assert_string_equal(f.module, truncated);
	symbolizer__free(sym);
	munmap(g, sizeof(buf));
	munmap(t, 4096);
}

static void test_kernel(void **state)
{
	__u64 addr = kallsyms_addr("schedule");
	struct symbolizer *sym = symbolizer__new(NULL);
	struct sym_frame f;

	assert_int_equal(symbolizer__resolve_kernel(sym, addr + 4, 0, &f), 0);
	assert_string_equal(f.function, "schedule");
	assert_int_equal(f.offset, 4);
	assert_string_equal(f.module, SYM_KERNEL_MODULE);
	assert_true(f.kernel);
	assert_int_equal(f.address, addr + 4);
	assert_int_equal(symbolizer__resolve_kernel(sym, addr, SYM_RETURN_ADDRESS, &f), 0);
	assert_string_not_equal(f.function, "schedule");
	assert_int_equal(symbolizer__resolve_kernel(sym, 16, 0, &f), -ENOENT);
	assert_null(f.function);
	assert_true(f.kernel);
	symbolizer__free(sym);
}

static void test_kallsyms_file(void **state)
{
	static const char text[] = "ffffffff81002000 T core_b\n"
				   "ffffffff81001000 T core_a\n"
				   "ffffffff81001000 t __core_a_alias\n"
				   "ffffffff81001800 d some_data\n"
				   "0000000000000000 T zero_addr\n"
				   "ffffffff81003000 T\n"
				   "ffffffff81003000 X bad_type\n"
				   "garbage line\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n"
				   "ffffffffc0002000 T mod_fn2\t[mymod]\n"
				   "ffffffffc0003000 t other_fn\t[other]\n"
				   "ffffffffc0004000 t bad_mod\t[broken\n"
				   "ffffffffc0005000 t last_fn\t[other]";
	struct symbolizer_opts opts = {0};
	char path[PATH_MAX];
	struct symbolizer *sym;
	struct sym_frame f;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	opts.kallsyms_path = path;
	sym = symbolizer__new(&opts);

	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffff81000fffULL, 0, &f), -ENOENT);
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffff81001000ULL, 0, &f), 0);
	assert_string_equal(f.function, "core_a");
	assert_string_equal(f.module, SYM_KERNEL_MODULE);
	/* Data symbols are not functions: core_a extends over some_data. */
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffff81001900ULL, 0, &f), 0);
	assert_string_equal(f.function, "core_a");
	assert_int_equal(f.offset, 0x900);
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffff81002000ULL, 0, &f), 0);
	assert_string_equal(f.function, "core_b");
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffffc0001010ULL, 0, &f), 0);
	assert_string_equal(f.function, "mod_fn");
	assert_string_equal(f.module, "[mymod]");
	assert_int_equal(f.offset, 0x10);
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffffc0002000ULL, 0, &f), 0);
	assert_string_equal(f.module, "[mymod]");
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffffc0003000ULL, 0, &f), 0);
	assert_string_equal(f.module, "[other]");
	assert_string_equal(f.function, "other_fn");
	/* A line with a broken module name is skipped. */
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffffc0004000ULL, 0, &f), 0);
	assert_string_equal(f.function, "other_fn");
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffffc0005000ULL, 0, &f), 0);
	assert_string_equal(f.function, "last_fn");
	assert_string_equal(f.module, "[other]");
	/* Far past the last symbol is in none. */
	assert_int_equal(symbolizer__resolve_kernel(sym, 0xffffffffc1005000ULL, 0, &f), -ENOENT);
	symbolizer__free(sym);
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* This test program is built with -g: its own lines, as addr2line reads them. */
static void test_own_lines(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	const __u64 addrs[] = {(uintptr_t)lp_sym_target_a, (uintptr_t)lp_sym_target_b + 5};
	struct symbolizer_stats st;
	struct sym_frame f;
	__u32 id, want[4];
	size_t i;

	id = symbolizer__snapshot(sym, getpid(), NULL);
	for (i = 0; i < 2; i++) {
		assert_int_equal(symbolizer__resolve_user(sym, id, addrs[i], 0, &f), 0);
		assert_int_equal(f.line_count, 1);
		assert_non_null(f.lines);
		assert_string_equal(f.lines[0].function, f.function);
		assert_string_equal(base_name(f.lines[0].file), "test_symbols.c");
		assert_int_equal(addr2line(f.module, f.module_offset, want, 4), 1);
		assert_int_equal(f.lines[0].line, want[0]);
	}
	assert_string_equal(f.function, "lp_sym_target_b");
	assert_int_equal(f.lines[0].start_line, target_b_line);
	assert_int_equal(symbolizer__resolve_user(sym, id, addrs[0], 0, &f), 0);
	assert_int_equal(f.lines[0].start_line, target_a_line);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.dwarf_files, 1);
	assert_true(st.symbol_bytes > 0);
	symbolizer__free(sym);

	/* without DWARF: names only */
	sym = symbolizer__new(&(struct symbolizer_opts){.no_dwarf = true});
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, addrs[0], 0, &f), 0);
	assert_string_equal(f.function, "lp_sym_target_a");
	assert_int_equal(f.line_count, 0);
	assert_null(f.lines);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.dwarf_files, 0);
	symbolizer__free(sym);
}

/*
 * lp_inl is inlined into lp_static_fn, a local function, at "@call"; the
 * global label lp_lib_mark (exported, so dlsym finds it) marks an
 * instruction of lp_inl at "@mark".
 */
static const char inline_src[] =
	"static inline __attribute__((always_inline)) int lp_inl(int x) /* @decl_inl */\n"
	"{\n"
	"	__asm__ volatile(\".globl lp_lib_mark\\nlp_lib_mark: nop\" : \"+r\"(x)); /* @mark "
	"*/\n"
	"	return x + 1;\n"
	"}\n"
	"\n"
	"static __attribute__((noinline)) int lp_static_fn(int x) /* @decl_static */\n"
	"{\n"
	"	__asm__ volatile(\"\" : \"+r\"(x));\n"
	"	return lp_inl(x) * 2; /* @call */\n"
	"}\n"
	"\n"
	"int lp_lib_entry2(int x)\n"
	"{\n"
	"	return lp_static_fn(x) + 1;\n"
	"}\n";

static __u32 inline_line(const char *name)
{
	char marker[64];
	const char *at;
	__u32 line = 1;

	snprintf(marker, sizeof(marker), "/* @%s */", name);
	at = strstr(inline_src, marker);
	assert_non_null(at);
	for (const char *p = inline_src; p < at; p++)
		line += *p == '\n';
	return line;
}

enum inline_lib_kind {
	INLINE_PLAIN,	  /* DWARF in the library */
	INLINE_DEBUGLINK, /* stripped, debug file in .debug/ named by .gnu_debuglink */
	INLINE_BUILD_ID,  /* stripped, debug file under tmpdir/root/usr/lib/debug/.build-id */
	INLINE_CORRUPT,	  /* not stripped, .debug_info overwritten */
};

/* Builds tmpdir/<name>.so from inline_src, -g -O2, its DWARF where kind says. */
static void build_inline_lib(const char *name, enum inline_lib_kind kind)
{
	char src[PATH_MAX];
	FILE *f;
	int rc = 0;

	snprintf(src, sizeof(src), "%s/%s.c", tmpdir, name);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(inline_src, f);
	fclose(f);
	assert_int_equal(run("cd '%s' && gcc -shared -fPIC -O2 -g -Wl,--build-id -o %s.so %s.c",
			     tmpdir, name, name),
			 0);
	switch (kind) {
	case INLINE_PLAIN:
		break;
	case INLINE_DEBUGLINK:
		rc = run("cd '%s' && mkdir -p .debug && objcopy --only-keep-debug %s.so "
			 ".debug/%s.debug && strip --strip-all %s.so && "
			 "objcopy --add-gnu-debuglink=.debug/%s.debug %s.so",
			 tmpdir, name, name, name, name, name);
		break;
	case INLINE_BUILD_ID:
		/* the build id path from readelf, independently of the symbolizer */
		rc = run("cd '%s' && id=$(readelf -n %s.so | sed -n 's/.*Build ID: //p') && "
			 "d=root/usr/lib/debug/.build-id/$(echo $id | cut -c1-2) && "
			 "mkdir -p $d && objcopy --only-keep-debug %s.so "
			 "$d/$(echo $id | cut -c3-).debug && strip --strip-all %s.so",
			 tmpdir, name, name, name);
		break;
	case INLINE_CORRUPT:
		rc = run("cd '%s' && set -- $(readelf -S -W %s.so | "
			 "sed -n 's/.* \\.debug_info *[A-Z]* *[0-9a-f]* \\([0-9a-f]*\\) "
			 "\\([0-9a-f]*\\).*/\\1 \\2/p') && [ $# = 2 ] && "
			 "head -c $((0x$2)) /dev/zero | tr '\\0' '\\377' | "
			 "dd of=%s.so bs=1 seek=$((0x$1)) conv=notrunc status=none",
			 tmpdir, name, name);
		break;
	}
	assert_int_equal(rc, 0);
}

/* dlopens tmpdir/<name>.so; *mark is lp_lib_mark in it. */
static void *open_inline_lib(const char *name, __u64 *mark)
{
	char path[PATH_MAX];
	void *h;

	snprintf(path, sizeof(path), "%s/%s.so", tmpdir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	*mark = (uintptr_t)dlsym(h, "lp_lib_mark");
	assert_true(*mark);
	return h;
}

/*
 * The chain at lp_lib_mark: lp_inl at @mark, inlined into lp_static_fn at
 * @call, in source file src.
 */
static void check_inline_frame(const struct sym_frame *f, const char *src, bool ret)
{
	assert_string_equal(f->function, "lp_static_fn");
	assert_int_equal(f->line_count, 2);
	assert_string_equal(f->lines[0].function, "lp_inl");
	assert_string_equal(base_name(f->lines[0].file), src);
	assert_int_equal(f->lines[0].start_line, inline_line("decl_inl"));
	if (!ret)
		assert_int_equal(f->lines[0].line, inline_line("mark"));
	assert_string_equal(f->lines[1].function, "lp_static_fn");
	assert_string_equal(base_name(f->lines[1].file), src);
	assert_int_equal(f->lines[1].line, inline_line("call"));
	assert_int_equal(f->lines[1].start_line, inline_line("decl_static"));
}

/* Names and lines of a stripped library from its .gnu_debuglink debug file. */
static void test_debuglink_lines(void **state)
{
	struct symbolizer *sym;
	struct sym_frame f;
	__u64 mark;
	void *h;
	__u32 id;

	build_inline_lib("libinl", INLINE_DEBUGLINK);
	assert_int_not_equal(run("readelf -S '%s/libinl.so' | grep -q debug_info", tmpdir), 0);
	h = open_inline_lib("libinl", &mark);
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, mark, 0, &f), 0);
	check_inline_frame(&f, "libinl.c", false);
	/* the next instruction's return address is looked up at mark too */
	assert_int_equal(symbolizer__resolve_user(sym, id, mark + 1, SYM_RETURN_ADDRESS, &f), 0);
	check_inline_frame(&f, "libinl.c", true);
	assert_int_equal(f.lines[0].line, inline_line("mark"));
	symbolizer__free(sym);
	dlclose(h);
}

/* A debug file found by build id under a root of our own (opts.debug_dir). */
static void test_build_id_debug_dir(void **state)
{
	char debug_dir[PATH_MAX];
	struct symbolizer *sym;
	struct sym_frame f;
	__u64 mark;
	void *h;
	__u32 id;

	build_inline_lib("libinl2", INLINE_BUILD_ID);
	h = open_inline_lib("libinl2", &mark);
	/* not in /usr/lib/debug: only the exported label names the address */
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	symbolizer__resolve_user(sym, id, mark, 0, &f);
	assert_true(!f.function || strcmp(f.function, "lp_static_fn"));
	assert_int_equal(f.line_count, 0);
	symbolizer__free(sym);

	snprintf(debug_dir, sizeof(debug_dir), "%s/root/usr/lib/debug", tmpdir);
	sym = symbolizer__new(&(struct symbolizer_opts){.debug_dir = debug_dir});
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, mark, 0, &f), 0);
	assert_string_equal(base_name(f.module), "libinl2.so");
	assert_int_equal(f.line_count, 2);
	assert_string_equal(f.lines[0].function, "lp_inl");
	assert_int_equal(f.lines[0].line, inline_line("mark"));
	assert_string_equal(f.function, "lp_static_fn");
	assert_int_equal(f.lines[1].line, inline_line("call"));
	symbolizer__free(sym);
	dlclose(h);
}

/* .debug_info overwritten: the name from the symbol table, no lines, no crash. */
static void test_corrupt_dwarf(void **state)
{
	struct symbolizer *sym;
	struct sym_frame f;
	__u64 mark;
	void *h;
	__u32 id;

	build_inline_lib("libinl3", INLINE_CORRUPT);
	assert_int_equal(run("readelf -S '%s/libinl3.so' | grep -q debug_info", tmpdir), 0);
	h = open_inline_lib("libinl3", &mark);
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, mark, 0, &f), 0);
	assert_string_equal(f.function, "lp_static_fn");
	assert_int_equal(f.line_count, 0);
	assert_null(f.lines);
	symbolizer__free(sym);
	dlclose(h);
}

/* gcc's clones: the symbol table says "scale.constprop.0", DWARF "scale". */
static void test_clone_names(void **state)
{
	static const char src[] = "__attribute__((noinline)) static int scale(int x, int k)\n"
				  "{\n"
				  "	int r = 0;\n"
				  "	for (int i = 0; i < x; i++)\n"
				  "		r += i * k;\n"
				  "	__asm__ volatile(\"\" : \"+r\"(r));\n"
				  "	return r;\n"
				  "}\n"
				  "int lp_clone_a(int x) { return scale(x, 3); }\n"
				  "int lp_clone_b(int x) { return scale(x, 3) + 1; }\n";
	char path[PATH_MAX], cmd[2 * PATH_MAX], line[512];
	unsigned long long clone = 0, entry = 0;
	struct symbolizer *sym;
	struct sym_frame f;
	void *h;
	FILE *p;
	__u32 id;

	snprintf(path, sizeof(path), "%s/libclone.c", tmpdir);
	p = fopen(path, "w");
	assert_non_null(p);
	fputs(src, p);
	fclose(p);
	assert_int_equal(
		run("cd '%s' && gcc -shared -fPIC -O2 -g -o libclone.so libclone.c", tmpdir), 0);
	snprintf(cmd, sizeof(cmd), "nm '%s/libclone.so'", tmpdir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "scale.constprop.0"))
			clone = a;
		else if (!strcmp(name, "lp_clone_a"))
			entry = a;
	}
	pclose(p);
	if (!clone)
		fail_msg("gcc made no scale.constprop.0 clone: the fixture tests nothing");
	snprintf(path, sizeof(path), "%s/libclone.so", tmpdir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(
		symbolizer__resolve_user(
			sym, id, (uintptr_t)dlsym(h, "lp_clone_a") - entry + clone + 2, 0, &f),
		0);
	assert_string_equal(f.function, "scale.constprop.0");
	assert_int_equal(f.offset, 2);
	assert_true(f.line_count >= 1);
	assert_string_equal(f.lines[f.line_count - 1].function, "scale");
	assert_int_equal(f.lines[f.line_count - 1].start_line, 1);
	symbolizer__free(sym);
	dlclose(h);
}

/*
 * DWARF handles stay within their number and within the byte budget; the
 * lines they gave stay known when they are closed.
 */
static void test_dwarf_limits(void **state)
{
	struct symbolizer_opts opts = {.max_dwarf_files = 1};
	const char *const libc_fns[] = {"getpid", "getppid", "getuid"};
	const __u64 own[] = {(uintptr_t)lp_sym_target_a, (uintptr_t)lp_sym_target_b,
			     (uintptr_t)lp_sym_target_b + 4};
	struct symbolizer_stats st;
	struct symbolizer *sym;
	struct sym_frame f;
	__u32 id, own_line = 0, libc_line = 0;
	__u64 opens;
	int round;

	sym = symbolizer__new(&opts);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	/* new addresses every round: DWARF closed for the other file opens again */
	for (round = 0; round < 3; round++) {
		assert_int_equal(symbolizer__resolve_user(sym, id, own[round], 0, &f), 0);
		assert_int_equal(f.line_count, 1);
		if (!round)
			own_line = f.lines[0].line;
		assert_int_equal(
			symbolizer__resolve_user(
				sym, id, (uintptr_t)dlsym(RTLD_DEFAULT, libc_fns[round]), 0, &f),
			0);
		/* libc's DWARF is in its debug file (libc6-dbg) */
		assert_true(f.line_count >= 1);
		if (!round)
			libc_line = f.lines[0].line;
		symbolizer__stats(sym, &st);
		assert_true(st.dwarf_files <= 1);
	}
	symbolizer__stats(sym, &st);
	assert_true(st.evictions >= 5);
	assert_int_equal(st.dwarf_opens, 6);
	/* known already: the same lines, DWARF not opened again */
	opens = st.dwarf_opens;
	assert_int_equal(symbolizer__resolve_user(sym, id, own[0], 0, &f), 0);
	assert_int_equal(f.line_count, 1);
	assert_int_equal(f.lines[0].line, own_line);
	assert_int_equal(f.lines[0].start_line, target_a_line);
	assert_string_equal(base_name(f.lines[0].file), "test_symbols.c");
	assert_int_equal(symbolizer__resolve_user(
				 sym, id, (uintptr_t)dlsym(RTLD_DEFAULT, libc_fns[0]), 0, &f),
			 0);
	assert_int_equal(f.lines[0].line, libc_line);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.dwarf_opens, opens);
	symbolizer__free(sym);

	/* too large for half the budget: refused, counted */
	opts = (struct symbolizer_opts){.max_symbol_bytes = 4096};
	sym = symbolizer__new(&opts);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)lp_sym_target_a, 0, &f), 0);
	assert_int_equal(f.line_count, 0);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.dwarf_failures, 1);
	assert_int_equal(st.dwarf_files, 0);
	symbolizer__free(sym);
}

/* f at lp_lib_entry2: the function itself, at the line addr2line gives. */
static void check_entry_frame(const struct sym_frame *f, const char *src)
{
	__u32 want[4];

	assert_string_equal(f->function, "lp_lib_entry2");
	assert_int_equal(f->line_count, 1);
	assert_string_equal(f->lines[0].function, "lp_lib_entry2");
	assert_string_equal(base_name(f->lines[0].file), src);
	assert_int_equal(addr2line(f->module, f->module_offset, want, 4), 1);
	assert_int_equal(f->lines[0].line, want[0]);
}

/* Resolves ip in snapshot id; the DWARF handles open, opened so far, within budget. */
static void resolve_within(struct symbolizer *sym, __u32 id, __u64 ip, unsigned int flags,
			   size_t budget, struct sym_frame *f, struct symbolizer_stats *st)
{
	assert_int_equal(symbolizer__resolve_user(sym, id, ip, flags, f), 0);
	symbolizer__stats(sym, st);
	assert_true(st->symbol_bytes <= budget);
	assert_true(st->dwarf_files <= 1);
}

/*
 * Under a byte budget that holds the DWARF of one library but not of two,
 * opening one closes the other's. Lines found before come back without
 * opening it again; a new address opens it again; all of them right.
 */
static void test_dwarf_budget(void **state)
{
	const char *const names[2] = {"libbud1", "libbud2"}, *const srcs[2] = {"libbud1.c",
									       "libbud2.c"};
	struct symbolizer_stats st;
	struct symbolizer *sym;
	struct sym_frame f;
	__u64 mark[2], entry[2];
	size_t one, budget;
	void *h[2];
	__u32 id;
	int i;

	for (i = 0; i < 2; i++) {
		build_inline_lib(names[i], INLINE_PLAIN);
		h[i] = open_inline_lib(names[i], &mark[i]);
		entry[i] = (uintptr_t)dlsym(h[i], "lp_lib_entry2");
		assert_true(entry[i]);
	}
	/* what one library's DWARF takes, and everything else, without limits */
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, mark[0], 0, &f), 0);
	symbolizer__stats(sym, &st);
	one = st.dwarf_bytes;
	assert_int_equal(symbolizer__resolve_user(sym, id, mark[1], 0, &f), 0);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.dwarf_files, 2);
	assert_int_equal(st.dwarf_bytes, 2 * one);
	symbolizer__free(sym);
	budget = st.symbol_bytes - st.dwarf_bytes + one + one / 2;
	assert_true(one <= budget / 2);

	sym = symbolizer__new(&(struct symbolizer_opts){.max_symbol_bytes = budget});
	id = symbolizer__snapshot(sym, getpid(), NULL);
	resolve_within(sym, id, mark[0], 0, budget, &f, &st);
	check_inline_frame(&f, srcs[0], false);
	assert_int_equal(st.dwarf_opens, 1);
	resolve_within(sym, id, mark[1], 0, budget, &f, &st);
	check_inline_frame(&f, srcs[1], false);
	assert_int_equal(st.dwarf_opens, 2);
	assert_int_equal(st.dwarf_files, 1);
	assert_int_equal(st.evictions, 1);
	/* found before: DWARF stays closed */
	resolve_within(sym, id, mark[0], 0, budget, &f, &st);
	check_inline_frame(&f, srcs[0], false);
	assert_int_equal(st.dwarf_opens, 2);
	/* new: opened again, closing the other */
	resolve_within(sym, id, entry[0], 0, budget, &f, &st);
	check_entry_frame(&f, srcs[0]);
	assert_int_equal(st.dwarf_opens, 3);
	assert_int_equal(st.evictions, 2);
	resolve_within(sym, id, mark[1] + 1, SYM_RETURN_ADDRESS, budget, &f, &st);
	check_inline_frame(&f, srcs[1], true);
	assert_int_equal(st.dwarf_opens, 3);
	resolve_within(sym, id, entry[1], 0, budget, &f, &st);
	check_entry_frame(&f, srcs[1]);
	assert_int_equal(st.dwarf_opens, 4);
	/* the symbols and lines of both stayed */
	assert_int_equal(st.evictions, 3);
	symbolizer__free(sym);
	for (i = 0; i < 2; i++)
		dlclose(h[i]);
}

/* A JIT's child: anonymous executable code and a perf map naming it. */
struct jit_child {
	pid_t pid;
	int cmd, ack; /* pipes to and from the child */
	char *code;   /* mapped in both */
	__u64 gone;   /* named in the map, unmapped by the child */
	char map[64];
};

static void jit_child_run(struct jit_child *j, int cmd, int ack)
{
	FILE *m = fopen(j->map, "w");
	char c;

	prctl(PR_SET_NAME, "lp-jit-child");
	if (!m)
		_exit(1);
	/* perf's format, a 0x prefix, malformed lines, a name with spaces */
	fprintf(m,
		"%llx 40 jit_one\n"
		"zzz not a line\n"
		"%llx 10\n"
		"0x%llx 0x20 LazyCompile: foo bar.js:12\n"
		"%llx 10 jit_gone\n",
		(unsigned long long)(uintptr_t)j->code, (unsigned long long)(uintptr_t)j->code,
		(unsigned long long)(uintptr_t)j->code + 0x40, (unsigned long long)j->gone);
	fclose(m);
	munmap((void *)(uintptr_t)j->gone, 4096);
	if (write(ack, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		/* JITs append; code may be replaced at an address already named */
		m = fopen(j->map, "a");
		if (!m)
			_exit(1);
		fprintf(m, "%llx 30 jit_late\n%llx 8 jit_replaced\n%llx 8 jit_overlap\n",
			(unsigned long long)(uintptr_t)j->code + 0x100,
			(unsigned long long)(uintptr_t)j->code,
			(unsigned long long)(uintptr_t)j->code + 0x48);
		fclose(m);
		if (write(ack, "a", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static void jit_child_start(struct jit_child *j)
{
	int cmd[2], ack[2];
	void *gone;
	char c;

	j->code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	gone = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(j->code != MAP_FAILED && gone != MAP_FAILED);
	j->gone = (uintptr_t)gone;
	assert_int_equal(pipe(cmd), 0);
	assert_int_equal(pipe(ack), 0);
	j->pid = fork();
	assert_true(j->pid >= 0);
	snprintf(j->map, sizeof(j->map), "/tmp/perf-%d.map", j->pid ? j->pid : getpid());
	if (!j->pid) {
		close(cmd[1]);
		close(ack[0]);
		jit_child_run(j, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	j->cmd = cmd[1];
	j->ack = ack[0];
	munmap(gone, 4096);
	assert_int_equal(read(j->ack, &c, 1), 1);
}

static void jit_child_stop(struct jit_child *j)
{
	close(j->cmd);
	close(j->ack);
	kill(j->pid, SIGKILL);
	assert_int_equal(waitpid(j->pid, NULL, 0), j->pid);
	unlink(j->map);
	munmap(j->code, 8192);
}

static void test_jit_perf_map(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct symbolizer_stats st;
	struct jit_child j;
	struct sym_frame f;
	const char *exe, *comm;
	__u64 code, late, missed, deadline, read_at;
	size_t entries;
	__u32 id;
	char c;

	jit_child_start(&j);
	code = (uintptr_t)j.code;
	late = code + 0x105;
	id = symbolizer__snapshot(sym, j.pid, NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 5, 0, &f), 0);
	assert_string_equal(f.function, "jit_one");
	assert_string_equal(f.module, j.map);
	assert_int_equal(f.offset, 5);
	assert_int_equal(f.module_offset, code + 5);
	assert_int_equal(f.map_start, code);
	assert_int_equal(f.line_count, 0);
	assert_false(f.kernel);
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x45, SYM_RETURN_ADDRESS, &f), 0);
	assert_string_equal(f.function, "LazyCompile: foo bar.js:12");
	assert_int_equal(f.offset, 5);
	/* in no mapping any more, still named by the map */
	assert_int_equal(symbolizer__resolve_user(sym, id, j.gone + 3, 0, &f), 0);
	assert_string_equal(f.function, "jit_gone");
	assert_int_equal(f.map_start, j.gone);
	assert_int_equal(f.map_end, j.gone + 0x10);
	/* not named (yet): anonymous code; the miss read the map again */
	missed = mono_ns();
	assert_int_equal(symbolizer__resolve_user(sym, id, late, 0, &f), -ENOENT);
	assert_string_equal(f.module, "[anon]");

	/*
	 * The JIT appends; a sample there reads the map again, 100 ms after
	 * the miss at the earliest.
	 */
	assert_int_equal(write(j.cmd, "a", 1), 1);
	assert_int_equal(read(j.ack, &c, 1), 1);
	symbolizer__stats(sym, &st);
	entries = st.map_entries;
	deadline = mono_ns() + REFRESH_WAIT_NS;
	do {
		assert_true(mono_ns() < deadline);
		usleep(1000);
		symbolizer__check_ips(sym, id, &late, 1);
		read_at = mono_ns();
		symbolizer__stats(sym, &st);
	} while (st.map_entries == entries);
	assert_true(read_at - missed >= REFRESH_MIN_NS);
	assert_int_equal(st.map_entries, entries + 2);
	assert_int_equal(st.refreshes, 0);
	assert_int_equal(symbolizer__resolve_user(sym, id, late, 0, &f), 0);
	assert_string_equal(f.function, "jit_late");
	assert_int_equal(f.offset, 5);
	/* the newest entry at an address replaces the older one, and wins where they overlap */
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 5, 0, &f), 0);
	assert_string_equal(f.function, "jit_replaced");
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x4a, 0, &f), 0);
	assert_string_equal(f.function, "jit_overlap");
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x45, 0, &f), 0);
	assert_string_equal(f.function, "LazyCompile: foo bar.js:12");
	/* the same again: every entry replaces one, the entries and names stay as many */
	assert_int_equal(write(j.cmd, "a", 1), 1);
	assert_int_equal(read(j.ack, &c, 1), 1);
	usleep(150 * 1000);
	symbolizer__check_ips(sym, id, (const __u64[]){code + 0x200}, 1);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.map_entries, entries + 2);
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x4a, 0, &f), 0);
	assert_string_equal(f.function, "jit_overlap");
	assert_int_equal(symbolizer__resolve_user(sym, id, late, 0, &f), 0);
	assert_string_equal(f.function, "jit_late");
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x45, 0, &f), 0);
	assert_string_equal(f.function, "LazyCompile: foo bar.js:12");

	/* after the process is gone */
	jit_child_stop(&j);
	symbolizer__snapshot_end(sym, id);
	assert_int_equal(symbolizer__resolve_user(sym, id, late, 0, &f), 0);
	assert_string_equal(f.function, "jit_late");
	assert_int_equal(symbolizer__process(sym, id, &exe, &comm), 0);
	assert_string_equal(comm, "lp-jit-child");
	assert_non_null(exe);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.perf_map_failures, 0);
	symbolizer__free(sym);
}

/* Lines longer than any name, long names, a last line still being written. */
static void test_jit_map_format(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	char map[64], *junk, c;
	struct sym_frame f;
	int hold[2];
	pid_t child;
	__u64 code;
	FILE *m;
	__u32 id;

	code = (uintptr_t)mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);
	assert_true(code != (uintptr_t)MAP_FAILED);
	assert_int_equal(pipe(hold), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		/* until we close the pipe, or exit */
		close(hold[1]);
		_exit(read(hold[0], &c, 1) < 0);
	}
	close(hold[0]);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", child);
	junk = malloc(70000);
	assert_non_null(junk);
	memset(junk, 'x', 70000 - 1);
	junk[70000 - 1] = '\0';
	m = fopen(map, "w");
	assert_non_null(m);
	fprintf(m, "%s\n%llx 10 after_long\n%llx 10 %s\n%llx 10 jit_tail", junk,
		(unsigned long long)code + 0x20, (unsigned long long)code + 0x30, junk + 60000,
		(unsigned long long)code + 0x40);
	fclose(m);
	free(junk);

	id = symbolizer__snapshot(sym, child, NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x21, 0, &f), 0);
	assert_string_equal(f.function, "after_long");
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x30, 0, &f), 0);
	assert_int_equal(strlen(f.function), 1024);
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x40, 0, &f), -ENOENT);
	/* the writer ends its line; past the 100 ms between reads, it is read */
	m = fopen(map, "a");
	assert_non_null(m);
	fputc('\n', m);
	fclose(m);
	usleep(150 * 1000);
	assert_int_equal(symbolizer__resolve_user(sym, id, code + 0x40, 0, &f), 0);
	assert_string_equal(f.function, "jit_tail");
	close(hold[1]);
	assert_int_equal(waitpid(child, NULL, 0), child);
	unlink(map);
	munmap((void *)(uintptr_t)code, 4096);
	symbolizer__free(sym);
}

/* Maps another user could have written, or too large ones, are not read. */
static void test_jit_refused_maps(void **state)
{
	struct symbolizer *sym;
	struct symbolizer_stats st;
	struct jit_child j;
	struct sym_frame f;
	__u32 id;

	if (geteuid())
		skip_because("handing the perf map to another uid (chown) needs root");
	jit_child_start(&j);
	assert_int_equal(chown(j.map, 65534, 65534), 0);
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, j.pid, NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)j.code + 5, 0, &f), -ENOENT);
	assert_string_equal(f.module, "[anon]");
	symbolizer__stats(sym, &st);
	assert_int_equal(st.perf_map_failures, 1);
	symbolizer__free(sym);

	assert_int_equal(chown(j.map, 0, 0), 0);
	assert_int_equal(truncate(j.map, (64 << 20) + 1), 0);
	sym = symbolizer__new(NULL);
	id = symbolizer__snapshot(sym, j.pid, NULL);
	assert_int_equal(symbolizer__resolve_user(sym, id, (uintptr_t)j.code + 5, 0, &f), -ENOENT);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.perf_map_failures, 1);
	symbolizer__free(sym);
	jit_child_stop(&j);
}

static void test_process_identity(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	char self[PATH_MAX], comm[32], path[PATH_MAX], link[64], child_exe[PATH_MAX], c;
	const char *exe, *name;
	int execd[2];
	pid_t child;
	ssize_t n;
	FILE *fp;
	__u32 id;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	fp = fopen("/proc/self/comm", "r");
	assert_non_null(fp);
	assert_non_null(fgets(comm, sizeof(comm), fp));
	fclose(fp);
	comm[strcspn(comm, "\n")] = '\0';
	id = symbolizer__snapshot(sym, getpid(), NULL);
	assert_int_equal(symbolizer__process(sym, id, &exe, &name), 0);
	assert_string_equal(exe, self);
	assert_string_equal(name, comm);
	assert_int_equal(symbolizer__process(sym, id, NULL, NULL), 0);
	assert_int_equal(symbolizer__process(sym, id + 1000, &exe, &name), -ENOENT);
	assert_null(exe);
	assert_null(name);

	/* an executable deleted while it runs keeps its path, after its exit too */
	snprintf(path, sizeof(path), "%s/lp-sleeper", tmpdir);
	assert_int_equal(run("cp /bin/sleep '%s'", path), 0);
	assert_int_equal(pipe2(execd, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		execl(path, "lp-sleeper", "60", (char *)NULL);
		_exit(127);
	}
	/* the exec closes the child's end of the pipe (so would its exit) */
	close(execd[1]);
	assert_int_equal(read(execd[0], &c, 1), 0);
	close(execd[0]);
	snprintf(link, sizeof(link), "/proc/%d/exe", child);
	n = readlink(link, child_exe, sizeof(child_exe) - 1);
	assert_true(n > 0);
	child_exe[n] = '\0';
	assert_string_equal(child_exe, path);
	assert_int_equal(unlink(path), 0);
	id = symbolizer__snapshot(sym, child, NULL);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	symbolizer__snapshot_end(sym, id);
	assert_int_equal(symbolizer__process(sym, id, &exe, &name), 0);
	assert_string_equal(exe, path);
	assert_string_equal(name, "lp-sleeper");
	symbolizer__free(sym);
}

static int grab(const struct profile_sample *s, void *ctx)
{
	*(__u32 *)ctx = s->snapshot;
	return 0;
}

/* The profile tells the symbolizer about every pid with a user stack. */
/* A profile symbolizes a record's user stack against the snapshot its resolver names. */
static void test_profile_observes(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct profile *p = profile__new(sym, NULL);
	struct own_snapshot one;
	unsigned char rec[sizeof(struct lp_sample) + 8];
	struct lp_sample h = {.hdr = {LP_EVENT_SAMPLE, sizeof(rec)}, .ustack_len = 1};
	__u64 ip = (uintptr_t)lp_sym_target_b + 3;
	struct symbolizer_stats st;
	struct sym_frame f;
	__u32 snapshot = 0;

	own_snapshot__use(&one, p, sym, getpid());
	h.tgid = h.tid = getpid();
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), &ip, sizeof(ip));
	assert_int_equal(profile__add_sample(p, rec, sizeof(rec)), 0);
	assert_int_equal(profile__add_sample(p, rec, sizeof(rec)), 0);
	assert_int_equal(one.calls, 2);
	symbolizer__stats(sym, &st);
	assert_int_equal(st.snapshots, 1);
	assert_int_equal(profile__for_each(p, grab, &snapshot), 0);
	assert_int_equal(snapshot, one.id);
	assert_int_not_equal(snapshot, 0);
	assert_int_equal(symbolizer__resolve_user(sym, snapshot, ip, 0, &f), 0);
	assert_string_equal(f.function, "lp_sym_target_b");
	profile__free(p);
	symbolizer__free(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_functions),
		cmocka_unit_test(test_libc_and_debug_file),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_debuglink_and_deleted),
		cmocka_unit_test(test_refresh_on_unknown_ip),
		cmocka_unit_test(test_snapshot_lifecycle),
		cmocka_unit_test(test_missing_process),
		cmocka_unit_test(test_exited_process),
		cmocka_unit_test(test_refresh_of_zombie_keeps_maps),
		cmocka_unit_test(test_refresh_after_exec_keeps_maps),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test_teardown(test_kernel, kallsyms_restore),
		cmocka_unit_test(test_kallsyms_file),
		cmocka_unit_test(test_profile_observes),
		cmocka_unit_test(test_own_lines),
		cmocka_unit_test(test_debuglink_lines),
		cmocka_unit_test(test_build_id_debug_dir),
		cmocka_unit_test(test_corrupt_dwarf),
		cmocka_unit_test(test_clone_names),
		cmocka_unit_test(test_dwarf_limits),
		cmocka_unit_test(test_dwarf_budget),
		cmocka_unit_test(test_jit_perf_map),
		cmocka_unit_test(test_jit_map_format),
		cmocka_unit_test(test_jit_refused_maps),
		cmocka_unit_test(test_process_identity),
	};

	lp_sym_target_b(1);
	return cmocka_run_group_tests(tests, setup, teardown);
}
