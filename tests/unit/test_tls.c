// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * TLS recipe tests. Live fixtures (tests/tls/) print where their label object
 * really is; the test resolves the running process and checks that the
 * recipe, applied the way the BPF sampler applies it (reading the process's
 * memory through /proc/PID/mem), lands on that address in every thread.
 * aarch64 fixtures are checked file-level against a run under qemu-aarch64.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/elf.h"
#include "proc/golang.h"
#include "proc/tls.h"
#include "fixtures.h"
#include "skip.h"

#if defined(__x86_64__)
#define NATIVE_LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define NATIVE_LDSO "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define NATIVE_LIBC "/lib/aarch64-linux-gnu/libc.so.6"
#define NATIVE_LDSO "/lib/ld-linux-aarch64.so.1"
#endif
#define QEMU_AARCH64	"/usr/bin/qemu-aarch64"
#define AARCH64_SYSROOT "/usr/aarch64-linux-gnu"

/* tests/tls/build.mk builds every fixture a test names on this host. */
/*
 * A process's recipe as the label sources find it (sources/): custom
 * labels, the OTel thread context (whose error counts when neither is
 * found), and a Go program's labels. Returns as tls_process__custom_labels.
 */
static int resolve_process(struct tls_cache *cache, int pid, struct lp_recipe *recipe,
			   struct tls_diag *diag)
{
	struct tls_process *tp;
	struct tls_diag scratch;
	int ret, oret;

	memset(recipe, 0, sizeof(*recipe));
	if (!diag)
		diag = &scratch;
	memset(diag, 0, sizeof(*diag));
	ret = tls_process__open(cache, pid, NULL, &tp, diag);
	if (ret)
		return ret;
	ret = tls_process__custom_labels(tp, recipe, diag);
	if (ret != -ESRCH) {
		oret = tls_process__otel_thread(tp, &recipe->otel, diag);
		if (oret == -ESRCH || recipe->otel.access != LP_TLS_NONE)
			ret = oret;
		else if (recipe->form == LP_FORM_NONE && (!ret || ret == -ENOENT) && oret)
			ret = oret;
	}
	if (tls_process__main_program(tp) && ret != -ESRCH)
		golang__recipe(tls_process__main_program(tp), &recipe->go, diag->go,
			       sizeof(diag->go));
	tls_process__close(tp);
	return ret;
}

static void need_fixture(const char *name)
{
	char path[PATH_MAX];

	if (access(fixture_path(name, path, sizeof(path)), X_OK | R_OK))
		fail_msg("fixture %s: %s: make test-build", path, strerror(errno));
}

/* What a fixture printed. */
struct fx_out {
	uint64_t tp, addr, tp1, addr1, tp2;
};

struct fixture {
	pid_t pid;
	int in_fd; /* the fixture's stdin: closing it ends the fixture */
	struct fx_out out;
};

static int parse_line(struct fx_out *o, const char *line)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{"tp=", offsetof(struct fx_out, tp)},	{"addr=", offsetof(struct fx_out, addr)},
		{"tp1=", offsetof(struct fx_out, tp1)}, {"addr1=", offsetof(struct fx_out, addr1)},
		{"tp2=", offsetof(struct fx_out, tp2)},
	};
	size_t i;

	if (!strcmp(line, "ready"))
		return 1;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t len = strlen(keys[i].key);

		if (!strncmp(line, keys[i].key, len)) {
			*(uint64_t *)((char *)o + keys[i].off) = strtoull(line + len, NULL, 0);
			return 0;
		}
	}
	return 0;
}

/* Reads "key=value" lines from fd until "ready" or EOF; 0 once ready. */
static int read_output(int fd, struct fx_out *o)
{
	char buf[4096], line[256];
	size_t ll = 0;
	ssize_t n;
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < 1000; i++) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t k;

		if (poll(&pfd, 1, 20000) <= 0)
			return -1;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return -1;
		for (k = 0; k < n; k++) {
			if (buf[k] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[k];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			if (parse_line(o, line) == 1)
				return 0;
		}
	}
	return -1;
}

/* In the child before exec; a non-zero return makes the child exit with it. */
typedef int (*child_setup_fn)(void *arg);

static pid_t spawn_setup(const char *const argv[], const char *env, int *in_fd, int *out_fd,
			 child_setup_fn setup, void *arg)
{
	int in[2], out[2], ret;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (env)
			putenv((char *)env);
		if (setup && (ret = setup(arg)))
			_exit(ret);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0) {
		close(in[1]);
		close(out[0]);
		return -1;
	}
	*in_fd = in[1];
	*out_fd = out[0];
	return pid;
}

static pid_t spawn(const char *const argv[], const char *env, int *in_fd, int *out_fd)
{
	return spawn_setup(argv, env, in_fd, out_fd, NULL, NULL);
}

static void fixture_stop(struct fixture *fx)
{
	if (fx->pid <= 0)
		return;
	close(fx->in_fd);
	waitpid(fx->pid, NULL, 0);
	fx->pid = 0;
}

/* Starts argv[0] and waits until it is ready. */
static void fixture_start_argv(struct fixture *fx, const char *const argv[], const char *env)
{
	int out_fd, ret;

	fx->pid = spawn(argv, env, &fx->in_fd, &out_fd);
	assert_true(fx->pid > 0);
	ret = read_output(out_fd, &fx->out);
	close(out_fd);
	if (ret) {
		kill(fx->pid, SIGKILL);
		fixture_stop(fx);
		fail_msg("fixture %s %s did not start", argv[0], argv[1] ? argv[1] : "");
	}
}

/* Starts exe, dlopening lib if not NULL. */
static void fixture_start(struct fixture *fx, const char *exe, const char *lib, const char *env)
{
	char exe_path[PATH_MAX], lib_path[PATH_MAX];
	const char *argv[3] = {fixture_path(exe, exe_path, sizeof(exe_path)), NULL, NULL};

	need_fixture(exe);
	if (lib) {
		need_fixture(lib);
		argv[1] = fixture_path(lib, lib_path, sizeof(lib_path));
	}
	fixture_start_argv(fx, argv, env);
}

