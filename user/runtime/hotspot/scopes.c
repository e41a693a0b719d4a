// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A compiled frame's scopes: the nmethod holding its pc (the code cache's
 * segment map, as BPF walks it), the PcDesc of the pc, and the chain of
 * scopes it points to in the nmethod's scopes data (scopeDesc.cpp: each
 * scope is its sender's offset, its method's index in the nmethod's
 * metadata and its bci, as compressed ints), innermost first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/mem.h"
#include "runtime/hotspot/hotspot.h"

#define SEGMAP_FREE	0xff
#define MAX_PCDESCS	65536 /* a larger table is not read */
#define SCOPE_READ	32    /* bytes of a scope read: its first three numbers fit */
#define SERIALIZED_NULL 0     /* DebugInformationRecorder::serialized_null: no sender */

static int read_word(pid_t pid, __u64 addr, __u64 *w)
{
	return proc_mem__read(pid, addr, w, sizeof(*w));
}

static int read_s32(pid_t pid, __u64 addr, __s32 *v)
{
	return proc_mem__read(pid, addr, v, sizeof(*v));
}

/* The blob holding pc: 0 or -ENOENT. */
static int blob_at(pid_t pid, const struct lp_java_ref *r, __u64 pc, __u64 *blob)
{
	const struct lp_java_heap *h = NULL;
	__u64 idx;
	__u32 i;
	__u8 b;
	int k;

	for (i = 0; i < r->heap_count && !h; i++)
		if (pc >= r->heaps[i].low && pc < r->heaps[i].high)
			h = &r->heaps[i];
	if (!h)
		return -ENOENT;
	idx = (pc - h->low) >> r->log2_segment;
	for (k = 0; k < LP_JAVA_SEGMAP_HOPS; k++) {
		if (proc_mem__read(pid, h->segmap + idx, &b, 1) || b == SEGMAP_FREE || idx < b)
			return -ENOENT;
		if (!b) {
			*blob = h->low + (idx << r->log2_segment) + r->heap_block;
			return 0;
		}
		idx -= b;
	}
	return -ENOENT;
}

/* Whether blob is an nmethod of method; its compile id into *id. */
static bool nmethod_of(pid_t pid, const struct hs_vm *vm, __u64 blob, __u64 method, __s32 *id)
{
	__u64 vtable, m;

	return vm->ref.nmethod_vtable && !read_word(pid, blob, &vtable) &&
	       vtable == vm->ref.nmethod_vtable && !read_word(pid, blob + vm->ref.nm_method, &m) &&
	       m == method && !read_s32(pid, blob + vm->off.nm_compile_id, id);
}

/* The scope decode offset of the first PcDesc at or after target (code offset). */
static int find_pcdesc(pid_t pid, const struct hs_offsets *o, __u64 blob, __s32 target,
		       __s32 *scope)
{
	__s32 pcs, end, n, i;
	unsigned char *t;
	int ret = -ENOENT;

	if (read_s32(pid, blob + o->nm_scopes_pcs, &pcs) ||
	    read_s32(pid, blob + o->nm_dependencies, &end))
		return -EFAULT;
	n = (end - pcs) / o->pcdesc_size;
	if (pcs <= 0 || n <= 0 || n > MAX_PCDESCS)
		return -ENOENT;
	t = malloc((size_t)n * o->pcdesc_size);
	if (!t)
		return -ENOMEM;
	if (proc_mem__read(pid, blob + pcs, t, (size_t)n * o->pcdesc_size)) {
		free(t);
		return -EFAULT;
	}
	/* PcDescs are sorted by pc offset; the first is a sentinel at -1 */
	for (i = 0; i < n; i++) {
		__s32 pc, sc;

		memcpy(&pc, t + i * o->pcdesc_size + o->pcdesc_pc, sizeof(pc));
		memcpy(&sc, t + i * o->pcdesc_size + o->pcdesc_scope, sizeof(sc));
		if (pc >= target) {
			*scope = sc;
			ret = sc > 0 ? 0 : -ENOENT;
			break;
		}
	}
	free(t);
	return ret;
}

int hs_scopes__read(pid_t pid, const struct hs_vm *vm, __u64 method, __u64 pc, bool leaf,
		    struct hs_scopes *s)
{
	const struct hs_offsets *o = &vm->off;
	__u64 blob, code_begin, code_end, data, meta;
	__s32 target, scope, meta_off;
	unsigned char buf[SCOPE_READ];
	__u32 sender, index, bci;
	size_t at;
	int ret;

	memset(s, 0, sizeof(*s));
	if (blob_at(pid, &vm->ref, pc, &blob) || !nmethod_of(pid, vm, blob, method, &s->compile_id))
		return -ENOENT;
	s->nmethod = blob;
	if (read_word(pid, blob + vm->ref.blob_code_begin, &code_begin) ||
	    read_word(pid, blob + o->blob_code_end, &code_end) ||
	    read_word(pid, blob + o->nm_scopes_data, &data) ||
	    read_s32(pid, blob + o->nm_metadata, &meta_off))
		return -EFAULT;
	if (pc < code_begin || pc >= code_end)
		return -ENOENT;
	/* a caller's pc is in its call: the PcDesc is the return address's */
	target = pc - code_begin + !leaf;
	ret = find_pcdesc(pid, o, blob, target, &scope);
	if (ret)
		return ret;
	meta = blob + meta_off;
	while (s->count < HS_MAX_SCOPES) {
		if (proc_mem__read(pid, data + scope, buf, sizeof(buf)))
			return -EFAULT;
		at = 0;
		if (!hs_unsigned5(buf, sizeof(buf), &at, &sender) ||
		    !hs_unsigned5(buf, sizeof(buf), &at, &index) ||
		    !hs_unsigned5(buf, sizeof(buf), &at, &bci) || !index)
			return -EINVAL;
		/* metadata index i is the word i - 1 */
		if (read_word(pid, meta + (index - 1) * 8ull, &s->method[s->count]))
			return -EFAULT;
		s->bci[s->count++] = (__s32)bci + o->entry_bci;
		if (sender == SERIALIZED_NULL)
			break;
		scope = sender;
	}
	/* the outermost scope is the nmethod's own method */
	return s->count && s->method[s->count - 1] == method ? 0 : -EINVAL;
}

bool hs_scopes__same(pid_t pid, const struct hs_vm *vm, const struct hs_scopes *s)
{
	__s32 id;

	return nmethod_of(pid, vm, s->nmethod, s->method[s->count - 1], &id) && id == s->compile_id;
}
