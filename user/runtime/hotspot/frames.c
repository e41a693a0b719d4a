// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * HotSpot methods read from a process's memory: Method -> ConstMethod (its
 * bytecodes, then its compressed line number table) -> ConstantPool (the
 * name and source file Symbols, the holder class and its name).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/mem.h"
#include "runtime/hotspot/hotspot.h"

#define MAX_LINE_TABLE (64 << 10) /* a larger table names no lines */

static int read_word(pid_t pid, __u64 addr, __u64 *w)
{
	return proc_mem__read(pid, addr, w, sizeof(*w));
}

static int read_u16(pid_t pid, __u64 addr, __u16 *v)
{
	return proc_mem__read(pid, addr, v, sizeof(*v));
}

/* The Symbol at addr as a new string, '/' turned into '.' if dots; NULL if unreadable. */
static char *read_symbol(pid_t pid, const struct hs_offsets *o, __u64 addr, bool dots)
{
	__u16 len;
	char *s;
	int i;

	if (!addr || read_u16(pid, addr + o->sym_length, &len))
		return NULL;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	if (proc_mem__read(pid, addr + o->sym_body, s, len)) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	for (i = 0; i < len; i++) {
		if (!s[i])
			s[i] = '?';
		else if (dots && s[i] == '/')
			s[i] = '.';
	}
	return s;
}

/* The Symbol of constant pool entry index, or 0. */
static __u64 cp_symbol(pid_t pid, const struct hs_offsets *o, __u64 cp, __u16 index)
{
	__s32 length;
	__u64 sym;

	if (!index || proc_mem__read(pid, cp + o->cp_length, &length, sizeof(length)) ||
	    index >= length || read_word(pid, cp + o->cp_size + index * 8ull, &sym))
		return 0;
	return sym;
}

/* What identifies the method at addr: its ConstMethod, pool, holder, indexes. */
static int fingerprint(pid_t pid, const struct hs_offsets *o, __u64 addr, __u64 fp[4])
{
	__u16 idx[3];
	int err;

	err = read_word(pid, addr + o->method_const, &fp[0]);
	if (err)
		return err;
	if (!fp[0] || fp[0] & 7)
		return -EINVAL;
	err = read_word(pid, fp[0] + o->const_constants, &fp[1]) ?:
	      read_u16(pid, fp[0] + o->const_name, &idx[0]) ?:
	      read_u16(pid, fp[0] + o->const_signature, &idx[1]) ?:
	      read_u16(pid, fp[0] + o->const_idnum, &idx[2]);
	if (err)
		return err;
	if (!fp[1] || fp[1] & 7)
		return -EINVAL;
	err = read_word(pid, fp[1] + o->cp_holder, &fp[2]);
	if (err)
		return err;
	if (!fp[2] || fp[2] & 7)
		return -EINVAL;
	fp[3] = (__u64)idx[0] | (__u64)idx[1] << 16 | (__u64)idx[2] << 32;
	return 0;
}

/* The compressed line number table after the bytecodes, if the method has one. */
static void read_lines(pid_t pid, const struct hs_offsets *o, struct hs_method *m)
{
	__u16 flags, code_size;
	__s32 words;
	__u64 start, end;

	if (read_u16(pid, m->const_method + o->const_flags, &flags) ||
	    read_u16(pid, m->const_method + o->const_code_size, &code_size) ||
	    proc_mem__read(pid, m->const_method + o->const_words, &words, sizeof(words)))
		return;
	m->code_size = code_size;
	if (!(flags & o->has_line_table))
		return;
	start = m->const_method + o->const_size + code_size;
	end = m->const_method + (__u64)words * 8;
	if (end <= start || end - start > MAX_LINE_TABLE)
		return;
	m->lines = malloc(end - start);
	if (m->lines && proc_mem__read(pid, start, m->lines, end - start)) {
		free(m->lines);
		m->lines = NULL;
	}
	if (m->lines)
		m->lines_len = end - start;
}