static int mem_read_u64(int pid, uint64_t addr, uint64_t *val)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = pread(fd, val, sizeof(*val), addr) == sizeof(*val) ? 0 : -EFAULT;
	close(fd);
	return ret;
}

static int mem_write(int pid, uint64_t addr, const void *buf, size_t len)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = pwrite(fd, buf, len, addr) == (ssize_t)len ? 0 : -EFAULT;
	close(fd);
	return ret;
}

enum apply_result { APPLY_OK, APPLY_UNALLOCATED, APPLY_FAULT, APPLY_PENDING };

static enum apply_result dtv_apply(int pid, const struct lp_tls_ref *r, uint64_t tp, uint64_t modid,
				   uint64_t offset, uint64_t *addr)
{
	uint64_t dtv, count, block;

	if (mem_read_u64(pid, tp + r->dtv_tp_offset, &dtv))
		return APPLY_FAULT;
	if (r->dtv_flags & LP_DTV_GLIBC) {
		if (mem_read_u64(pid, dtv - r->dtv_entry_size, &count))
			return APPLY_FAULT;
		if (modid > count)
			return APPLY_UNALLOCATED;
	}
	if (mem_read_u64(pid, dtv + modid * r->dtv_entry_size, &block))
		return APPLY_FAULT;
	if ((r->dtv_flags & LP_DTV_GLIBC) && block == UINT64_MAX)
		return APPLY_UNALLOCATED;
	*addr = block + offset;
	return APPLY_OK;
}

/* The recipe applied to a thread pointer, as the BPF program does it. */
static enum apply_result recipe_apply(int pid, const struct lp_recipe *recipe, uint64_t tp,
				      uint64_t *addr)
{
	const struct lp_tls_ref *r = &recipe->labels;
	uint64_t desc[2], ti[2];

	if (r->access == LP_TLS_TP_OFFSET) {
		*addr = tp + r->offset;
		return APPLY_OK;
	}
	if (r->access == LP_TLS_DTV)
		return dtv_apply(pid, r, tp, r->dtv_modid, r->offset, addr);
	assert_int_equal(r->access, LP_TLS_TLSDESC);
	if (mem_read_u64(pid, r->tlsdesc_addr, &desc[0]) ||
	    mem_read_u64(pid, r->tlsdesc_addr + 8, &desc[1]))
		return APPLY_FAULT;
	if (!desc[1])
		return APPLY_PENDING;
	if ((int64_t)desc[1] < LP_TLSDESC_STATIC_MAX) {
		*addr = tp + desc[1] + r->offset;
		return APPLY_OK;
	}
	if (mem_read_u64(pid, desc[1], &ti[0]) || mem_read_u64(pid, desc[1] + 8, &ti[1]))
		return APPLY_FAULT;
	return dtv_apply(pid, r, tp, ti[0], ti[1] + r->offset, addr);
}

/* ---- live cases ----------------------------------------------------------- */

enum tp2_check { TP2_ANY, TP2_UNALLOCATED };

struct live_case {
	const char *exe;
	const char *lib; /* dlopen'd, or NULL */
	const char *env;
	uint32_t form;
	uint32_t tls_case; /* 0: any case */
	uint32_t libc;
	enum tp2_check tp2;
};

/* glibc then gives dlopen'd libraries dynamic TLS only. */
#define NO_STATIC_TLS "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0"

#define V0     LP_FORM_CUSTOM_LABELS_V0
#define V1     LP_FORM_CUSTOM_LABELS_V1
#define GLIBC  TLS_LIBC_GLIBC
#define MUSL   TLS_LIBC_MUSL
#define NOLIBC TLS_LIBC_UNKNOWN /* static executables */
#define EXE(exe, form, tls_case, libc)                                                             \
	{                                                                                          \
		exe, NULL, NULL, form, tls_case, libc, TP2_ANY                                     \
	}
#define LIB(exe, lib, env, form, tls_case, libc, tp2)                                              \
	{                                                                                          \
		exe, lib, env, form, tls_case, libc, tp2                                           \
	}

