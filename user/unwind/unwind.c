// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind tables in the BPF maps (docs/design.md section 9). Rows go into
 * pages of LP_UNWIND_PAGE_ROWS; an object takes consecutive pages, found
 * first-fit in a map of used pages; shards of LP_UNWIND_SHARD_PAGES pages are
 * created when a page in them is first used. An object is published in
 * unwind_objects only once its pages and fences are written, and is removed
 * from it before its pages are reused. A thread of its own derives and loads
 * the tables, in the order they were asked for: a large library takes tens of
 * milliseconds, which the caller's loop spends on follow-up inspections and
 * memory maps of processes that will not wait.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/clock.h"
#include "lib/elf.h"
#include "proc/maps.h"
#include "proc/root.h"
#include "unwind/table.h"
#include "unwind/unwind.h"

#define MAX_LOADS 8 /* PT_LOAD segments remembered per object */

struct uobj {
	__u32 id;
	unsigned char build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	__u32 first_page;
	__u32 pages; /* 0: not in BPF (no CFI, evicted, or failed) */
	__u32 rows;
	bool has_cfi;
	bool failed;
	__u64 last_used;
	struct unwind_table table; /* kept while the object has CFI, to load it again */
	size_t nloads;
	struct {
		__u64 offset, vaddr, filesz;
	} loads[MAX_LOADS];
};

enum request_kind { REQUEST_UPDATE, REQUEST_FORGET };

struct request {
	pid_t pid;
	enum request_kind kind;
	struct maps *maps; /* REQUEST_UPDATE: a reference to the process's maps */
};

struct unwind {
	struct unwind_maps maps;
	bool verbose;
	/*
	 * The queue, busy, stopping and published are under lock; every field
	 * after published belongs to the worker thread alone.
	 */
	pthread_t worker;
	bool worker_started;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* for the worker: requests, or stopping */
	pthread_cond_t idle; /* for unwind__wait_idle: the queue is done */
	struct request *queue;
	size_t queued, queue_cap;
	bool busy;     /* the worker handles a batch */
	bool stopping; /* unwind__free: the worker ends */
	struct unwind_stats published; /* st, as of the last request handled */

	struct uobj *objs;
	size_t nobjs, cap;
	__u32 next_id;
	__u64 clock; /* bumped per process update: the LRU's time */
	__u8 *used;  /* per global page */
	bool *shard_made;
	__u32 nshards;
	struct unwind_stats st;
	int shard_fd; /* the last shard written to, open; -1: none */
	__u32 shard_fd_of;
	long vdso; /* the index of ours, the image every process of our ABI maps; -1: none */
	size_t vdso_size;
	bool vdso_tried;
	struct lp_unwind_proc proc; /* the value being built */
};

static void *work(void *arg);

struct unwind *unwind__new(const struct unwind_maps *maps, bool verbose)
{
	struct unwind *u = calloc(1, sizeof(*u));
	sigset_t all, old;

	if (!u)
		return NULL;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	pthread_cond_init(&u->idle, NULL);
	u->maps = *maps;
	u->verbose = verbose;
	u->next_id = 1;
	u->shard_fd = -1;
	u->vdso = -1;
	u->nshards = (maps->pages + LP_UNWIND_SHARD_PAGES - 1) / LP_UNWIND_SHARD_PAGES;
	u->used = calloc(maps->pages ? maps->pages : 1, 1);
	u->shard_made = calloc(u->nshards ? u->nshards : 1, sizeof(bool));
	if (!u->used || !u->shard_made) {
		unwind__free(u);
		return NULL;
	}
	/* signals are for the caller's thread: its handlers stop its loop */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	u->worker_started = !pthread_create(&u->worker, NULL, work, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!u->worker_started) {
		unwind__free(u);
		return NULL;
	}
	return u;
}

void unwind__free(struct unwind *u)
{
	size_t i;

	if (!u)
		return;
	if (u->worker_started) {
		pthread_mutex_lock(&u->lock);
		__atomic_store_n(&u->stopping, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&u->wake);
		pthread_mutex_unlock(&u->lock);
		pthread_join(u->worker, NULL);
	}
	for (i = 0; i < u->queued; i++)
		maps__free(u->queue[i].maps);
	free(u->queue);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->wake);
	pthread_cond_destroy(&u->idle);
	for (i = 0; i < u->nobjs; i++)
		unwind_table__free(&u->objs[i].table);
	free(u->objs);
	if (u->shard_fd >= 0)
		close(u->shard_fd);
	free(u->used);
	free(u->shard_made);
	free(u);
}

