// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JavaScript functions read from a Node.js process's memory (docs/design.md
 * section 13): a SharedFunctionInfo's name (a string, or the first name
 * past the variables of its ScopeInfo), its Script's name, and the line it
 * starts at (its ScopeInfo's start position among the Script's line ends,
 * or the newlines of its source). Every object is checked by its map's
 * instance type; what does not check out is not named.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/mem.h"
#include "runtime/node/node.h"

#define TAG_MASK    3ull
#define HEAP_TAG    1ull
#define SMI_SHIFT   32
#define MAX_DEPTH   16		     /* cons strings nested, at most */
#define CHUNK_CHARS 4096	     /* characters read at once */
#define MAX_SOURCE  (16u << 20)	     /* characters of a source scanned for newlines */
#define MAX_LINES   (4u << 20)	     /* line ends read from a Script */
#define NAME_MAX_BYTES 512
/* ScopeInfo slots read past its map: flags, counts, positions, the first variables */
#define SCOPE_SLOTS 24
/*
 * Since V8 12.8 a ScopeInfo's start and end positions are fixed slots 3 and
 * 4, before its variables (slot 5); before, they lie past the variables.
 */
#define SCOPE_START_SLOT 3
#define SCOPE_FIXED_POSITIONS_VARS 5

static bool is_heap_object(__u64 tagged)
{
	return (tagged & TAG_MASK) == HEAP_TAG && tagged > 4096;
}

static bool is_smi(__u64 word)
{
	return !(word & 1);
}

/* The object tagged points to (its address) and its instance type; -errno if none. */
static int object_type(pid_t pid, const struct node_js_layout *l, __u64 tagged, __u64 *addr,
		       __u16 *type)
{
	__u64 map;
	int r;

	if (!is_heap_object(tagged))
		return -EINVAL;
	*addr = tagged - HEAP_TAG;
	r = proc_mem__read(pid, *addr, &map, sizeof(map));
	if (r)
		return r;
	if (!is_heap_object(map))
		return -EINVAL;
	return proc_mem__read(pid, map - HEAP_TAG + l->ref.instance_type, type, sizeof(*type));
}

static int read_word(pid_t pid, __u64 addr, __u64 *w)
{
	return proc_mem__read(pid, addr, w, sizeof(*w));
}

/* Takes count characters of width 1 or 2 bytes; non-zero stops the walk. */
typedef int (*chars_fn)(void *ctx, const void *chars, size_t count, int width);

/*
 * Calls fn on the characters of the string tagged points to, in order, at
 * most limit of them (a sequential string's, a cons string's halves, a
 * thin string's target). -ENOTSUP for other representations (external,
 * sliced), -EINVAL for what is no string.
 */
static int visit_string(pid_t pid, const struct node_js_layout *l, __u64 tagged, size_t *limit,
			chars_fn fn, void *ctx, int depth)
{
	unsigned char buf[CHUNK_CHARS * 2];
	__u64 addr, part;
	__u16 type;
	__s32 len;
	size_t done, n;
	int r, width;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	r = object_type(pid, l, tagged, &addr, &type);
	if (r)
		return r;
	if (type >= l->first_nonstring)
		return -EINVAL;
	r = proc_mem__read(pid, addr + l->string_length, &len, sizeof(len));
	if (r)
		return r;
	if (len < 0)
		return -EINVAL;
	if ((type & l->representation_mask) == l->cons_tag) {
		r = read_word(pid, addr + l->cons_first, &part);
		if (!r)
			r = visit_string(pid, l, part, limit, fn, ctx, depth + 1);
		if (!r && *limit)
			r = read_word(pid, addr + l->cons_second, &part);
		if (!r && *limit)
			r = visit_string(pid, l, part, limit, fn, ctx, depth + 1);
		return r;
	}
	if ((type & l->representation_mask) == l->thin_tag) {
		r = read_word(pid, addr + l->thin_actual, &part);
		return r ? r : visit_string(pid, l, part, limit, fn, ctx, depth + 1);
	}
	if ((type & l->representation_mask) != l->seq_tag)
		return -ENOTSUP;
	width = (type & l->encoding_mask) == l->one_byte_tag ? 1 : 2;
	addr += width == 1 ? l->one_byte_chars : l->two_byte_chars;
	for (done = 0; done < (size_t)len && *limit; done += n) {
		n = (size_t)len - done;
		if (n > CHUNK_CHARS)
			n = CHUNK_CHARS;
		if (n > *limit)
			n = *limit;
		r = proc_mem__read(pid, addr + done * width, buf, n * width);
		if (r)
			return r;
		*limit -= n;
		r = fn(ctx, buf, n, width);
		if (r)
			return r;
	}
	return 0;
}