static const struct live_case live_cases[] = {
	/* 1. the executable's own static TLS */
	EXE("exe-gcc-pie-v1", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-pie-v0", V0, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-nopie-v1", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-nopie-v0", V0, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-pie-v1-symtab", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-static-v1", V1, TLS_CASE_EXE_STATIC, NOLIBC),
	EXE("exe-gcc-staticpie-v1", V1, TLS_CASE_EXE_STATIC, NOLIBC),
	EXE("exe-gcc-static-v1-a64", V1, TLS_CASE_EXE_STATIC, NOLIBC),
	EXE("exe-gcc-static-v1-a4096", V1, TLS_CASE_EXE_STATIC, NOLIBC),
	EXE("exe-gcc-pie-v1-a8", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-pie-v1-a16", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-pie-v1-a64", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-gcc-pie-v1-a4096", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-clang-pie-v1", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-clang-nopie-v0", V0, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-clang-pie-v1-a4096", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-clang-lld-pie-v1-a64", V1, TLS_CASE_EXE_STATIC, GLIBC),
	EXE("exe-clang-lld-pie-v1-a4096", V1, TLS_CASE_EXE_STATIC, GLIBC),
#ifdef __x86_64__
	/* tests/tls/build.mk builds the musl fixtures on x86-64 hosts */
	EXE("exe-musl-static-v1", V1, TLS_CASE_EXE_STATIC, NOLIBC),
	EXE("exe-musl-static-v1-a4096", V1, TLS_CASE_EXE_STATIC, NOLIBC),
	EXE("exe-musl-pie-v1", V1, TLS_CASE_EXE_STATIC, MUSL),
#endif
	/* 2. a library loaded at startup */
	EXE("exe-gcc-linked-desc", V1, TLS_CASE_TLSDESC_STATIC, GLIBC),
	EXE("exe-gcc-linked-desc-a4096", V1, TLS_CASE_TLSDESC_STATIC, GLIBC),
	EXE("exe-gcc-linked-ie", V1, TLS_CASE_TPOFF, GLIBC),
	EXE("exe-gcc-linked-gd", V1, TLS_CASE_DTPMOD, GLIBC),
#ifdef __x86_64__
	EXE("exe-musl-linked-desc", V1, TLS_CASE_TLSDESC_STATIC, MUSL),
#endif
	/* 3. dlopen'd TLSDESC: static TLS surplus (or dynamic when it does not fit) */
	LIB("exe-gcc-plain", "lib-desc-v1.so", NULL, V1, TLS_CASE_TLSDESC_STATIC, GLIBC, TP2_ANY),
	LIB("exe-gcc-plain", "lib-desc-v0.so", NULL, V0, TLS_CASE_TLSDESC_STATIC, GLIBC, TP2_ANY),
	LIB("exe-gcc-plain", "lib-desc-v1-a64.so", NULL, V1, 0, GLIBC, TP2_ANY),
	LIB("exe-gcc-plain", "lib-desc-v1-a4096.so", NULL, V1, 0, GLIBC, TP2_ANY),
	LIB("exe-gcc-plain", "lib-hidden-desc-v1-a64.so", NULL, V1, 0, GLIBC, TP2_ANY),
	LIB("exe-gcc-plain", "lib-ie-v1.so", NULL, V1, TLS_CASE_TPOFF, GLIBC, TP2_ANY),
	/* ... and dynamic TLS, glibc's dynamic resolver */
	LIB("exe-gcc-plain", "lib-desc-v1.so", NO_STATIC_TLS, V1, TLS_CASE_TLSDESC_DYNAMIC, GLIBC,
	    TP2_UNALLOCATED),
	LIB("exe-gcc-plain", "lib-desc-v1-a4096.so", NO_STATIC_TLS, V1, TLS_CASE_TLSDESC_DYNAMIC,
	    GLIBC, TP2_UNALLOCATED),
	LIB("exe-gcc-plain", "lib-hidden-desc-v1-a64.so", NO_STATIC_TLS, V1,
	    TLS_CASE_TLSDESC_DYNAMIC, GLIBC, TP2_UNALLOCATED),
#ifdef __x86_64__
	LIB("exe-musl-plain", "mlib-desc-v1.so", NULL, V1, TLS_CASE_TLSDESC_DYNAMIC, MUSL, TP2_ANY),
#endif
	/* 4. dlopen'd general-dynamic: DTV walk */
	LIB("exe-gcc-plain", "lib-gd-v1.so", NULL, V1, TLS_CASE_DTPMOD, GLIBC, TP2_UNALLOCATED),
	LIB("exe-gcc-plain", "lib-gd-v0.so", NULL, V0, TLS_CASE_DTPMOD, GLIBC, TP2_UNALLOCATED),
	LIB("exe-gcc-plain", "lib-gd-v1-a64.so", NULL, V1, TLS_CASE_DTPMOD, GLIBC, TP2_UNALLOCATED),
	LIB("exe-gcc-plain", "lib-hidden-gd-v1-a64.so", NULL, V1, TLS_CASE_DTPMOD, GLIBC,
	    TP2_UNALLOCATED),
	LIB("exe-gcc-plain", "lib-clang-gd-v1.so", NULL, V1, TLS_CASE_DTPMOD, GLIBC,
	    TP2_UNALLOCATED),
#ifdef __x86_64__
	LIB("exe-musl-plain", "mlib-gd-v1.so", NULL, V1, TLS_CASE_DTPMOD, MUSL, TP2_ANY),
	LIB("exe-musl-plain", "mlib-gd-v1-a64.so", NULL, V1, TLS_CASE_DTPMOD, MUSL, TP2_ANY),
#endif
	/* both forms in one process: v1 (the library's) wins over the executable's v0 */
	LIB("exe-gcc-pie-v0", "lib-desc-v1.so", NULL, V1, TLS_CASE_TLSDESC_STATIC, GLIBC, TP2_ANY),
	LIB("exe-gcc-pie-v0", "lib-gd-v1.so", NULL, V1, TLS_CASE_DTPMOD, GLIBC, TP2_UNALLOCATED),
};

static void check_live_case(const struct live_case *c, struct tls_cache *cache)
{
	struct lp_recipe recipe;
	struct tls_diag diag;
	enum apply_result res;
	uint64_t addr = 0;
	struct fixture fx;
	int ret;

	fixture_start(&fx, c->exe, c->lib, c->env);
	ret = resolve_process(cache, fx.pid, &recipe, &diag);
	if (ret || recipe.form != c->form || (c->tls_case && diag.tls_case != c->tls_case) ||
	    diag.libc != c->libc) {
		fixture_stop(&fx);
		fail_msg("%s %s: ret %d form %u case %u libc %u (%s: %s)", c->exe,
			 c->lib ? c->lib : "", ret, recipe.form, diag.tls_case, diag.libc,
			 diag.object, diag.msg);
	}
	ret = mem_read_u64(fx.pid, fx.out.tp1, &addr);
	if (ret) {
		fixture_stop(&fx);
		fail_msg("%s: /proc/PID/mem of our own child: %s", c->exe, strerror(-ret));
	}
	/* Main thread, and a second thread that touched its label object. */
	res = recipe_apply(fx.pid, &recipe, fx.out.tp, &addr);
	if (res != APPLY_OK || addr != fx.out.addr)
		goto fail;
	res = recipe_apply(fx.pid, &recipe, fx.out.tp1, &addr);
	if (res != APPLY_OK || addr != fx.out.addr1)
		goto fail;
	/* A third thread never touched it: dynamic TLS stays unallocated in glibc. */
	res = recipe_apply(fx.pid, &recipe, fx.out.tp2, &addr);
	if (c->tp2 == TP2_UNALLOCATED && res != APPLY_UNALLOCATED)
		goto fail;
	if (c->tp2 == TP2_ANY && res == APPLY_FAULT)
		goto fail;
	fixture_stop(&fx);
	return;
fail:
	fixture_stop(&fx);
	fail_msg("%s %s: recipe access %u offset %" PRId64 " modid %" PRIu64 " gives %#" PRIx64
		 " (result %d), fixture says tp %#" PRIx64 " addr %#" PRIx64 " / tp1 %#" PRIx64
		 " addr1 %#" PRIx64 " (%s)",
		 c->exe, c->lib ? c->lib : "", recipe.labels.access, (int64_t)recipe.labels.offset,
		 (uint64_t)recipe.labels.dtv_modid, addr, res, fx.out.tp, fx.out.addr, fx.out.tp1,
		 fx.out.addr1, diag.msg);
}

static void test_live_cases(void **state)
{
	struct tls_cache *cache = tls_cache__new(TLS_CACHE_DEFAULT_ENTRIES);
	size_t i;

	assert_non_null(cache);
	for (i = 0; i < sizeof(live_cases) / sizeof(live_cases[0]); i++) {
		const struct live_case *c = &live_cases[i];

		check_live_case(c, cache);
		/* Once more, from the cache. */
		check_live_case(c, cache);
	}
	tls_cache__free(cache);
}

static void test_no_labels(void **state)
{
	struct lp_recipe recipe;
	struct tls_diag diag;
	struct fixture fx;

	fixture_start(&fx, "exe-gcc-plain", NULL, NULL);
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, &diag), 0);
	fixture_stop(&fx);
	assert_int_equal(recipe.form, LP_FORM_NONE);
	assert_int_equal(recipe.labels.access, LP_TLS_NONE);
	assert_int_equal(diag.tls_case, TLS_CASE_NONE);
	/* And this process (a cmocka test) publishes none either. */
	assert_int_equal(resolve_process(NULL, getpid(), &recipe, NULL), 0);
	assert_int_equal(recipe.form, LP_FORM_NONE);
}

