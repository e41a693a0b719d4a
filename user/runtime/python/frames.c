// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython's thread states and code objects, read from a process's memory:
 * a code object's qualified name, file, first line and line table
 * (Objects/lnotab_notes.txt for 3.10, Objects/locations.md for 3.11+).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "proc/mem.h"
#include "runtime/python/python.h"

#define MAX_STRING    4096	/* longer names and paths are cut */
#define MAX_LINETABLE (1 << 20) /* a larger line table names no lines */

static int read_word(pid_t pid, __u64 addr, __u64 *w)
{
	return proc_mem__read(pid, addr, w, sizeof(*w));
}

int py_thread_states(pid_t pid, const struct py_image *img, __u64 bias, __u64 *tids, size_t max)
{
	const struct lp_py_ref *r = &img->ref;
	__u64 interp, ts, id;
	int n = 0, err;

	err = read_word(pid, img->interp_head + bias, &interp);
	if (!err && interp)
		err = read_word(pid, interp + r->threads_head, &ts);
	else
		ts = 0;
	/* a list longer than BPF looks through is not followed further */
	while (!err && ts && n < LP_PY_MAX_THREADS) {
		err = read_word(pid, ts + r->tstate_id, &id);
		if (!err && (size_t)n < max)
			tids[n] = r->flags & LP_PY_NATIVE_TID ? (__u32)id : id;
		n++;
		err = err ?: read_word(pid, ts + r->tstate_next, &ts);
	}
	return err ?: n;
}

