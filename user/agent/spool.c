// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Requests waiting for delivery, on disk or in memory (spool.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/log.h"
#include "lib/array.h"
#include "agent/retention.h"
#include "agent/spool.h"

struct spool_item {
	__u64 seq;
	__u64 time_ns;
	__u64 bytes;
	bool gzip;
	void *data; /* in memory: without a directory, or held (the directory did not take it) */
};

struct spool {
	int dir_fd; /* -1: in memory */
	char *dir;
	struct spool_item *items; /* oldest first */
	size_t count;
	size_t cap;
	__u64 bytes;
	__u64 max_bytes;
	__u64 next_seq;
	size_t held; /* requests held in memory although there is a directory */
};

static void item_name(const struct spool_item *it, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIu64 "-%020" PRIu64 ".otlp%s", (uint64_t)it->seq,
		 (uint64_t)it->time_ns, it->gzip ? ".gz" : "");
}

/* SEQ-TIME.otlp[.gz] back to an item; false for other names. */
static bool parse_name(const char *name, struct spool_item *it)
{
	unsigned long long seq, t;
	int end = 0;

	if (strlen(name) < 16 + 1 + 20 || sscanf(name, "%16llu-%20llu%n", &seq, &t, &end) != 2 ||
	    end != 16 + 1 + 20)
		return false;
	if (strcmp(name + end, ".otlp") && strcmp(name + end, ".otlp.gz"))
		return false;
	*it = (struct spool_item){.seq = seq, .time_ns = t, .gzip = !!strcmp(name + end, ".otlp")};
	return true;
}

static int grow(struct spool *sp)
{
	return ARRAY_RESERVE(sp->items, sp->cap, sp->count + 1) ? -ENOMEM : 0;
}

static int item_cmp(const void *a, const void *b)
{
	const struct spool_item *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Takes in the requests a previous run left in the directory. */
static int load_dir(struct spool *sp, char *err, size_t err_len)
{
	struct spool_item it;
	struct dirent *de;
	struct stat st;
	int fd = dup(sp->dir_fd), e;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		e = errno;
		snprintf(err, err_len, "cannot list %s: %s", sp->dir, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, ".tmp-", 5)) {
			unlinkat(sp->dir_fd, de->d_name, 0);
			continue;
		}
		if (!parse_name(de->d_name, &it) ||
		    fstatat(sp->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (grow(sp)) {
			closedir(d);
			snprintf(err, err_len, "out of memory");
			return -ENOMEM;
		}
		it.bytes = st.st_size;
		sp->items[sp->count++] = it;
		sp->bytes += it.bytes;
		if (it.seq >= sp->next_seq)
			sp->next_seq = it.seq + 1;
	}
	closedir(d);
	if (sp->count)
		qsort(sp->items, sp->count, sizeof(*sp->items), item_cmp);
	return 0;
}

struct spool *spool__open(const char *dir, __u64 max_bytes, __u64 *dropped, char *err,
			  size_t err_len)
{
	struct spool *sp = calloc(1, sizeof(*sp));
	int e;

	if (!sp) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	sp->dir_fd = -1;
	sp->max_bytes = max_bytes;
	if (!dir)
		return sp;
	sp->dir = strdup(dir);
	if (!sp->dir) {
		snprintf(err, err_len, "out of memory");
		goto out_free;
	}
	e = retention__mkdirs(dir, 0700);
	if (e) {
		snprintf(err, err_len, "cannot create the spool directory %s: %s", dir,
			 strerror(-e));
		goto out_free;
	}
	sp->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sp->dir_fd < 0) {
		snprintf(err, err_len, "cannot open the spool directory %s: %s", dir,
			 strerror(errno));
		goto out_free;
	}
	if (load_dir(sp, err, err_len))
		goto out_free;
	spool__set_max_bytes(sp, max_bytes, dropped);
	return sp;

out_free:
	spool__free(sp);
	return NULL;
}

void spool__free(struct spool *sp)
{
	size_t i;

	if (!sp)
		return;
	for (i = 0; i < sp->count; i++)
		free(sp->items[i].data);
	free(sp->items);
	if (sp->dir_fd >= 0)
		close(sp->dir_fd);
	free(sp->dir);
	free(sp);
}

