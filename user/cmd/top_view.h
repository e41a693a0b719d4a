/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The table labelprof top shows: the samples of a symbolized profile grouped
 * by the values of chosen label keys (one row per combination of values, a
 * key a sample does not set counting as "(not set)"), sorted by samples, with
 * the hottest functions (self time: the function holding the leaf address,
 * inlined code counting as its own) of each row; and its rendering as plain
 * text that fits a given width. Label bytes are untrusted: they are written
 * with fmt__text_bytes (fmt.h), in exact columns, escaped as \xHH where a
 * terminal could interpret them or they have no width of their own.
 */
#ifndef LABELPROF_TOP_VIEW_H
#define LABELPROF_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct symprof;
struct labelfold;

#define TOP_MAX_KEYS  8
#define TOP_FUNCTIONS 3
#define TOP_UNSET     ((__u32)-1) /* a row's value for a key its samples do not set */
#define TOP_FOLDED    ((__u32)-2) /* every value of a folded key (shown as KEY=*) */

enum top_fn_flags {
	TOP_FN_KERNEL = 1 << 0,	  /* the leaf frame is in the kernel */
	TOP_FN_NO_STACK = 1 << 1, /* the samples have no frame at all */
};

struct top_key {
	const unsigned char *bytes;
	size_t len;
};

/* Samples whose leaf frame is in one function. */
struct top_fn {
	__u32 name;  /* string id in the view's symprof; 0: unknown */
	__u32 flags; /* enum top_fn_flags */
	__u64 count;
};

struct top_row {
	__u32 values[TOP_MAX_KEYS]; /* string ids in the symprof; TOP_UNSET, TOP_FOLDED */
	__u64 count;
	struct top_fn fns[TOP_FUNCTIONS]; /* most samples first; count 0: none */
};

/* The order of the rows. */
enum top_sort {
	TOP_SORT_SAMPLES, /* most samples first; equal counts by value bytes */
	TOP_SORT_NAME,	  /* by value bytes, key by key ("(not set)" last) */
	TOP_SORT_COUNT,
};

struct top_view {
	const struct symprof *sp; /* rows point into it: keep it until top_view__free */
	__u32 pid;		  /* only this process's samples; 0: every process */
	enum top_sort sort;
	struct top_key keys[TOP_MAX_KEYS];
	size_t key_count;
	__u32 folded_values[TOP_MAX_KEYS]; /* distinct values of a folded key; 0: not folded */
	unsigned int max_values;	   /* the folding limit (--max-label-values) */
	struct top_row *rows;		   /* in the order of sort */
	size_t row_count;
	__u64 total;	/* samples */
	__u64 labelled; /* samples with at least one label */
};

/*
 * Groups the samples of sp by the values of keys (n of them, at most
 * TOP_MAX_KEYS; n == 0 makes one row of every sample). A key that fold
 * (made from sp; NULL: none) folds has one row for all its values, as the
 * other text views show it (format/labelfold.h). pid: only that process's
 * samples (0: all). The rows come most samples first. The key bytes must
 * outlive the view. Returns 0, -EINVAL or -ENOMEM.
 */
int top_view__build(struct top_view *v, const struct symprof *sp, const struct top_key *keys,
		    size_t n, const struct labelfold *fold, __u32 pid);
/* Puts the rows in the order of sort. */
void top_view__sort(struct top_view *v, enum top_sort sort);
void top_view__free(struct top_view *v);

/*
 * The key to group by when none was chosen: never a trace or span id; a key
 * fold (NULL: none) does not fold before one it folds; then the one set by
 * the most samples; of keys set equally often, the one with the fewest
 * values (a request id makes a poor row), then the lowest bytes. Copies it
 * into buf (truncated to size bytes) and returns its length; -ENOENT if no
 * sample has a label it could choose, -ENOMEM.
 */
long top_view__common_key(const struct symprof *sp, const struct labelfold *fold,
			  unsigned char *buf, size_t size);

/* What the header says besides what the view holds. */
struct top_status {
	double elapsed_s;
	double interval_s; /* what the view covers */
	unsigned int freq_hz;
	__u64 ringbuf_drops; /* during the interval */
	__u64 read_faults;   /* label read faults during the interval */
	double refresh_ms;   /* time spent taking, symbolizing and grouping the profile */
	bool cumulative;     /* the view covers everything since the start */
	bool auto_key;	     /* the key was chosen by top_view__common_key */
	bool paused;	     /* the view is not refreshed until resumed */
};

struct top_layout {
	unsigned int width;    /* no line is wider */
	unsigned int max_rows; /* table rows shown; past them one line sums up the rest */
	bool color;	       /* bold header, reverse-video column titles, dim "(not set)" */
	/* redrawing a screen: lines end with "erase to end of line", a blank line under the header
	 */
	bool erase;
};

/* Writes the header, the column titles and the rows. Returns 0 or -errno. */
int top_view__print(FILE *f, const struct top_view *v, const struct top_status *st,
		    const struct top_layout *l);

#endif /* LABELPROF_TOP_VIEW_H */