int hs_method__read(pid_t pid, const struct hs_vm *vm, __u64 addr, struct hs_method *m)
{
	const struct hs_offsets *o = &vm->off;
	__u64 klass_name, cp;
	char *klass, *name;
	__u16 idx;
	int err;

	memset(m, 0, sizeof(*m));
	m->addr = addr;
	if (!addr || addr & 7)
		return -EINVAL;
	err = fingerprint(pid, o, addr, m->fingerprint);
	if (err)
		return err;
	m->const_method = m->fingerprint[0];
	cp = m->fingerprint[1];
	if (read_word(pid, m->fingerprint[2] + o->klass_name, &klass_name))
		return -EINVAL;
	klass = read_symbol(pid, o, klass_name, true);
	name = read_symbol(pid, o, cp_symbol(pid, o, cp, m->fingerprint[3] & 0xffff), false);
	if (!klass || !name) {
		free(klass);
		free(name);
		return -EINVAL;
	}
	m->function = malloc(strlen(klass) + strlen(name) + 2);
	if (m->function)
		strcat(strcat(strcpy(m->function, klass), "."), name);
	free(klass);
	free(name);
	if (!m->function)
		return -ENOMEM;
	if (!read_u16(pid, cp + o->cp_source, &idx))
		m->file = read_symbol(pid, o, cp_symbol(pid, o, cp, idx), false);
	read_lines(pid, o, m);
	return 0;
}

bool hs_method__same(pid_t pid, const struct hs_vm *vm, const struct hs_method *m)
{
	__u64 fp[4];

	return !fingerprint(pid, &vm->off, m->addr, fp) && !memcmp(fp, m->fingerprint, sizeof(fp));
}

void hs_method__free(struct hs_method *m)
{
	free(m->function);
	free(m->file);
	free(m->lines);
	memset(m, 0, sizeof(*m));
}

int hs_method__bci(const struct hs_vm *vm, const struct hs_method *m, __u64 bcp)
{
	__u64 code = m->const_method + vm->off.const_size;

	/* a native method's frame holds bcp 0; the bcp of a method's first bytecode is code */
	if (bcp < code || bcp >= code + (m->code_size ? m->code_size : 1))
		return -1;
	return bcp - code;
}

bool hs_unsigned5(const unsigned char *t, size_t len, size_t *at, __u32 *v)
{
	__u32 sum = 0, shift = 0;
	int i;

	for (i = 0; i < 5; i++, shift += 6) {
		__u32 b;

		if (*at >= len)
			return false;
		b = t[(*at)++];
		sum += b << shift;
		if (b < 192 || i == 4)
			break;
	}
	*v = sum;
	return true;
}

static bool read_signed5(const unsigned char *t, size_t len, size_t *at, __s32 *v)
{
	__u32 u;

	if (!hs_unsigned5(t, len, at, &u))
		return false;
	*v = (__s32)(u >> 1) ^ -(__s32)(u & 1);
	return true;
}

__u32 hs_line_table__line(const unsigned char *t, size_t len, int bci)
{
	__s32 pc = 0, line = 0, best_pc = 0, best = 0, d_pc, d_line;
	size_t at = 0;

	if (bci < 0)
		return 0;
	/*
	 * Pairs of deltas (bci, line): one byte bci << 3 | line, or 0xff and two
	 * signed UNSIGNED5 numbers; 0 ends the table. Entries need not be in bci
	 * order: the line of bci is its own entry's, else that of the greatest
	 * bci below it (Method::line_number_from_bci).
	 */
	while (at < len && t[at]) {
		unsigned char b = t[at++];

		if (b == 0xff) {
			if (!read_signed5(t, len, &at, &d_pc) ||
			    !read_signed5(t, len, &at, &d_line))
				break;
		} else {
			d_pc = b >> 3;
			d_line = b & 7;
		}
		pc += d_pc;
		line += d_line;
		if (pc == bci)
			return line > 0 ? line : 0;
		if (pc < bci && pc >= best_pc) {
			best_pc = pc;
			best = line;
		}
	}
	return best > 0 ? best : 0;
}

__u32 hs_method__line(const struct hs_method *m, int bci)
{
	return m->lines ? hs_line_table__line(m->lines, m->lines_len, bci) : 0;
}