void spool__pop(struct spool *sp)
{
	struct spool_item *it;
	char name[64];

	if (!sp->count)
		return;
	it = &sp->items[0];
	if (sp->dir_fd >= 0 && it->data) {
		sp->held--;
	} else if (sp->dir_fd >= 0) {
		item_name(it, name, sizeof(name));
		if (unlinkat(sp->dir_fd, name, 0) && errno != ENOENT)
			agent_log(LOG_WARNING, "cannot remove %s/%s: %s", sp->dir, name,
				  strerror(errno));
	}
	free(it->data);
	sp->bytes -= it->bytes;
	memmove(sp->items, sp->items + 1, --sp->count * sizeof(*sp->items));
}

static void enforce(struct spool *sp, __u64 *dropped)
{
	while (sp->count && (sp->bytes > sp->max_bytes || sp->count > SPOOL_MAX_ITEMS)) {
		spool__pop(sp);
		(*dropped)++;
	}
}

void spool__set_max_bytes(struct spool *sp, __u64 max_bytes, __u64 *dropped)
{
	sp->max_bytes = max_bytes;
	enforce(sp, dropped);
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

/* tmp then rename: the file appears whole or not at all. */
static int write_file(struct spool *sp, const struct spool_item *it, const void *data, size_t len)
{
	char tmp[32], name[64];
	int fd, err;

	snprintf(tmp, sizeof(tmp), ".tmp-%016" PRIu64, (uint64_t)it->seq);
	item_name(it, name, sizeof(name));
	unlinkat(sp->dir_fd, tmp, 0);
	fd = openat(sp->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, data, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(sp->dir_fd, tmp, sp->dir_fd, name))
		err = -errno;
	if (err) {
		unlinkat(sp->dir_fd, tmp, 0);
		return err;
	}
	/* the rename itself survives a crash once the directory is synced */
	fsync(sp->dir_fd);
	return 0;
}

size_t spool__save(struct spool *sp)
{
	struct spool_item *it;
	size_t i;

	if (sp->dir_fd < 0)
		return sp->count;
	for (i = 0; i < sp->count && sp->held; i++) {
		it = &sp->items[i];
		if (!it->data)
			continue;
		if (write_file(sp, it, it->data, it->bytes))
			break;
		free(it->data);
		it->data = NULL;
		sp->held--;
	}
	return sp->held;
}

int spool__put(struct spool *sp, __u64 time_ns, bool gzip, void *data, size_t len, __u64 *dropped,
	       int *write_err)
{
	struct spool_item it = {
		.seq = sp->next_seq, .time_ns = time_ns, .bytes = len, .gzip = gzip};
	int err = grow(sp);

	*write_err = 0;
	if (err) {
		free(data);
		return err;
	}
	if (sp->dir_fd >= 0)
		*write_err = write_file(sp, &it, data, len);
	if (sp->dir_fd >= 0 && !*write_err) {
		free(data);
		/* the directory takes requests again: those it could not take follow */
		if (sp->held)
			spool__save(sp);
	} else {
		it.data = data;
		sp->held += sp->dir_fd >= 0;
	}
	sp->next_seq++;
	sp->items[sp->count++] = it;
	sp->bytes += len;
	enforce(sp, dropped);
	return 0;
}

int spool__peek(struct spool *sp, void **data, size_t *len, bool *gzip, __u64 *time_ns)
{
	const struct spool_item *it;
	char name[64];
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	if (!sp->count)
		return -ENOENT;
	it = &sp->items[0];
	*gzip = it->gzip;
	*time_ns = it->time_ns;
	if (it->data) {
		*data = malloc(it->bytes ? it->bytes : 1);
		if (!*data)
			return -ENOMEM;
		memcpy(*data, it->data, it->bytes);
		*len = it->bytes;
		return 0;
	}
	item_name(it, name, sizeof(name));
	fd = openat(sp->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the size seen at put or at open: a file that changed since is refused */
	if (fstat(fd, &st) || (__u64)st.st_size != it->bytes) {
		close(fd);
		return -EIO;
	}
	*data = malloc(it->bytes ? it->bytes : 1);
	if (!*data) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, *data, it->bytes, 0);
	if (n < 0)
		err = -errno;
	else if ((__u64)n != it->bytes)
		err = -EIO;
	close(fd);
	if (err) {
		free(*data);
		return err;
	}
	*len = it->bytes;
	return 0;
}

__u64 spool__bytes(const struct spool *sp)
{
	return sp->bytes;
}

size_t spool__count(const struct spool *sp)
{
	return sp->count;
}
