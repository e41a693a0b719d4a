// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Go's function table: the layouts are described in gopclntab.h's sources. */
#include <errno.h>
#include <string.h>

#include "symbolize/gopclntab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

static __u32 rd32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static __u64 rd64(const unsigned char *p)
{
	return rd32(p) | (__u64)rd32(p + 4) << 32;
}

/* Whether [off, off + n) lies in the table. */
static bool in(const struct gopcln *t, __u64 off, __u64 n)
{
	return off <= t->len && n <= t->len - off;
}

/* A NUL-terminated string at off within the table, or NULL. */
static const char *str_at(const struct gopcln *t, __u64 off)
{
	if (off >= t->len || !memchr(t->p + off, 0, t->len - off))
		return NULL;
	return (const char *)t->p + off;
}

int gopcln__init(struct gopcln *t, const void *p, size_t len)
{
	const unsigned char *h = p;
	unsigned int hdr, i;
	__u64 offs[5], ent;
	__u32 magic;

	memset(t, 0, sizeof(*t));
	if (len < 64)
		return -EINVAL;
	magic = rd32(h);
	if (magic == MAGIC_116)
		t->version = 116;
	else if (magic == MAGIC_118)
		t->version = 118;
	else if (magic == MAGIC_120)
		t->version = 120;
	else
		return -EINVAL;
	/* pad bytes, then the pc quantum (1 on x86, 4 on arm64) and the pointer size */
	if (h[4] || h[5] || (h[6] != 1 && h[6] != 2 && h[6] != 4) || h[7] != 8)
		return -EINVAL;
	hdr = t->version == 116 ? 24 : 32;
	if (len < hdr + sizeof(offs))
		return -EINVAL;
	t->p = h;
	t->len = len;
	t->quantum = h[6];
	if (t->version != 116)
		t->text_start = rd64(h + 24);
	for (i = 0; i < 5; i++) {
		offs[i] = rd64(h + hdr + 8 * i);
		if (offs[i] > len)
			return -EINVAL;
	}
	t->funcname = offs[0];
	t->cu = offs[1];
	t->filetab = offs[2];
	t->pctab = offs[3];
	t->pcln = offs[4];
	/* nfunc + 1 entries: the last one is the end of the last function */
	ent = t->version == 116 ? 16 : 8;
	if (rd64(h + 8) >= len / ent || !in(t, t->pcln, (rd64(h + 8) + 1) * ent))
		return -EINVAL;
	t->nfunc = rd64(h + 8);
	return t->nfunc ? 0 : -EINVAL;
}

/* Entry i of the function table: its pc and where its _func lies (offset into the table). */
static void entry(const struct gopcln *t, size_t i, __u64 *pc, __u64 *func)
{
	const unsigned char *e;

	if (t->version == 116) {
		e = t->p + t->pcln + 16 * i;
		*pc = rd64(e);
		*func = t->pcln + rd64(e + 8);
	} else {
		e = t->p + t->pcln + 8 * i;
		*pc = t->text_start + rd32(e);
		*func = t->pcln + (__u64)rd32(e + 4);
	}
}

/* The fixed part of a _func: up to and including nfuncdata. */
static unsigned int func_size(const struct gopcln *t)
{
	return t->version == 118 ? 40 : 44;
}

/* Field at off of the _func at func, after the entry (8 bytes in 1.16, 4 since). */
static __u32 func_field(const struct gopcln *t, __u64 func, unsigned int off)
{
	return rd32(t->p + func + (t->version == 116 ? 8 : 4) + off);
}

int gopcln__func(const struct gopcln *t, size_t i, __u64 *start, __u64 *end, const char **name)
{
	__u64 func, next;

	if (i >= t->nfunc)
		return -EINVAL;
	entry(t, i, start, &func);
	entry(t, i + 1, end, &next);
	if (*end <= *start || !in(t, func, func_size(t)))
		return -EINVAL;
	*name = str_at(t, t->funcname + (__u64)func_field(t, func, 0));
	return *name ? 0 : -EINVAL;
}

long gopcln__find(const struct gopcln *t, __u64 pc)
{
	size_t lo = 0, hi = t->nfunc;
	__u64 start, end, func;

	/* the last entry whose pc is <= pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		entry(t, mid, &start, &func);
		if (start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	entry(t, lo - 1, &start, &func);
	entry(t, lo, &end, &func);
	return pc >= start && pc < end ? (long)(lo - 1) : -1;
}

static bool uvarint(const struct gopcln *t, __u64 *off, __u32 *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 35; shift += 7) {
		unsigned char b;

		if (*off >= t->len)
			return false;
		b = t->p[(*off)++];
		*v |= (__u32)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * The value a pc-value table (at off in pctab) gives pc in a function
 * starting at entry_pc: pairs of a zigzag value delta and a pc delta (in
 * quanta), the first value delta from -1. false if the table ends first.
 */
static bool pcvalue(const struct gopcln *t, __u32 off, __u64 entry_pc, __u64 pc, __s32 *val)
{
	__u64 at = t->pctab + (__u64)off, cur = entry_pc;
	__u32 v = -1; /* wraps as Go's int32 does: unsigned */
	bool first = true;

	if (!off)
		return false;
	for (;;) {
		__u32 dv, dpc;

		if (!uvarint(t, &at, &dv) || (!dv && !first) || !uvarint(t, &at, &dpc))
			return false;
		v += (dv & 1) ? ~(dv >> 1) : dv >> 1;
		cur += (__u64)dpc * t->quantum;
		first = false;
		if (pc < cur) {
			*val = (__s32)v;
			return true;
		}
	}
}

int gopcln__line(const struct gopcln *t, size_t i, __u64 pc, const char **file, __u32 *line,
		 __u32 *start_line)
{
	__u64 start, end, func, next, at;
	__s32 fileno, ln;

	if (i >= t->nfunc)
		return -ENOENT;
	entry(t, i, &start, &func);
	entry(t, i + 1, &end, &next);
	if (pc < start || pc >= end || !in(t, func, func_size(t)))
		return -ENOENT;
	/* after the entry: pcfile @16, pcln @20, cuOffset @28, startLine @32 (Go >= 1.20) */
	if (!pcvalue(t, func_field(t, func, 20), start, pc, &ln) || ln <= 0)
		return -ENOENT;
	*line = ln;
	*start_line = t->version == 120 && (__s32)func_field(t, func, 32) > 0
			      ? func_field(t, func, 32)
			      : 0;
	*file = NULL;
	if (pcvalue(t, func_field(t, func, 16), start, pc, &fileno) && fileno >= 0) {
		at = t->cu + 4 * ((__u64)func_field(t, func, 28) + (__u64)fileno);
		if (in(t, at, 4) && rd32(t->p + at) != 0xffffffffu)
			*file = str_at(t, t->filetab + (__u64)rd32(t->p + at));
	}
	return 0;
}

int gopcln__search(struct gopcln *t, const void *seg, size_t len)
{
	static const unsigned char magics[][4] = {
		{0xf1, 0xff, 0xff, 0xff}, {0xf0, 0xff, 0xff, 0xff}, {0xfa, 0xff, 0xff, 0xff}};
	const unsigned char *p = seg;
	size_t off, k;

	for (off = 0; off + 64 <= len; off += 8) {
		if (p[off + 1] != 0xff || p[off + 2] != 0xff || p[off + 3] != 0xff)
			continue;
		for (k = 0; k < sizeof(magics) / sizeof(magics[0]); k++)
			if (p[off] == magics[k][0] && !gopcln__init(t, p + off, len - off))
				return 0;
	}
	return -ENOENT;
}