/* Removes o's rows from BPF: unpublished first, so BPF never reads reused pages as o's. */
static void unload(struct unwind *u, struct uobj *o)
{
	if (!o->pages)
		return;
	bpf_map_delete_elem(u->maps.objects, &o->id);
	memset(u->used + o->first_page, 0, o->pages);
	u->st.objects--;
	u->st.rows -= o->rows;
	u->st.bytes -= (__u64)o->pages * sizeof(struct lp_unwind_page);
	o->pages = 0;
	/* a new id: a mapping list still naming the old one misses instead of reading new rows */
	o->id = u->next_id++;
}

/* First fit of n free pages; -1 if none. */
static long find_pages(const struct unwind *u, __u32 n)
{
	__u32 i, run = 0;

	for (i = 0; i < u->maps.pages; i++) {
		run = u->used[i] ? 0 : run + 1;
		if (run == n)
			return i + 1 - n;
	}
	return -1;
}

static int make_shard(struct unwind *u, __u32 shard)
{
	int fd, ret = 0;

	if (u->shard_made[shard])
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "lp_unwind_shard", sizeof(__u32),
			    sizeof(struct lp_unwind_page), LP_UNWIND_SHARD_PAGES, NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(u->maps.shards, &shard, &fd, BPF_ANY))
		ret = -errno;
	close(fd); /* the outer map keeps it */
	if (!ret) {
		u->shard_made[shard] = true;
		u->st.shard_bytes += LP_UNWIND_SHARD_PAGES * sizeof(struct lp_unwind_page);
	}
	return ret;
}

static int write_page(struct unwind *u, __u32 g, const struct lp_unwind_row *rows, size_t n)
{
	static struct lp_unwind_page page;
	__u32 shard = g / LP_UNWIND_SHARD_PAGES, slot = g % LP_UNWIND_SHARD_PAGES, map_id;
	int ret;
	size_t i;

	ret = make_shard(u, shard);
	if (ret)
		return ret;
	memcpy(page.rows, rows, n * sizeof(*rows));
	for (i = n; i < LP_UNWIND_PAGE_ROWS; i++)
		page.rows[i] = (struct lp_unwind_row){.pc = LP_UNWIND_PC_PAD};
	/* the outer map gives map ids: one open shard is kept, pages are written in order */
	if (u->shard_fd < 0 || u->shard_fd_of != shard) {
		if (u->shard_fd >= 0)
			close(u->shard_fd);
		u->shard_fd = -1;
		if (bpf_map_lookup_elem(u->maps.shards, &shard, &map_id))
			return -errno;
		u->shard_fd = bpf_map_get_fd_by_id(map_id);
		if (u->shard_fd < 0)
			return -errno;
		u->shard_fd_of = shard;
	}
	ret = bpf_map_update_elem(u->shard_fd, &slot, &page, BPF_ANY) ? -errno : 0;
	if (!ret && bpf_map_update_elem(u->maps.fences, &g, &rows[0].pc, BPF_ANY))
		ret = -errno;
	return ret;
}

/* Evicts the least recently used object other than keep; false if none has rows in BPF. */
static bool evict_one(struct unwind *u, const struct uobj *keep)
{
	struct uobj *lru = NULL;
	size_t i;

	for (i = 0; i < u->nobjs; i++) {
		struct uobj *o = &u->objs[i];

		if (o != keep && o->pages && (!lru || o->last_used < lru->last_used))
			lru = o;
	}
	if (!lru)
		return false;
	unload(u, lru);
	u->st.evictions++;
	return true;
}

static int load(struct unwind *u, struct uobj *o)
{
	__u32 n = (o->table.count + LP_UNWIND_PAGE_ROWS - 1) / LP_UNWIND_PAGE_ROWS, i;
	struct lp_unwind_object v;
	long first;
	int ret;

	if (!n || n > u->maps.pages)
		return -E2BIG;
	while ((first = find_pages(u, n)) < 0)
		if (!evict_one(u, o))
			return -ENOSPC;
	for (i = 0; i < n; i++) {
		size_t at = (size_t)i * LP_UNWIND_PAGE_ROWS, len = o->table.count - at;

		ret = write_page(u, first + i, o->table.rows + at,
				 len < LP_UNWIND_PAGE_ROWS ? len : LP_UNWIND_PAGE_ROWS);
		if (ret)
			return ret;
	}
	v = (struct lp_unwind_object){.first_page = first, .pages = n};
	if (bpf_map_update_elem(u->maps.objects, &o->id, &v, BPF_ANY))
		return -errno;
	memset(u->used + first, 1, n);
	o->first_page = first;
	o->pages = n;
	o->rows = o->table.count;
	u->st.objects++;
	u->st.rows += o->rows;
	u->st.bytes += (__u64)n * sizeof(struct lp_unwind_page);
	return 0;
}