static void test_unknown_version(void **state)
{
	struct lp_recipe recipe;
	struct tls_diag diag;
	struct fixture fx;

	fixture_start(&fx, "exe-gcc-pie-v7", NULL, NULL);
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, &diag), 0);
	fixture_stop(&fx);
	assert_int_equal(recipe.form, LP_FORM_NONE);
	assert_non_null(strstr(diag.msg, "version 7"));
	assert_non_null(strstr(diag.object, "exe-gcc-pie-v7"));
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		ret = -1;
	while (!ret && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			ret = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

struct ns_setup {
	const char *dir;       /* a private tmpfs is mounted here */
	const char *src, *dst; /* and src copied into it as dst */
};

static int enter_private_tmpfs(void *arg)
{
	const struct ns_setup *ns = arg;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", ns->dir, "tmpfs", 0, NULL))
		return 77;
	return copy_file(ns->src, ns->dst) ? 78 : 0;
}

/*
 * A library only visible in the process's own mount namespace: the resolver
 * must open it through /proc/PID/root. Needs the right to create one.
 */
static void test_mount_namespace(void **state)
{
	char dir[] = "/tmp/labelprof-ns-XXXXXX", src[PATH_MAX], dst[PATH_MAX], exe[PATH_MAX];
	const char *argv[] = {fixture_path("exe-gcc-plain", exe, sizeof(exe)), dst, NULL};
	struct ns_setup ns = {.dir = dir, .src = src, .dst = dst};
	struct lp_recipe recipe;
	struct tls_diag diag;
	struct fixture fx;
	uint64_t addr;
	int out_fd, ret, status;

	if (geteuid())
		skip_because("a mount namespace of its own needs root");
	need_fixture("exe-gcc-plain");
	need_fixture("lib-desc-v1.so");
	assert_non_null(mkdtemp(dir));
	fixture_path("lib-desc-v1.so", src, sizeof(src));
	snprintf(dst, sizeof(dst), "%s/lib-ns.so", dir);
	fx.pid = spawn_setup(argv, NULL, &fx.in_fd, &out_fd, enter_private_tmpfs, &ns);
	assert_true(fx.pid > 0);
	ret = read_output(out_fd, &fx.out);
	close(out_fd);
	if (ret) {
		close(fx.in_fd);
		waitpid(fx.pid, &status, 0);
		rmdir(dir);
		fail_msg("fixture in a mount namespace did not start (status %#x%s)", status,
			 WIFEXITED(status) && WEXITSTATUS(status) == 77 ? ": no mount namespace"
									: "");
	}
	/* Not visible from here. */
	assert_int_equal(access(dst, F_OK), -1);
	ret = resolve_process(NULL, fx.pid, &recipe, &diag);
	assert_int_equal(ret, 0);
	assert_int_equal(recipe.form, LP_FORM_CUSTOM_LABELS_V1);
	assert_string_equal(diag.object, dst);
	assert_int_equal(recipe_apply(fx.pid, &recipe, fx.out.tp, &addr), APPLY_OK);
	assert_int_equal(addr, fx.out.addr);
	fixture_stop(&fx);
	rmdir(dir);
}

/* A library deleted after loading (an upgrade): reachable through map_files only. */
static void test_deleted_library(void **state)
{
	char dir[] = "/tmp/labelprof-del-XXXXXX", lib[PATH_MAX], src[PATH_MAX], exe[PATH_MAX];
	const char *argv[] = {fixture_path("exe-gcc-plain", exe, sizeof(exe)), lib, NULL};
	struct lp_recipe recipe;
	struct tls_diag diag;
	struct fixture fx;
	uint64_t addr;
	int out_fd;

	if (geteuid())
		skip_because("a deleted library is opened through /proc/PID/map_files: needs root");
	need_fixture("exe-gcc-plain");
	need_fixture("lib-desc-v1.so");
	assert_non_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/lib-deleted.so", dir);
	assert_int_equal(copy_file(fixture_path("lib-desc-v1.so", src, sizeof(src)), lib), 0);
	fx.pid = spawn(argv, NULL, &fx.in_fd, &out_fd);
	assert_true(fx.pid > 0);
	assert_int_equal(read_output(out_fd, &fx.out), 0);
	close(out_fd);
	unlink(lib);
	rmdir(dir);

	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, &diag), 0);
	if (recipe.form != LP_FORM_CUSTOM_LABELS_V1) {
		fixture_stop(&fx);
		fail_msg("deleted library: form %u (%s)", recipe.form, diag.msg);
	}
	assert_string_equal(diag.object, lib);
	assert_int_equal(recipe_apply(fx.pid, &recipe, fx.out.tp, &addr), APPLY_OK);
	assert_int_equal(addr, fx.out.addr);
	fixture_stop(&fx);
}