/* Appends code point c to out as UTF-8. */
static size_t put_utf8(char *out, __u32 c)
{
	if (c < 0x80) {
		out[0] = c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = 0xc0 | c >> 6;
		out[1] = 0x80 | (c & 0x3f);
		return 2;
	}
	if (c < 0x10000) {
		out[0] = 0xe0 | c >> 12;
		out[1] = 0x80 | ((c >> 6) & 0x3f);
		out[2] = 0x80 | (c & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | (c >> 18 & 7);
	out[1] = 0x80 | ((c >> 12) & 0x3f);
	out[2] = 0x80 | ((c >> 6) & 0x3f);
	out[3] = 0x80 | (c & 0x3f);
	return 4;
}

/*
 * The str object at addr as a new UTF-8 string: compact strings only (all
 * that names and file names are); NULL if it cannot be read.
 */
static char *read_str(pid_t pid, const struct py_code_offsets *o, __u64 addr)
{
	__u64 hdr[5], len, data;
	__u32 state, kind, i;
	unsigned char *raw;
	char *out;
	size_t n = 0;

	if (!addr || proc_mem__read(pid, addr, hdr, sizeof(hdr)))
		return NULL;
	len = hdr[2];
	state = (__u32)hdr[4];
	/* the state's bits: interned (2), kind (3), compact, ascii */
	kind = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	if (len > MAX_STRING)
		len = MAX_STRING;
	data = addr + (state & (1 << 6) ? o->ascii_size : o->compact_size);
	raw = malloc(len * kind + 1);
	out = malloc(len * 4 + 1);
	if (!raw || !out || proc_mem__read(pid, data, raw, len * kind)) {
		free(raw);
		free(out);
		return NULL;
	}
	for (i = 0; i < len; i++) {
		__u32 c = kind == 1 ? raw[i] : kind == 2 ? ((__u16 *)raw)[i] : ((__u32 *)raw)[i];

		n += put_utf8(out + n, c ? c : '?');
	}
	out[n] = 0;
	free(raw);
	return out;
}

/* The bytes object at addr: its contents into *out (malloc'd), 0 or -errno. */
static int read_bytes(pid_t pid, const struct py_code_offsets *o, __u64 addr, unsigned char **out,
		      size_t *len)
{
	__u64 size;
	int err;

	if (!addr)
		return -EINVAL;
	err = read_word(pid, addr + o->bytes_size, &size);
	if (err)
		return err;
	if (size > MAX_LINETABLE)
		return -E2BIG;
	*out = malloc(size ? size : 1);
	if (!*out)
		return -ENOMEM;
	err = proc_mem__read(pid, addr + o->bytes_sval, *out, size);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = size;
	return 0;
}

/* Reads the words that identify the code object at addr. */
static int fingerprint(pid_t pid, const struct py_image *img, __u64 bias, __u64 addr, __u64 fp[6],
		       __u32 *first_line)
{
	const struct py_code_offsets *o = &img->code;
	__u64 w[4];
	__u32 line;
	int err;

	err = read_word(pid, addr + 8, &fp[0]); /* ob_type */
	if (err)
		return err;
	if (fp[0] != img->code_type + bias)
		return -EINVAL;
	err = read_word(pid, addr + o->name, &w[0]) ?:
	      read_word(pid, addr + (o->qualname ? o->qualname : o->name), &w[1]) ?:
	      read_word(pid, addr + o->filename, &w[2]) ?:
	      read_word(pid, addr + o->linetable, &w[3]) ?:
	      proc_mem__read(pid, addr + o->firstlineno, &line, sizeof(line)) ?:
	      read_word(pid, w[1] + LP_PY_STR_HASH, &fp[5]);
	if (err)
		return err;
	memcpy(&fp[1], w, sizeof(w));
	fp[0] ^= (__u64)line << 48;
	*first_line = line;
	return 0;
}

int py_code__read(pid_t pid, const struct py_image *img, __u64 bias, __u64 addr,
		  struct py_code *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->version = img->version;
	err = fingerprint(pid, img, bias, addr, c->fingerprint, &c->first_line);
	if (err)
		return err;
	c->function = read_str(pid, &img->code, c->fingerprint[2]);
	c->file = read_str(pid, &img->code, c->fingerprint[3]);
	if (!c->function || !c->file) {
		py_code__free(c);
		return -EFAULT;
	}
	/* a code object without its line table still names its function */
	if (read_bytes(pid, &img->code, c->fingerprint[4], &c->linetable, &c->linetable_len))
		c->linetable_len = 0;
	return 0;
}

void py_code__free(struct py_code *c)
{
	free(c->function);
	free(c->file);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

/* 3.10: (bytes, line delta) pairs; a delta of -128 is no line. */
static __u32 line_310(const unsigned char *t, size_t len, __u32 first_line, __u32 instr)
{
	__u64 addr = 0, target = (__u64)instr * 2;
	__s64 line = first_line;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		__u64 end = addr + t[i];
		__s8 delta = (__s8)t[i + 1];

		if (delta != -128)
			line += delta;
		if (target >= addr && target < end)
			return delta == -128 || line < 0 ? 0 : line;
		addr = end;
	}
	return 0;
}

/* An unsigned varint of the location table: 6 bits a byte, bit 6 says more follow. */
static __u64 varint(const unsigned char *t, size_t len, size_t *i)
{
	__u64 v = 0;
	unsigned int shift = 0;

	while (*i < len) {
		unsigned char b = t[(*i)++];

		v |= (__u64)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 60)
			break;
	}
	return v;
}

static __s64 svarint(const unsigned char *t, size_t len, size_t *i)
{
	__u64 v = varint(t, len, i);

	return v & 1 ? -(__s64)(v >> 1) : (__s64)(v >> 1);
}

/*
 * 3.11+: entries of a first byte 1cccclll (code, length - 1 in code
 * units) and its operands: 15 no location, 14 long form (line delta, end
 * line, columns), 13 line delta only, 10-12 one line (delta code - 10) and
 * two column bytes, 0-9 the same line and one column byte.
 */
static __u32 line_311(const unsigned char *t, size_t len, __u32 first_line, __u32 instr)
{
	__s64 line = first_line;
	__u64 at = 0;
	size_t i = 0;

	while (i < len) {
		unsigned char b = t[i++];
		unsigned int code = (b >> 3) & 15, n = (b & 7) + 1;
		bool none = false;

		if (!(b & 0x80))
			return 0; /* not at an entry: damaged */
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			line += svarint(t, len, &i);
			varint(t, len, &i);
			varint(t, len, &i);
			varint(t, len, &i);
			break;
		case 13:
			line += svarint(t, len, &i);
			break;
		case 12:
		case 11:
		case 10:
			line += code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		if (instr >= at && instr < at + n)
			return none || line < 0 ? 0 : line;
		at += n;
	}
	return 0;
}

__u32 py_linetable__line(__u32 version, const unsigned char *t, size_t len, __u32 first_line,
			 __u32 instr)
{
	if (!t)
		return 0;
	return version < 0x030b ? line_310(t, len, first_line, instr)
				: line_311(t, len, first_line, instr);
}

__u32 py_code__line(const struct py_code *c, __u32 instr)
{
	return py_linetable__line(c->version, c->linetable, c->linetable_len, c->first_line, instr);
}