/*
 * The separate debug file of ef, as pid sees it: by build id under
 * /usr/lib/debug/.build-id, else by .gnu_debuglink next to the object, in
 * its .debug/ and under /usr/lib/debug. -1 if none.
 */
static int open_debug_file(pid_t pid, const char *path, const unsigned char *id, size_t id_len,
			   const char *link)
{
	char p[4096 + 64 + 256], hex[2 * ELF_BUILD_ID_MAX + 1], dir[4096];
	const char *slash;
	struct stat st;
	int fd;

	if (id_len > 1) {
		for (size_t i = 0; i < id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		snprintf(p, sizeof(p), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		fd = proc_root__open(pid, p, &st);
		if (fd >= 0)
			return fd;
	}
	if (!link || strchr(link, '/') || strlen(link) > 255)
		return -1;
	slash = strrchr(path, '/');
	if (!slash || slash - path >= (long)sizeof(dir))
		return -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(p, sizeof(p), "%s/.debug/%s", dir, link);
	fd = proc_root__open(pid, p, &st);
	if (fd < 0) {
		snprintf(p, sizeof(p), "/usr/lib/debug%s/%s", dir, link);
		fd = proc_root__open(pid, p, &st);
	}
	if (fd < 0) {
		snprintf(p, sizeof(p), "%s/%s", dir, link);
		fd = proc_root__open(pid, p, &st);
	}
	return fd;
}

/* Derives o's table from the file open at fd. */
static void build(struct unwind *u, struct uobj *o, pid_t pid, const char *path, struct elf_file *ef)
{
	struct elf_file *dbg = NULL;
	char err[256];
	GElf_Phdr ph;
	__u64 t0 = now_ns();
	size_t i;
	int dfd = -1, ret;

	for (i = 0; i < elf_file__phnum(ef) && o->nloads < MAX_LOADS; i++)
		if (!elf_file__phdr(ef, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			o->loads[o->nloads].offset = ph.p_offset;
			o->loads[o->nloads].vaddr = ph.p_vaddr;
			o->loads[o->nloads].filesz = ph.p_filesz;
			o->nloads++;
		}
	if (!unwind_table__has_debug_frame(elf_file__elf(ef))) {
		dfd = open_debug_file(pid, path, o->build_id, o->build_id_len,
				      elf_file__debuglink(ef));
		if (dfd >= 0)
			dbg = elf_file__open_fd(dfd, path, NULL, 0);
	}
	ret = unwind_table__build(elf_file__elf(ef), dbg ? elf_file__elf(dbg) : NULL, &o->table,
				  err, sizeof(err));
	elf_file__close(dbg);
	if (dfd >= 0)
		close(dfd);
	u->st.builds++;
	u->st.build_ns += now_ns() - t0;
	if (ret) {
		o->failed = true;
		u->st.errors++;
		if (u->verbose)
			fprintf(stderr, "labelprof: %s: no unwind table: %s\n", path, err);
		return;
	}
	o->has_cfi = o->table.count > 0;
}

static struct uobj *new_obj(struct unwind *u)
{
	struct uobj *n;

	if (ARRAY_RESERVE_MIN(u->objs, u->cap, u->nobjs + 1, 64))
		return NULL;
	n = &u->objs[u->nobjs++];
	memset(n, 0, sizeof(*n));
	n->id = u->next_id++;
	return n;
}

/* The object of mapping e of pid, derived if new; NULL if the file cannot be read. */
static struct uobj *object_of(struct unwind *u, pid_t pid, const struct maps_entry *e)
{
	unsigned char id[ELF_BUILD_ID_MAX];
	struct elf_file *ef;
	struct uobj *o;
	struct stat st;
	size_t i, id_len;
	int fd;

	fd = proc_root__open_mapped(pid, e, &st);
	if (fd < 0)
		return NULL;
	for (i = 0; i < u->nobjs; i++) {
		o = &u->objs[i];
		if (o->dev == st.st_dev && o->ino == st.st_ino &&
		    o->mtime.tv_sec == st.st_mtim.tv_sec && o->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			return o;
		}
	}
	ef = elf_file__open_fd(fd, e->path, NULL, 0);
	if (!ef) {
		close(fd);
		return NULL;
	}
	id_len = elf_file__build_id(ef, id, sizeof(id));
	for (i = 0; id_len && i < u->nobjs; i++) {
		o = &u->objs[i];
		if (o->build_id_len == id_len && !memcmp(o->build_id, id, id_len))
			goto out;
	}
	o = new_obj(u);
	if (!o)
		goto out;
	memcpy(o->build_id, id, id_len);
	o->build_id_len = id_len;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->mtime = st.st_mtim;
	build(u, o, pid, e->path, ef);
out:
	elf_file__close(ef);
	close(fd);
	return o;
}

/*
 * The vdso's object: the kernel maps one image into every process of an
 * ABI, ours included, so its rows come from our own copy (a process's
 * mapping of another size is not ours: left to frame pointers).
 */
static struct uobj *vdso_object(struct unwind *u)
{
	const struct maps_entry *e = NULL;
	struct uobj *o = NULL;
	unsigned char *copy;
	struct maps *m;
	char err[256];
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;

	if (u->vdso_tried)
		return u->vdso < 0 ? NULL : &u->objs[u->vdso];
	u->vdso_tried = true;
	if (maps__read(getpid(), MAPS_EXEC_ONLY, &m))
		return NULL;
	for (i = 0; i < maps__count(m) && !e; i++)
		if (maps__entry(m, i)->kind == MAPS_VDSO)
			e = maps__entry(m, i);
	copy = e ? malloc(e->end - e->start) : NULL;
	if (!copy)
		goto out;
	memcpy(copy, (const void *)(uintptr_t)e->start, e->end - e->start);
	elf = elf_memory((char *)copy, e->end - e->start);
	o = elf ? new_obj(u) : NULL;
	if (o) {
		/* no file behind it: a device and inode no file has */
		o->dev = (dev_t)-1;
		o->ino = (ino_t)-1;
		for (i = 0; elf_getphdrnum(elf, &n) == 0 && i < n && o->nloads < MAX_LOADS; i++)
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) {
				o->loads[o->nloads].offset = ph.p_offset;
				o->loads[o->nloads].vaddr = ph.p_vaddr;
				o->loads[o->nloads].filesz = ph.p_filesz;
				o->nloads++;
			}
		if (unwind_table__build(elf, NULL, &o->table, err, sizeof(err)))
			o->failed = true;
		o->has_cfi = o->table.count > 0;
		u->vdso = o - u->objs;
		u->vdso_size = e->end - e->start;
	}
	if (elf)
		elf_end(elf);
	free(copy);
out:
	maps__free(m);
	return o;
}

/* The load bias of mapping e of o (pc = ip - bias); false if no segment holds its offset. */
static bool mapping_bias(const struct uobj *o, const struct maps_entry *e, __u64 *bias)
{
	size_t i;

	for (i = 0; i < o->nloads; i++)
		if (e->offset >= o->loads[i].offset &&
		    e->offset < o->loads[i].offset + o->loads[i].filesz) {
			*bias = e->start - (o->loads[i].vaddr + (e->offset - o->loads[i].offset));
			return true;
		}
	return false;
}

/* Whether pid runs our own executable: a child forked to exec a command, not there yet. */
static bool runs_us(pid_t pid)
{
	struct stat self, other;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return !stat("/proc/self/exe", &self) && !stat(path, &other) &&
	       self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

static int update_process(struct unwind *u, pid_t pid, const struct maps *m)
{
	struct lp_unwind_proc *v = &u->proc;
	__u32 key = pid;
	size_t i;
	int ret;

	/* its exec brings the inspection that matters */
	if (runs_us(pid))
		return 0;
	u->clock++;
	v->count = 0;
	for (i = 0; i < maps__count(m) && v->count < LP_UNWIND_MAX_MAPS; i++) {
		const struct maps_entry *e = maps__entry(m, i);
		struct lp_unwind_mapping *mp = &v->maps[v->count];
		struct uobj *o;
		__u64 bias;

		if (!(e->prot & MAPS_PROT_EXEC))
			continue;
		if (e->kind == MAPS_VDSO) {
			o = vdso_object(u);
			if (o && e->end - e->start != u->vdso_size)
				o = NULL;
		} else if (e->kind == MAPS_FILE) {
			o = object_of(u, pid, e);
		} else {
			continue;
		}
		if (!o || !o->has_cfi || !mapping_bias(o, e, &bias))
			continue;
		o->last_used = u->clock;
		if (!o->pages && !o->failed) {
			ret = load(u, o);
			if (ret) {
				u->st.errors++;
				if (u->verbose)
					fprintf(stderr, "labelprof: %s: unwind table not loaded: %s\n",
						e->path, strerror(-ret));
			}
		}
		/* an object with CFI stays listed even without rows: BPF counts the misses */
		*mp = (struct lp_unwind_mapping){
			.start = e->start, .end = e->end, .bias = bias, .object = o->id};
		v->count++;
	}
	ret = bpf_map_update_elem(u->maps.procs, &key, v, BPF_ANY) ? -errno : 0;
	if (!ret)
		u->st.processes++;
	else if (ret == -E2BIG)
		u->st.procs_full++;
	return ret;
}

static void handle(struct unwind *u, const struct request *r)
{
	__u32 key = r->pid;
	int err;

	if (r->kind == REQUEST_FORGET) {
		bpf_map_delete_elem(u->maps.procs, &key);
		return;
	}
	err = update_process(u, r->pid, r->maps);
	if (err && err != -ESRCH && err != -ENOENT && u->verbose)
		fprintf(stderr, "labelprof: pid %d: no unwind tables: %s\n", r->pid,
			err == -E2BIG ? "the map of mapping lists is full" : strerror(-err));
}

/* Handles the queued requests in order, a batch at a time, until unwind__free. */
static void *work(void *arg)
{
	struct unwind *u = arg;
	struct request *batch = NULL, *swap;
	size_t n, cap = 0, swap_cap, i;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		while (!u->queued && !u->stopping) {
			u->busy = false;
			pthread_cond_broadcast(&u->idle);
			pthread_cond_wait(&u->wake, &u->lock);
		}
		if (u->stopping)
			break;
		swap = u->queue;
		swap_cap = u->queue_cap;
		u->queue = batch;
		u->queue_cap = cap;
		batch = swap;
		cap = swap_cap;
		n = u->queued;
		u->queued = 0;
		u->busy = true;
		pthread_mutex_unlock(&u->lock);

		for (i = 0; i < n; i++) {
			if (!__atomic_load_n(&u->stopping, __ATOMIC_RELAXED))
				handle(u, &batch[i]);
			maps__free(batch[i].maps);
		}

		pthread_mutex_lock(&u->lock);
		u->published = u->st;
	}
	u->busy = false;
	pthread_cond_broadcast(&u->idle);
	pthread_mutex_unlock(&u->lock);
	free(batch);
	return NULL;
}

static int enqueue(struct unwind *u, pid_t pid, enum request_kind kind, struct maps *maps)
{
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&u->lock);
	/* an update not yet started takes the newer maps: one is enough */
	for (i = u->queued; i-- > 0;)
		if (u->queue[i].pid == pid)
			break;
	if (kind == REQUEST_UPDATE && i < u->queued && u->queue[i].kind == REQUEST_UPDATE) {
		maps__free(u->queue[i].maps);
		u->queue[i].maps = maps__get(maps);
		goto out;
	}
	if (ARRAY_RESERVE(u->queue, u->queue_cap, u->queued + 1)) {
		ret = -ENOMEM;
		goto out;
	}
	u->queue[u->queued++] =
		(struct request){.pid = pid, .kind = kind, .maps = maps ? maps__get(maps) : NULL};
	pthread_cond_signal(&u->wake);
out:
	pthread_mutex_unlock(&u->lock);
	return ret;
}

int unwind__queue_update(struct unwind *u, pid_t pid, struct maps *maps)
{
	return enqueue(u, pid, REQUEST_UPDATE, maps);
}

int unwind__queue_forget(struct unwind *u, pid_t pid)
{
	return enqueue(u, pid, REQUEST_FORGET, NULL);
}

void unwind__wait_idle(struct unwind *u)
{
	pthread_mutex_lock(&u->lock);
	while (u->queued || u->busy)
		pthread_cond_wait(&u->idle, &u->lock);
	pthread_mutex_unlock(&u->lock);
}

void unwind__stats(struct unwind *u, struct unwind_stats *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct lp_unwind_counters *pc;
	__u32 zero = 0;
	int i;

	pthread_mutex_lock(&u->lock);
	*out = u->published;
	pthread_mutex_unlock(&u->lock);
	memset(&out->bpf, 0, sizeof(out->bpf));
	if (ncpus <= 0)
		return;
	pc = calloc(ncpus, sizeof(*pc));
	if (!pc)
		return;
	if (!bpf_map_lookup_elem(u->maps.counters, &zero, pc)) {
		for (i = 0; i < ncpus; i++) {
			out->bpf.cfi_frames += pc[i].cfi_frames;
			out->bpf.fp_frames += pc[i].fp_frames;
			out->bpf.misses += pc[i].misses;
			out->bpf.no_rule += pc[i].no_rule;
			out->bpf.truncated += pc[i].truncated;
		}
	}
	free(pc);
}