/* ld.so run as a command: /proc/PID/exe is the dynamic linker, not the program. */
static void test_ldso_command(void **state)
{
	static const char ldso[] = NATIVE_LDSO;
	char exe[PATH_MAX];
	const char *argv[] = {ldso, fixture_path("exe-gcc-pie-v1", exe, sizeof(exe)), NULL};
	struct lp_recipe recipe;
	struct tls_diag diag;
	struct fixture fx;
	uint64_t addr;

	assert_int_equal(access(ldso, X_OK), 0);
	need_fixture("exe-gcc-pie-v1");
	fixture_start_argv(&fx, argv, NULL);
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, &diag), 0);
	assert_int_equal(recipe.form, LP_FORM_CUSTOM_LABELS_V1);
	assert_int_equal(diag.tls_case, TLS_CASE_EXE_STATIC);
	assert_int_equal(recipe_apply(fx.pid, &recipe, fx.out.tp, &addr), APPLY_OK);
	assert_int_equal(addr, fx.out.addr);
	fixture_stop(&fx);
}

static void test_process_gone(void **state)
{
	struct lp_recipe recipe;
	struct tls_diag diag;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	assert_int_equal(resolve_process(NULL, pid, &recipe, &diag), -ESRCH);
	assert_int_equal(recipe.form, LP_FORM_NONE);
}

/* Where an object is mapped: its load bias (first mapping at offset 0). */
static uint64_t object_base(int pid, const char *name)
{
	char path[64], line[PATH_MAX + 128];
	uint64_t start = 0, off;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, name))
			continue;
		if (sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64, &start, &off) == 2 && off == 0)
			break;
		start = 0;
	}
	fclose(f);
	assert_true(start != 0);
	return start;
}

static uint64_t reloc_slot(const char *lib, uint32_t kind)
{
	struct tls_file_info info;
	char path[PATH_MAX], err[256];
	uint32_t i;

	assert_int_equal(
		tls__inspect_file(fixture_path(lib, path, sizeof(path)), &info, err, sizeof(err)),
		0);
	for (i = 0; i < info.nr_relocs; i++)
		if (info.relocs[i].kind == kind)
			return info.relocs[i].r_offset;
	fail_msg("%s has no relocation of kind %u", lib, kind);
	return 0;
}

/*
 * A descriptor the dynamic linker has not resolved yet: simulated by writing
 * the states a lazy or unrelocated descriptor has into the child's GOT.
 */
static void check_lazy(const char *env)
{
	struct lp_recipe recipe, again;
	struct fixture fx;
	uint64_t slot, saved[2], word, base;
	int ret;

	fixture_start(&fx, "exe-gcc-plain", "lib-desc-v1.so", env);
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, NULL), 0);
	assert_int_equal(recipe.form, LP_FORM_CUSTOM_LABELS_V1);
	base = object_base(fx.pid, "lib-desc-v1.so");
	slot = base + reloc_slot("lib-desc-v1.so", TLS_RELOC_TLSDESC);
	ret = mem_read_u64(fx.pid, slot, &saved[0]);
	ret = ret ?: mem_read_u64(fx.pid, slot + 8, &saved[1]);
	ret = ret ?: mem_write(fx.pid, slot, &saved[0], 8);
	if (ret) {
		fixture_stop(&fx);
		fail_msg("/proc/PID/mem of our own child: %s", strerror(-ret));
	}

	/* Not relocated: the resolver word is still 0. */
	word = 0;
	assert_int_equal(mem_write(fx.pid, slot, &word, 8), 0);
	ret = resolve_process(NULL, fx.pid, &again, NULL);
	assert_int_equal(ret, -EAGAIN);
	assert_int_equal(again.form, LP_FORM_NONE);
	/* Being resolved: the argument is the descriptor itself. */
	assert_int_equal(mem_write(fx.pid, slot, &saved[0], 8), 0);
	assert_int_equal(mem_write(fx.pid, slot + 8, &slot, 8), 0);
	assert_int_equal(resolve_process(NULL, fx.pid, &again, NULL), -EAGAIN);
	/* Lazy: the argument points at the relocation, in read-only memory. */
	assert_int_equal(mem_write(fx.pid, slot + 8, &base, 8), 0);
	assert_int_equal(resolve_process(NULL, fx.pid, &again, NULL), -EAGAIN);
	/* Resolved again. */
	assert_int_equal(mem_write(fx.pid, slot + 8, &saved[1], 8), 0);
	assert_int_equal(resolve_process(NULL, fx.pid, &again, NULL), 0);
	assert_memory_equal(&again, &recipe, sizeof(recipe));
	fixture_stop(&fx);
}

/*
 * A library mapped but not relocated yet (both descriptor words 0): the
 * recipe points BPF at the descriptor, which then finds the right address
 * as soon as the loader fills it in, static or dynamic TLS alike.
 */
static void check_pending(const char *env)
{
	struct lp_recipe recipe, pending;
	struct tls_diag diag;
	struct fixture fx;
	uint64_t slot, saved[2], zero[2] = {}, addr;
	int ret;

	fixture_start(&fx, "exe-gcc-plain", "lib-desc-v1.so", env);
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, NULL), 0);
	slot = object_base(fx.pid, "lib-desc-v1.so") + reloc_slot("lib-desc-v1.so", TLS_RELOC_TLSDESC);
	ret = mem_read_u64(fx.pid, slot, &saved[0]);
	ret = ret ?: mem_read_u64(fx.pid, slot + 8, &saved[1]);
	ret = ret ?: mem_write(fx.pid, slot, zero, sizeof(zero));
	if (ret) {
		fixture_stop(&fx);
		fail_msg("/proc/PID/mem of our own child: %s", strerror(-ret));
	}
	assert_int_equal(resolve_process(NULL, fx.pid, &pending, &diag), 0);
	assert_int_equal(pending.form, LP_FORM_CUSTOM_LABELS_V1);
	assert_int_equal(pending.labels.access, LP_TLS_TLSDESC);
	assert_int_equal(diag.tls_case, TLS_CASE_TLSDESC_PENDING);
	assert_int_equal(pending.labels.tlsdesc_addr, slot);
	assert_int_equal(recipe_apply(fx.pid, &pending, fx.out.tp, &addr), APPLY_PENDING);

	/* the loader relocates: the same recipe now leads to the variable */
	assert_int_equal(mem_write(fx.pid, slot, saved, sizeof(saved)), 0);
	assert_int_equal(recipe_apply(fx.pid, &pending, fx.out.tp, &addr), APPLY_OK);
	assert_int_equal(addr, fx.out.addr);
	assert_int_equal(recipe_apply(fx.pid, &pending, fx.out.tp1, &addr), APPLY_OK);
	assert_int_equal(addr, fx.out.addr1);
	fixture_stop(&fx);
}

