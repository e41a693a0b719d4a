// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The threads of one process read by the BPF task iterator (labelprof
 * labels): the labelprof object loaded with read_threads alone, the
 * process's recipe installed, each read walking the threads as they are
 * then (sampler.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "labelprof.skel.h"
#include "lib/array.h"
#include "lib/msg.h"
#include "sampling/sampler.h"

/* What a read accepts from the iterator, at most: a record per thread. */
#define READ_THREADS_MAX_BYTES (256u << 20)

/* Everything the iterator writes, until it ends, into *buf (malloc'd, *cap bytes, kept). */
static int read_all(int fd, char **buf, size_t *cap, size_t *len)
{
	ssize_t n;

	*len = 0;
	for (;;) {
		if (*len == *cap) {
			if (*cap >= READ_THREADS_MAX_BYTES)
				return -E2BIG;
			if (ARRAY_RESERVE_MIN(*buf, *cap, *cap + 1, LP_SCRATCH_SIZE))
				return -ENOMEM;
		}
		n = read(fd, *buf + *len, *cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		*len += n;
	}
}

struct sampler_threads {
	struct labelprof_bpf *skel;
	struct bpf_link *link;
	char *buf; /* the last read's records */
	size_t cap;
};

struct sampler_threads *sampler__threads_open(__u32 tgid, const struct lp_recipe *r, bool verbose,
					      char *err, size_t err_len)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	struct sampler_threads *t;
	struct bpf_program *prog;
	int ncpus, ret;

	ret = sampler__check_system(err, err_len);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	sampler__libbpf_messages(verbose);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		msg__set(err, err_len, "cannot count CPUs: %s", strerror(-ncpus));
		errno = ncpus ? -ncpus : EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		msg__set(err, err_len, "out of memory");
		return NULL;
	}
	t->skel = labelprof_bpf__open();
	if (!t->skel) {
		ret = -errno;
		msg__set(err, err_len, "cannot open the BPF object: %s", strerror(errno));
		goto out_free;
	}
	bpf_object__for_each_program(prog, t->skel->obj)
		bpf_program__set_autoload(prog, prog == t->skel->progs.read_threads);
	bpf_map__set_max_entries(t->skel->maps.scratch, ncpus);
	/* the sampler's large maps come with the object but serve one process here */
	bpf_map__set_max_entries(t->skel->maps.recipes, 1);
	bpf_map__set_max_entries(t->skel->maps.execs, 1);
	bpf_map__set_max_entries(t->skel->maps.events, getpagesize());
	ret = labelprof_bpf__load(t->skel);
	if (ret) {
		msg__set(
			err, err_len,
			"cannot load the BPF task iterator: %s (kernel 6.1+ with BTF and sleepable "
			"iterators is needed; run with -vv for the verifier's log)",
			strerror(-ret));
		goto out_free;
	}
	if (bpf_map__update_elem(t->skel->maps.recipes, &tgid, sizeof(tgid), r, sizeof(*r),
				 BPF_ANY)) {
		ret = -errno;
		msg__set(err, err_len, "cannot install the recipe of pid %u: %s", tgid,
			 strerror(errno));
		goto out_free;
	}
	/* only the threads of tgid are walked */
	linfo.task.pid = tgid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	t->link = bpf_program__attach_iter(t->skel->progs.read_threads, &opts);
	if (!t->link) {
		ret = -errno;
		msg__set(err, err_len, "cannot attach the task iterator to pid %u: %s", tgid,
			 strerror(errno));
		goto out_free;
	}
	return t;

out_free:
	sampler__threads_close(t);
	errno = -ret;
	return NULL;
}

int sampler__threads_read(struct sampler_threads *t, sampler_event_fn fn, void *ctx, char *err,
			  size_t err_len)
{
	struct lp_event_hdr h;
	size_t len = 0, off;
	int iter_fd, ret;

	/* each iterator walks the threads anew */
	iter_fd = bpf_iter_create(bpf_link__fd(t->link));
	if (iter_fd < 0) {
		ret = -errno;
		msg__set(err, err_len, "cannot start the task iterator: %s", strerror(errno));
		return ret;
	}
	ret = read_all(iter_fd, &t->buf, &t->cap, &len);
	close(iter_fd);
	if (ret) {
		msg__set(err, err_len, "reading the task iterator: %s", strerror(-ret));
		return ret;
	}
	for (off = 0; off < len; off += h.size) {
		if (len - off < sizeof(h))
			break;
		memcpy(&h, t->buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		ret = fn(ctx, t->buf + off, h.size);
		if (ret) {
			msg__set(err, err_len, "%s", strerror(-ret));
			return ret;
		}
	}
	if (off != len) {
		msg__set(err, err_len, "malformed task iterator output at byte %zu", off);
		return -EPROTO;
	}
	return 0;
}

void sampler__threads_close(struct sampler_threads *t)
{
	if (!t)
		return;
	bpf_link__destroy(t->link);
	labelprof_bpf__destroy(t->skel);
	free(t->buf);
	free(t);
}

int sampler__read_threads(__u32 tgid, const struct lp_recipe *r, bool verbose, sampler_event_fn fn,
			  void *ctx, char *err, size_t err_len)
{
	struct sampler_threads *t = sampler__threads_open(tgid, r, verbose, err, err_len);
	int ret;

	if (!t)
		return -errno;
	ret = sampler__threads_read(t, fn, ctx, err, err_len);
	sampler__threads_close(t);
	return ret;
}
