// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * container: runs a program the way a container runtime does, in a new mount
 * namespace and a new PID namespace, with a root of its own that only that
 * mount namespace sees.
 *
 *   container [-f SRC:DEST]... [-b DIR:DEST]... [-c] ROOT PROG [ARG...]
 *
 * ROOT is an empty directory. In the new mount namespace (nothing propagates
 * back) a tmpfs is mounted on it; each -f copies file SRC to DEST inside it,
 * each -b bind-mounts directory DIR on DEST (for the program's reports), and
 * a proc of the new PID namespace goes on /proc. Then the tmpfs becomes the
 * root, by pivot_root and unmounting the old one as runc does, or with -c by
 * chroot(2) only, and PROG (a path inside the new root) runs as pid 1.
 *
 * The launcher stays outside both namespaces, the program's parent: it
 * passes SIGINT and SIGTERM on and exits with the program's status. When it
 * dies the program is killed. Setup failures exit 125 with the step that
 * failed on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ITEMS 64

struct item {
	const char *src, *dest;
};

static struct {
	struct item files[MAX_ITEMS], binds[MAX_ITEMS];
	unsigned int nfiles, nbinds;
	bool chroot_only;
	const char *root;
	char **argv;
} env;

static pid_t child;

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	fputs("container: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(errno));
	exit(125);
}

static void usage(void)
{
	fprintf(stderr, "usage: container [-f SRC:DEST]... [-b DIR:DEST]... [-c] ROOT PROG "
			"[ARG...]\n");
	exit(2);
}

static struct item parse_item(char *arg)
{
	char *colon = strchr(arg, ':');

	if (!colon || colon == arg || colon[1] != '/')
		usage();
	*colon = '\0';
	return (struct item){arg, colon + 1};
}

/* ROOT + path inside the new root. */
static const char *in_root(const char *path)
{
	static char buf[PATH_MAX];

	if ((size_t)snprintf(buf, sizeof(buf), "%s%s", env.root, path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		fail("%s%s", env.root, path);
	}
	return buf;
}

/* mkdir -p of path's directory part (of path itself if dir). */
static void make_dirs(const char *path, bool dir)
{
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			fail("mkdir %s", buf);
		*p = '/';
	}
	if (dir && mkdir(buf, 0755) && errno != EEXIST)
		fail("mkdir %s", buf);
}

static void copy_file(const struct item *it)
{
	const char *dest = in_root(it->dest);
	char buf[1 << 16];
	struct stat st;
	int in, out;
	ssize_t n;

	in = open(it->src, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st))
		fail("%s", it->src);
	make_dirs(dest, false);
	out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
	if (out < 0)
		fail("%s", dest);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			fail("write %s", dest);
	if (n < 0)
		fail("read %s", it->src);
	close(in);
	if (close(out))
		fail("%s", dest);
}

/* pid 1 of the new PID namespace: builds the root and runs the program. */
static void __attribute__((noreturn)) run_inside(void)
{
	unsigned int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		fail("PR_SET_PDEATHSIG");
	if (unshare(CLONE_NEWNS))
		fail("unshare the mount namespace");
	/* Mounts made from here on stay in the new namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		fail("make / private");
	if (mount("container", env.root, "tmpfs", 0, "mode=0755"))
		fail("mount tmpfs on %s", env.root);
	for (i = 0; i < env.nfiles; i++)
		copy_file(&env.files[i]);
	for (i = 0; i < env.nbinds; i++) {
		const char *dest = in_root(env.binds[i].dest);

		make_dirs(dest, true);
		if (mount(env.binds[i].src, dest, NULL, MS_BIND, NULL))
			fail("bind %s on %s", env.binds[i].src, dest);
	}
	make_dirs(in_root("/proc"), true);
	if (mount("proc", in_root("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		fail("mount proc");
	if (chdir(env.root))
		fail("chdir %s", env.root);
	if (env.chroot_only) {
		if (chroot("."))
			fail("chroot %s", env.root);
	} else {
		/* The old root goes on top of the new one, then away: no path leads out. */
		if (syscall(SYS_pivot_root, ".", "."))
			fail("pivot_root %s", env.root);
		if (umount2(".", MNT_DETACH))
			fail("unmount the old root");
	}
	if (chdir("/"))
		fail("chdir /");
	execv(env.argv[0], env.argv);
	fail("exec %s", env.argv[0]);
}

static void pass_on(int sig)
{
	kill(child, sig);
}

int main(int argc, char **argv)
{
	struct clone_args args = {.flags = CLONE_NEWPID, .exit_signal = SIGCHLD};
	struct sigaction sa = {.sa_handler = pass_on};
	int c, status;

	while ((c = getopt(argc, argv, "+f:b:c")) != -1) {
		switch (c) {
		case 'f':
			if (env.nfiles == MAX_ITEMS)
				usage();
			env.files[env.nfiles++] = parse_item(optarg);
			break;
		case 'b':
			if (env.nbinds == MAX_ITEMS)
				usage();
			env.binds[env.nbinds++] = parse_item(optarg);
			break;
		case 'c':
			env.chroot_only = true;
			break;
		default:
			usage();
		}
	}
	if (argc - optind < 2 || argv[optind + 1][0] != '/')
		usage();
	env.root = argv[optind];
	env.argv = argv + optind + 1;

	/*
	 * A fork whose child is pid 1 of a new PID namespace. Not unshare(2):
	 * the launcher could fork no more once the namespace is gone (LeakSanitizer
	 * does at exit).
	 */
	child = syscall(SYS_clone3, &args, sizeof(args));
	if (child < 0)
		fail("clone a process into a new PID namespace");
	if (!child)
		run_inside();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			fail("waitpid");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