static void test_pending_tlsdesc_static(void **state)
{
	check_pending(NULL);
}

static void test_pending_tlsdesc_dynamic(void **state)
{
	check_pending(NO_STATIC_TLS);
}

static void test_lazy_tlsdesc_static(void **state)
{
	check_lazy(NULL);
}

static void test_lazy_tlsdesc_dynamic(void **state)
{
	check_lazy(NO_STATIC_TLS);
}

static void test_unrelocated_dtpmod(void **state)
{
	struct lp_recipe recipe;
	struct fixture fx;
	uint64_t slot, saved, zero = 0;
	int ret;

	fixture_start(&fx, "exe-gcc-plain", "lib-gd-v1.so", NULL);
	slot = object_base(fx.pid, "lib-gd-v1.so") + reloc_slot("lib-gd-v1.so", TLS_RELOC_DTPMOD);
	ret = mem_read_u64(fx.pid, slot, &saved);
	ret = ret ?: mem_write(fx.pid, slot, &zero, 8);
	if (ret) {
		fixture_stop(&fx);
		fail_msg("/proc/PID/mem of our own child: %s", strerror(-ret));
	}
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, NULL), -EAGAIN);
	assert_int_equal(mem_write(fx.pid, slot, &saved, 8), 0);
	assert_int_equal(resolve_process(NULL, fx.pid, &recipe, NULL), 0);
	assert_int_equal(recipe.labels.dtv_modid, saved);
	fixture_stop(&fx);
}

/* ---- cache ---------------------------------------------------------------- */

static void test_cache_hits(void **state)
{
	struct tls_cache *cache = tls_cache__new(64);
	struct tls_cache_stats s1, s2;
	struct lp_recipe r1, r2;
	struct fixture fx;

	assert_non_null(cache);
	fixture_start(&fx, "exe-gcc-linked-desc", NULL, NULL);
	assert_int_equal(resolve_process(cache, fx.pid, &r1, NULL), 0);
	tls_cache__stats(cache, &s1);
	assert_true(s1.misses >= 3); /* exe, its library, libc, ... */
	assert_int_equal(s1.entries, s1.misses);
	assert_int_equal(resolve_process(cache, fx.pid, &r2, NULL), 0);
	tls_cache__stats(cache, &s2);
	assert_int_equal(s2.misses, s1.misses);
	assert_int_equal(s2.hits, s1.hits + s1.misses);
	assert_memory_equal(&r1, &r2, sizeof(r1));
	fixture_stop(&fx);
	tls_cache__free(cache);
}

static void test_cache_eviction(void **state)
{
	struct tls_cache *cache = tls_cache__new(1);
	struct tls_cache_stats s;
	struct lp_recipe r;
	struct fixture fx;
	int i;

	assert_non_null(cache);
	fixture_start(&fx, "exe-gcc-linked-desc", NULL, NULL);
	for (i = 0; i < 3; i++) {
		assert_int_equal(resolve_process(cache, fx.pid, &r, NULL), 0);
		assert_int_equal(r.form, LP_FORM_CUSTOM_LABELS_V1);
	}
	tls_cache__stats(cache, &s);
	assert_int_equal(s.entries, 1);
	assert_true(s.evictions > 0);
	fixture_stop(&fx);
	tls_cache__free(cache);
	assert_null(tls_cache__new(0));
	tls_cache__free(NULL);
}

/* A changed file (same inode, new mtime) is inspected again. */
static void test_cache_invalidation(void **state)
{
	char dir[] = "/tmp/labelprof-tls-XXXXXX", lib[PATH_MAX + 32], src[PATH_MAX];
	struct tls_cache *cache = tls_cache__new(64);
	struct tls_cache_stats s1, s2;
	struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
	const char *argv[3];
	struct lp_recipe r;
	struct fixture fx;
	char exe[PATH_MAX];
	int out_fd;

	need_fixture("exe-gcc-plain");
	need_fixture("lib-desc-v1.so");
	assert_non_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/lib-copy.so", dir);
	assert_int_equal(copy_file(fixture_path("lib-desc-v1.so", src, sizeof(src)), lib), 0);
	argv[0] = fixture_path("exe-gcc-plain", exe, sizeof(exe));
	argv[1] = lib;
	argv[2] = NULL;
	fx.pid = spawn(argv, NULL, &fx.in_fd, &out_fd);
	assert_true(fx.pid > 0);
	assert_int_equal(read_output(out_fd, &fx.out), 0);
	close(out_fd);

	assert_int_equal(resolve_process(cache, fx.pid, &r, NULL), 0);
	assert_int_equal(r.form, LP_FORM_CUSTOM_LABELS_V1);
	tls_cache__stats(cache, &s1);
	assert_int_equal(utimensat(AT_FDCWD, lib, times, 0), 0);
	assert_int_equal(resolve_process(cache, fx.pid, &r, NULL), 0);
	assert_int_equal(r.form, LP_FORM_CUSTOM_LABELS_V1);
	tls_cache__stats(cache, &s2);
	assert_int_equal(s2.misses, s1.misses + 1);
	assert_int_equal(s2.entries, s1.entries);

	fixture_stop(&fx);
	unlink(lib);
	rmdir(dir);
	tls_cache__free(cache);
}

/* ---- file level ----------------------------------------------------------- */

