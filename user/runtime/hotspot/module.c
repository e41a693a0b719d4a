// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * HotSpot JVMs as a registry module (docs/design.md section 12): inspect
 * reads the JVM's VMStructs once per image and gives BPF the code cache and
 * frame layout; frames names the methods of the Java frames BPF found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/compiler.h"
#include "registry/module.h"
#include "runtime/code_cache.h"
#include "runtime/runtime_module.h"
#include "runtime/hotspot/hotspot.h"
#include "symbolize/symbols.h"

/* A method or scopes named are checked again when used this long after they last were. */
#define CHECK_NS (100ull * 1000 * 1000)

struct hs_cached {
	struct code_entry e; /* bad: not a method (any more) */
	struct hs_method method;
};

struct hs_scopes_cached {
	struct code_entry e; /* bad: no scopes: the frame is its method alone */
	struct hs_scopes scopes;
};

static void free_method(struct code_entry *e)
{
	hs_method__free(&container_of(e, struct hs_cached, e)->method);
}

static const struct code_cache_kind method_kind = {
	.size = sizeof(struct hs_cached),
	.free = free_method,
	.check_ns = CHECK_NS,
};

static const struct code_cache_kind scopes_kind = {
	.size = sizeof(struct hs_scopes_cached),
	.check_ns = CHECK_NS,
};

struct hs_proc {
	__u64 seq; /* exec count + 1 when the JVM was read; 0: never */
	bool found;
	bool reported;
	struct hs_vm vm;
	struct code_cache methods; /* Method* -> struct hs_cached */
	struct code_cache scopes;  /* (pc, Method*) -> struct hs_scopes_cached */
};

static int hs_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct runtime_module *m = mod;
	struct hs_proc *p = state;
	char err[160] = "";
	int ret;

	/* VMStructs and the code cache's place are fixed for an image, once set up */
	if (p->seq != v->exec_seq + 1) {
		ret = hs_vm__find(v->pid, v->maps, &p->vm, NULL, err, sizeof(err));
		if (ret == -EAGAIN) /* libjvm is mapped, the JVM not started yet */
			return PROC_PENDING;
		p->found = !ret;
		p->seq = v->exec_seq + 1;
		if (m->verbose && ret && ret != -ENOENT && !p->reported) {
			fprintf(stderr, "labelprof: pid %d: JVM not read: %s\n", v->pid,
				err[0] ? err : strerror(-ret));
			p->reported = true;
		}
	}
	if (!p->found)
		return 0;
	if (m->verbose && !p->reported) {
		fprintf(stderr, "labelprof: pid %d: HotSpot %s, code cache 0x%llx-0x%llx\n", v->pid,
			p->vm.release, (unsigned long long)p->vm.ref.cc_low,
			(unsigned long long)p->vm.ref.cc_high);
		p->reported = true;
	}
	recipe->java = p->vm.ref;
	return 0;
}

static void hs_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct hs_proc *p = state;

	code_cache__clear(&p->methods, &method_kind);
	code_cache__clear(&p->scopes, &scopes_kind);
}

/* The method at addr, named (read, or checked again when due); NULL if none. */
static const struct hs_method *method_at(struct hs_proc *p, pid_t pid, __u64 addr, __u64 now)
{
	struct code_entry *e;
	struct hs_cached *c;
	bool due;

	e = code_cache__entry(&p->methods, &method_kind, addr, 0, now, &due);
	if (!e)
		return NULL;
	c = container_of(e, struct hs_cached, e);
	if (due && !e->bad && hs_method__same(pid, &p->vm, &c->method)) {
		e->checked_ns = now;
	} else if (due) {
		hs_method__free(&c->method);
		e->checked_ns = now;
		e->bad = hs_method__read(pid, &p->vm, addr, &c->method) != 0;
	}
	return e->bad ? NULL : &c->method;
}

static bool is_java(__u64 ip)
{
	return ip >> 60 == LP_JAVA_TAG;
}

/*
 * The scopes of a compiled frame of method at pc (leaf: where it was
 * interrupted), read or checked again when due; NULL if none.
 */