struct utf8_out {
	char *s;
	size_t len, cap; /* cap leaves room for the terminator */
};

/* Latin-1 or UTF-16 (lone surrogates as U+FFFD) to UTF-8, as much as fits. */
static int put_utf8(void *ctx, const void *chars, size_t count, int width)
{
	struct utf8_out *o = ctx;
	const unsigned char *b = chars;
	const __u16 *h = chars;
	unsigned int c, lo;
	size_t i;

	for (i = 0; i < count; i++) {
		c = width == 1 ? b[i] : h[i];
		if (width == 2 && c >= 0xd800 && c < 0xdc00 && i + 1 < count &&
		    (lo = h[i + 1]) >= 0xdc00 && lo < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		}
		if (o->len + 4 > o->cap)
			return 1;
		if (c < 0x80) {
			o->s[o->len++] = c ? (char)c : '?';
		} else if (c < 0x800) {
			o->s[o->len++] = (char)(0xc0 | c >> 6);
			o->s[o->len++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			o->s[o->len++] = (char)(0xe0 | c >> 12);
			o->s[o->len++] = (char)(0x80 | (c >> 6 & 0x3f));
			o->s[o->len++] = (char)(0x80 | (c & 0x3f));
		} else {
			o->s[o->len++] = (char)(0xf0 | c >> 18);
			o->s[o->len++] = (char)(0x80 | (c >> 12 & 0x3f));
			o->s[o->len++] = (char)(0x80 | (c >> 6 & 0x3f));
			o->s[o->len++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return 0;
}

/* The string tagged points to, as a new UTF-8 string (cut at NAME_MAX_BYTES); NULL if none. */
static char *read_string(pid_t pid, const struct node_js_layout *l, __u64 tagged)
{
	struct utf8_out o = {.cap = NAME_MAX_BYTES};
	size_t limit = NAME_MAX_BYTES;
	int r;

	o.s = malloc(NAME_MAX_BYTES + 1);
	if (!o.s)
		return NULL;
	r = visit_string(pid, l, tagged, &limit, put_utf8, &o, 0);
	if (r < 0) {
		free(o.s);
		return NULL;
	}
	o.s[o.len] = '\0';
	return o.s;
}

struct newline_count {
	size_t at;	/* characters seen */
	size_t before;	/* the position whose line is counted */
	__u32 newlines; /* before it */
};

static int count_newlines(void *ctx, const void *chars, size_t count, int width)
{
	struct newline_count *c = ctx;
	size_t i;

	for (i = 0; i < count && c->at < c->before; i++, c->at++)
		if ((width == 1 ? ((const unsigned char *)chars)[i] : ((const __u16 *)chars)[i]) ==
		    '\n')
			c->newlines++;
	return c->at >= c->before;
}

/*
 * The line (1-based) of character position pos in script (its address):
 * from the line ends V8 computed, else from the newlines of its source;
 * 0 if neither can be read.
 */
static __u32 script_line(pid_t pid, const struct node_js_layout *l, __u64 script, __u32 pos)
{
	struct newline_count c = {.before = pos};
	__u64 ends, addr, len, w;
	size_t limit = MAX_SOURCE;
	__u32 lo, hi, mid;
	__u16 type;

	if (!read_word(pid, script + l->script_line_ends, &ends) &&
	    !object_type(pid, l, ends, &addr, &type) && type == l->fixed_array_type &&
	    !read_word(pid, addr + l->fixed_length, &len) && is_smi(len) &&
	    (len >> SMI_SHIFT) > 0 && (len >> SMI_SHIFT) <= MAX_LINES) {
		/* the first line whose end is at or past pos */
		lo = 0;
		hi = (__u32)(len >> SMI_SHIFT);
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (read_word(pid, addr + l->fixed_data + (__u64)mid * 8, &w) || !is_smi(w))
				goto source;
			if ((__s64)w >> SMI_SHIFT < (__s64)pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo + 1;
	}
source:
	if (read_word(pid, script + l->script_source, &w) ||
	    visit_string(pid, l, w, &limit, count_newlines, &c, 0) < 0 || c.at < c.before)
		return 0;
	return c.newlines + 1;
}

/*
 * Before V8 12.8: the start position of the PositionInfo that follows the
 * function name's slots at slot k (past the inferred name, a heap object,
 * if any): two Smis, start before end. -1 if not so.
 */
static __s64 positions_after(const __u64 *slot, size_t k, size_t n)
{
	__s64 start, end;

	if (k < n && is_heap_object(slot[k]))
		k++;
	if (k + 1 >= n || !is_smi(slot[k]) || !is_smi(slot[k + 1]))
		return -1;
	start = (__s64)slot[k] >> SMI_SHIFT;
	end = (__s64)slot[k + 1] >> SMI_SHIFT;
	return start >= 0 && start < end ? start : -1;
}

/*
 * From a ScopeInfo at addr: its start position into *pos, and the
 * function's name into *name: the first string past its context locals'
 * names and infos that a Smi follows (FunctionVariableInfo: the name, then
 * the variable's slot), empty for an anonymous function.
 */
static void scope_info(pid_t pid, const struct node_js_layout *l, __u64 addr, char **name,
		       __s64 *pos)
{
	__u64 slot[SCOPE_SLOTS], locals;
	size_t i, n;

	/* the slots follow the map word; a ScopeInfo may be shorter: read what is there */
	for (n = 0; n < SCOPE_SLOTS; n++)
		if (read_word(pid, addr + 8 + n * 8, &slot[n]))
			break;
	if (l->scope_first_vars == SCOPE_FIXED_POSITIONS_VARS && n > SCOPE_START_SLOT &&
	    is_smi(slot[SCOPE_START_SLOT]))
		*pos = (__s64)slot[SCOPE_START_SLOT] >> SMI_SHIFT;
	if (n <= l->scope_context_locals || !is_smi(slot[l->scope_context_locals]))
		return;
	locals = slot[l->scope_context_locals] >> SMI_SHIFT;
	for (i = l->scope_first_vars + 2 * locals; i + 1 < n; i++) {
		if (!is_heap_object(slot[i]) || !is_smi(slot[i + 1]))
			continue;
		*name = read_string(pid, l, slot[i]);
		if (*name && !**name) { /* anonymous */
			free(*name);
			*name = NULL;
		}
		if (l->scope_first_vars != SCOPE_FIXED_POSITIONS_VARS)
			*pos = positions_after(slot, i + 2, n);
		return;
	}
}

int node_function__read(pid_t pid, const struct node_js_layout *l, __u64 sfi, __u64 ident,
			struct node_function *f)
{
	__u64 addr, nos, nos_addr, script, script_addr, obj;
	__s64 pos = -1;
	__u16 type;
	int r;

	memset(f, 0, sizeof(*f));
	f->sfi = sfi;
	r = object_type(pid, l, sfi | HEAP_TAG, &addr, &type);
	if (r)
		return r;
	if (type != l->ref.sfi_type)
		return -ESTALE;
	r = read_word(pid, addr + l->ref.sfi_name, &nos);
	if (r)
		return r;
	/* what BPF saw there: another function was moved to this address since */
	if ((nos & LP_JS_ADDR_MASK) != (ident & LP_JS_ADDR_MASK))
		return -ESTALE;
	f->ident = nos;
	if (!object_type(pid, l, nos, &nos_addr, &type)) {
		if (type < l->first_nonstring)
			f->name = read_string(pid, l, nos);
		else if (type == l->scope_info_type)
			scope_info(pid, l, nos_addr, &f->name, &pos);
	}
	if (!read_word(pid, addr + l->sfi_script, &script) &&
	    !object_type(pid, l, script, &script_addr, &type) && type == l->script_type) {
		if (!read_word(pid, script_addr + l->script_name, &obj))
			f->file = read_string(pid, l, obj);
		if (pos >= 0 && pos < UINT32_MAX)
			f->line = script_line(pid, l, script_addr, (__u32)pos);
	}
	if (f->name && !f->name[0]) {
		free(f->name);
		f->name = NULL;
	}
	return 0;
}

void node_function__free(struct node_function *f)
{
	free(f->name);
	free(f->file);
	memset(f, 0, sizeof(*f));
}