static void test_names(void **state)
{
	assert_string_equal(tls__form_name(LP_FORM_CUSTOM_LABELS_V0), "custom_labels_v0");
	assert_string_equal(tls__form_name(LP_FORM_CUSTOM_LABELS_V1), "custom_labels_v1");
	assert_null(tls__form_name(LP_FORM_NONE));
	assert_string_equal(tls__machine_name(EM_X86_64), "x86-64");
	assert_string_equal(tls__machine_name(EM_AARCH64), "aarch64");
	assert_null(tls__machine_name(EM_386));
	assert_string_equal(tls__reloc_name(EM_X86_64, TLS_RELOC_DTPOFF), "R_X86_64_DTPOFF64");
	assert_string_equal(tls__reloc_name(EM_AARCH64, TLS_RELOC_TPOFF), "R_AARCH64_TLS_TPREL");
	assert_null(tls__reloc_name(EM_X86_64, 0));
	assert_null(tls__reloc_name(EM_X86_64, TLS_RELOC_DTPOFF + 1));
}

static void test_inspect_libraries(void **state)
{
	static const struct {
		const char *name;
		uint32_t form;
		uint32_t kind; /* a relocation kind that must be present */
	} libs[] = {
		{"lib-desc-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_TLSDESC},
		{"lib-desc-v0.so", LP_FORM_CUSTOM_LABELS_V0, TLS_RELOC_TLSDESC},
		{"lib-gd-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_DTPMOD},
		{"lib-gd-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_DTPOFF},
		{"lib-ie-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_TPOFF},
		{"lib-hidden-desc-v1-a64.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_TLSDESC},
		{"lib-hidden-gd-v1-a64.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_DTPMOD},
#ifdef __x86_64__
		/* cross-built on x86-64 hosts */
		{"a64-lib-desc-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_TLSDESC},
		{"a64-lib-gd-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_DTPMOD},
		{"a64-lib-gd-v1.so", LP_FORM_CUSTOM_LABELS_V1, TLS_RELOC_DTPOFF},
#endif
	};
	struct tls_file_info info;
	char path[PATH_MAX], err[256];
	size_t i;
	uint32_t k, hits;

	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		need_fixture(libs[i].name);
		assert_int_equal(tls__inspect_file(fixture_path(libs[i].name, path, sizeof(path)),
						   &info, err, sizeof(err)),
				 0);
		assert_int_equal(info.form, libs[i].form);
		assert_true(info.has_version && info.version_in_file && info.has_tls);
		assert_false(info.is_exe);
		for (k = 0, hits = 0; k < info.nr_relocs; k++) {
			hits += info.relocs[k].kind == libs[i].kind;
			assert_non_null(tls__reloc_name(info.machine, info.relocs[k].kind));
		}
		if (!hits)
			fail_msg("%s: no relocation of kind %u", libs[i].name, libs[i].kind);
		/* The hidden variants' relocations are against the block, not the symbol. */
		if (strstr(libs[i].name, "hidden"))
			for (k = 0; k < info.nr_relocs; k++)
				assert_true(info.relocs[k].local);
		/* ... and their symbols are only in .symtab */
		assert_int_equal(info.tls_sym_dynamic, !strstr(libs[i].name, "hidden"));
	}
}

static void test_inspect_executables(void **state)
{
	static const char *const exes[] = {
		"exe-gcc-pie-v1",     "exe-gcc-nopie-v1",
		"exe-gcc-static-v1",  "exe-gcc-staticpie-v1",
#ifdef __x86_64__
		"exe-musl-static-v1", /* musl fixtures: x86-64 hosts */
#endif
	};
	struct tls_file_info info;
	struct lp_recipe recipe;
	char path[PATH_MAX], err[256];
	size_t i;

	for (i = 0; i < sizeof(exes) / sizeof(exes[0]); i++) {
		need_fixture(exes[i]);
		assert_int_equal(tls__inspect_file(fixture_path(exes[i], path, sizeof(path)), &info,
						   err, sizeof(err)),
				 0);
		assert_true(info.is_exe);
		assert_int_equal(info.form, LP_FORM_CUSTOM_LABELS_V1);
		/* -rdynamic exports the symbols; static executables keep them in .symtab */
		assert_int_equal(info.tls_sym_dynamic, !strstr(exes[i], "static"));
		assert_int_equal(tls__exe_recipe(&info, &recipe), 0);
		assert_int_equal(recipe.labels.access, LP_TLS_TP_OFFSET);
#ifdef __x86_64__
		assert_true(recipe.labels.offset < 0); /* variant II */
#else
		assert_true(recipe.labels.offset >= 16); /* variant I */
#endif
	}
	/* libc publishes nothing: a quick negative. */
	assert_int_equal(tls__inspect_file(NATIVE_LIBC, &info, err, sizeof(err)), 0);
	assert_int_equal(info.form, LP_FORM_NONE);
	assert_false(info.is_exe);
	assert_int_equal(tls__exe_recipe(&info, &recipe), -ENOENT);
	need_fixture("exe-gcc-pie-v7");
	assert_int_equal(tls__inspect_file(fixture_path("exe-gcc-pie-v7", path, sizeof(path)),
					   &info, err, sizeof(err)),
			 0);
	assert_int_equal(info.form, LP_FORM_NONE);
	assert_int_equal(info.abi_version, 7);
}

static void test_inspect_errors(void **state)
{
	struct tls_file_info info;
	char err[256] = "";

	assert_true(tls__inspect_file("/nonexistent/file", &info, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/file"));
	assert_true(tls__inspect_file("/proc/self/status", &info, err, sizeof(err)) < 0);
	assert_true(tls__inspect_file("/etc/passwd", &info, err, sizeof(err)) < 0);
	assert_true(tls__inspect_file("/tmp", &info, err, sizeof(err)) < 0);
}

/*
 * The executable's block offset must match glibc's own arithmetic
 * (_dl_determine_tlsoffset, l_tls_firstbyte_offset), including TLS segments
 * whose p_vaddr is not aligned to p_align.
 */
static void test_exe_formula(void **state)
{
	static const uint64_t aligns[] = {1, 8, 16, 64, 4096};
	static const uint64_t memszs[] = {8, 24, 100, 4096, 5000};
	struct tls_file_info info = {.form = LP_FORM_CUSTOM_LABELS_V1, .has_tls = true};
	struct lp_recipe r;
	size_t a, m;
	uint64_t v;

	for (a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++) {
		uint64_t step = aligns[a] > 64 ? 1000 : 1;

		for (m = 0; m < sizeof(memszs) / sizeof(memszs[0]); m++) {
			for (v = 0; v < aligns[a]; v += step) {
				uint64_t al = aligns[a], fb = -v & (al - 1), off;

				info.tls_align = al;
				info.tls_memsz = memszs[m];
				info.tls_vaddr = 0x1000 * 7 + v;
				info.tls_value = 8;

				info.machine = EM_X86_64;
				assert_int_equal(tls__exe_recipe(&info, &r), 0);
				off = ((memszs[m] - fb + al - 1) & ~(al - 1)) + fb;
				assert_int_equal(r.labels.offset, 8 - (int64_t)off);

				info.machine = EM_AARCH64;
				assert_int_equal(tls__exe_recipe(&info, &r), 0);
				off = (16 + al - 1) & ~(al - 1);
				if (off - 16 < fb)
					off += al;
				assert_int_equal(r.labels.offset, (int64_t)(off - fb) + 8);
			}
		}
	}
	info.tls_align = 48; /* not a power of two */
	assert_int_equal(tls__exe_recipe(&info, &r), -EINVAL);
	info.tls_align = 8;
	info.has_tls = false;
	assert_int_equal(tls__exe_recipe(&info, &r), -EINVAL);
	info.has_tls = true;
	info.machine = EM_RISCV;
	assert_int_equal(tls__exe_recipe(&info, &r), -ENOTSUP);
}

#ifdef __x86_64__
/*
 * aarch64 fixtures are cross-built on x86-64 hosts (tests/tls/build.mk); an
 * aarch64 host runs its own fixtures natively in the tests above.
 */
/* Runs an aarch64 fixture under qemu-aarch64 and reads what it prints. */
static int run_qemu(const char *name, bool dynamic, struct fx_out *out)
{
	char path[PATH_MAX];
	const char *argv[5];
	int in_fd, out_fd, ret, i = 0;
	pid_t pid;

	argv[i++] = QEMU_AARCH64;
	if (dynamic) {
		argv[i++] = "-L";
		argv[i++] = AARCH64_SYSROOT;
	}
	argv[i++] = fixture_path(name, path, sizeof(path));
	argv[i] = NULL;
	pid = spawn(argv, NULL, &in_fd, &out_fd);
	if (pid < 0)
		return -1;
	ret = read_output(out_fd, out);
	if (ret)
		kill(pid, SIGKILL);
	close(in_fd);
	close(out_fd);
	waitpid(pid, NULL, 0);
	return ret;
}

static void test_aarch64(void **state)
{
	static const struct {
		const char *name;
		bool dynamic;
		uint32_t form;
	} exes[] = {
		{"a64-exe-static-v1-a8", false, LP_FORM_CUSTOM_LABELS_V1},
		{"a64-exe-static-v1-a16", false, LP_FORM_CUSTOM_LABELS_V1},
		{"a64-exe-static-v1-a64", false, LP_FORM_CUSTOM_LABELS_V1},
		{"a64-exe-static-v1-a4096", false, LP_FORM_CUSTOM_LABELS_V1},
		{"a64-exe-static-v0", false, LP_FORM_CUSTOM_LABELS_V0},
		{"a64-exe-pie-v1-a8", true, LP_FORM_CUSTOM_LABELS_V1},
		{"a64-exe-pie-v1-a64", true, LP_FORM_CUSTOM_LABELS_V1},
		{"a64-exe-pie-v1-a4096", true, LP_FORM_CUSTOM_LABELS_V1},
	};
	struct tls_file_info info;
	struct lp_recipe recipe;
	char path[PATH_MAX], err[256];
	size_t i;

	if (access(QEMU_AARCH64, X_OK) || access(AARCH64_SYSROOT, R_OK))
		fail_msg("%s or %s missing: make deps", QEMU_AARCH64, AARCH64_SYSROOT);
	for (i = 0; i < sizeof(exes) / sizeof(exes[0]); i++) {
		struct fx_out out;

		need_fixture(exes[i].name);
		assert_int_equal(tls__inspect_file(fixture_path(exes[i].name, path, sizeof(path)),
						   &info, err, sizeof(err)),
				 0);
		assert_int_equal(info.machine, EM_AARCH64);
		assert_true(info.is_exe);
		assert_int_equal(info.form, exes[i].form);
		assert_int_equal(tls__exe_recipe(&info, &recipe), 0);
		assert_int_equal(recipe.labels.access, LP_TLS_TP_OFFSET);
		/* Variant I: above the 16-byte TCB, at the segment's alignment. */
		assert_true(recipe.labels.offset >= 16);
		assert_int_equal((recipe.labels.offset - (int64_t)info.tls_value) %
					 (int64_t)(info.tls_align > 16 ? info.tls_align : 16),
				 0);
		if (run_qemu(exes[i].name, exes[i].dynamic, &out))
			fail_msg("%s did not run under qemu-aarch64", exes[i].name);
		assert_int_equal(out.tp + recipe.labels.offset, out.addr);
		assert_int_equal(out.tp1 + recipe.labels.offset, out.addr1);
	}
}
#endif

static int setup(void **state)
{
	return find_fixture_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exe_formula),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_inspect_libraries),
		cmocka_unit_test(test_inspect_executables),
		cmocka_unit_test(test_inspect_errors),
		cmocka_unit_test(test_live_cases),
		cmocka_unit_test(test_no_labels),
		cmocka_unit_test(test_unknown_version),
		cmocka_unit_test(test_ldso_command),
		cmocka_unit_test(test_deleted_library),
		cmocka_unit_test(test_mount_namespace),
		cmocka_unit_test(test_process_gone),
		cmocka_unit_test(test_lazy_tlsdesc_static),
		cmocka_unit_test(test_lazy_tlsdesc_dynamic),
		cmocka_unit_test(test_pending_tlsdesc_static),
		cmocka_unit_test(test_pending_tlsdesc_dynamic),
		cmocka_unit_test(test_unrelocated_dtpmod),
		cmocka_unit_test(test_cache_hits),
		cmocka_unit_test(test_cache_eviction),
		cmocka_unit_test(test_cache_invalidation),
#ifdef __x86_64__
		cmocka_unit_test(test_aarch64),
#endif
	};

	/* A fixture that dies early must not kill the test through SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, NULL);
}