static const struct hs_scopes *scopes_at(struct hs_proc *p, pid_t pid, __u64 method, __u64 pc,
					 bool leaf, __u64 now)
{
	/* a leaf's pc and a caller's pc (its call's last byte) are told apart by bit 63 */
	__u64 key = pc | (__u64)leaf << 63;
	struct hs_scopes_cached *c;
	struct code_entry *e;
	bool due;

	e = code_cache__entry(&p->scopes, &scopes_kind, key, method, now, &due);
	if (!e)
		return NULL;
	c = container_of(e, struct hs_scopes_cached, e);
	if (due && !e->bad && hs_scopes__same(pid, &p->vm, &c->scopes)) {
		e->checked_ns = now;
	} else if (due) {
		e->checked_ns = now;
		e->bad = hs_scopes__read(pid, &p->vm, method, pc, leaf, &c->scopes) != 0;
	}
	return e->bad ? NULL : &c->scopes;
}

/* The token of method at bci (-1: unknown). */
static __u64 method_token(struct runtime_module *m, struct hs_proc *p, pid_t pid, __u64 method,
			  int bci, __u64 now)
{
	const struct hs_method *meth = method_at(p, pid, method, now);

	if (!meth)
		return symbolizer__interp_frame(m->sym, SYM_FRAME_JAVA, NULL, NULL, 0, 0);
	return symbolizer__interp_frame(m->sym, SYM_FRAME_JAVA, meth->function, meth->file,
					hs_method__line(meth, bci), 0);
}

/*
 * The tokens of the Java frame BPF stored as the words w0 (method) and w1
 * (bcp or pc; 0: cut by the depth limit) into out (room for cap): an
 * interpreted frame's method at its bci, a compiled frame's scopes
 * (inlined methods first). How many.
 */
static size_t name_frame(struct runtime_module *m, struct hs_proc *p, pid_t pid, __u64 w0, __u64 w1,
			 bool leaf, __u64 *out, size_t cap, __u64 now)
{
	__u64 method = w0 & LP_JAVA_ADDR_MASK, at = w1 & LP_JAVA_ADDR_MASK;
	const struct hs_method *meth;
	const struct hs_scopes *s;
	size_t k;

	if (!(w0 & LP_JAVA_COMPILED)) {
		meth = method_at(p, pid, method, now);
		out[0] = method_token(m, p, pid, method,
				      meth && at ? hs_method__bci(&p->vm, meth, at) : -1, now);
		return 1;
	}
	s = at ? scopes_at(p, pid, method, at, leaf, now) : NULL;
	if (!s) {
		out[0] = method_token(m, p, pid, method, -1, now);
		return 1;
	}
	for (k = 0; k < s->count && k < cap; k++)
		out[k] = method_token(m, p, pid, s->method[k], s->bci[k], now);
	return k;
}

/* BPF stored each Java frame as two words in place of its pc: its tokens instead. */
static size_t hs_frames(void *mod, void *state, pid_t pid, __u64 *ips, size_t n, size_t cap)
{
	__u64 out[LP_MAX_STACK_DEPTH * 2 + LP_MAX_PY_WORDS], now = now_ns();
	struct hs_proc *p = state;
	size_t i, k = 0;

	if (!p->found)
		return n;
	for (i = 0; i < n && k < ARRAY_SIZE(out); i++) {
		if (!is_java(ips[i]))
			out[k++] = ips[i];
		else if (!(ips[i] & LP_JAVA_SECOND))
			/* a pair the walk's depth limit cut has no second word */
			k += name_frame(mod, p, pid, ips[i],
					i + 1 < n && is_java(ips[i + 1]) &&
							(ips[i + 1] & LP_JAVA_SECOND)
						? ips[i + 1]
						: 0,
					i == 0, out + k, ARRAY_SIZE(out) - k, now);
	}
	if (k > cap)
		k = cap;
	memcpy(ips, out, k * sizeof(*ips));
	return k;
}

const struct proc_module hotspot_module = {
	.name = "HotSpot",
	.state_size = sizeof(struct hs_proc),
	.open = runtime_module__open,
	.close = runtime_module__close,
	.inspect = hs_inspect,
	.end = hs_end,
	.frames = hs_frames,
};
