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
#include "proc/maps.h"
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
	int status;    /* hs_vm__find's; -EAGAIN: the JVM has not started yet */
	char *file;    /* libjvm; NULL: none */
	char err[160]; /* why it cannot be read */
	struct hs_vm vm;
	struct code_cache methods; /* Method* -> struct hs_cached */
	struct code_cache scopes;  /* (pc, Method*) -> struct hs_scopes_cached */
};

static int hs_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct runtime_module *m = mod;
	const struct maps_entry *file = NULL;
	struct hs_proc *p = state;
	int ret;

	/* VMStructs and the code cache's place are fixed for an image, once set up */
	if (p->seq != v->exec_seq + 1) {
		p->err[0] = 0;
		ret = hs_vm__find(v->pid, v->maps, &p->vm, &file, p->err, sizeof(p->err));
		p->status = ret;
		if (ret == -EAGAIN) {
			/* libjvm is mapped, the JVM not started yet */
			snprintf(p->err, sizeof(p->err),
				 "the JVM has not set up its code cache yet");
			return PROC_PENDING;
		}
		if (ret && !p->err[0])
			snprintf(p->err, sizeof(p->err), "%s", strerror(-ret));
		free(p->file);
		p->file = !ret && file ? strdup(file->path) : NULL;
		p->found = !ret;
		p->seq = v->exec_seq + 1;
		if (m->verbose && ret && ret != -ENOENT && !p->reported) {
			fprintf(stderr, "labelprof: pid %d: JVM not read: %s\n", v->pid, p->err);
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
	free(p->file);
}

static void describe_json(const struct hs_proc *p, const struct proc_report *r)
{
	const struct lp_java_ref *ref = &p->vm.ref;
	__u32 i;

	fputs(",\"java\":", r->out);
	if (p->status == -ENOENT || (!p->seq && p->status != -EAGAIN)) {
		fputs("null", r->out);
		return;
	}
	fputs("{\"message\":", r->out);
	if (!p->found) {
		r->json_str(r->out, p->err);
		fputc('}', r->out);
		return;
	}
	fputs("\"ok\",\"version\":", r->out);
	r->json_str(r->out, p->vm.release);
	fputs(",\"file\":", r->out);
	r->json_str(r->out, p->file);
	fprintf(r->out,
		",\"vmstructs_entries\":%u,\"code_cache\":[%llu,%llu],\"interpreter\":[%llu,%llu],"
		"\"segment_size\":%u,\"nmethod_vtable\":%s,\"heaps\":[",
		p->vm.entries, (unsigned long long)ref->cc_low, (unsigned long long)ref->cc_high,
		(unsigned long long)ref->interp_low, (unsigned long long)ref->interp_high,
		1u << ref->log2_segment, ref->nmethod_vtable ? "true" : "false");
	for (i = 0; i < ref->heap_count; i++)
		fprintf(r->out, "%s[%llu,%llu]", i ? "," : "",
			(unsigned long long)ref->heaps[i].low,
			(unsigned long long)ref->heaps[i].high);
	fputs("]}", r->out);
}

/* The JVM, as record finds it, or why it cannot be read. */
static void hs_describe(void *mod, void *state, pid_t pid, const struct proc_report *r)
{
	const struct hs_proc *p = state;
	const struct lp_java_ref *ref = &p->vm.ref;

	if (r->json) {
		describe_json(p, r);
		return;
	}
	if (p->status == -ENOENT || (!p->seq && p->status != -EAGAIN))
		return;
	if (!p->found) {
		r->text_line(r->out, "  Java: not read: %s", p->err);
		return;
	}
	r->text_line(r->out, "  Java: HotSpot %s: %s, VMStructs read (%u entries)", p->vm.release,
		     p->file ? p->file : "", p->vm.entries);
	fprintf(r->out,
		"    code cache 0x%llx-0x%llx, %u heap%s, segments of %u bytes; interpreter "
		"0x%llx-0x%llx\n",
		(unsigned long long)ref->cc_low, (unsigned long long)ref->cc_high, ref->heap_count,
		ref->heap_count == 1 ? "" : "s", 1u << ref->log2_segment,
		(unsigned long long)ref->interp_low, (unsigned long long)ref->interp_high);
	if (!ref->nmethod_vtable)
		fputs("    compiled frames: not told from stubs (libjvm has no symbol table)\n",
		      r->out);
}

/* The BPF walk's counters (map java_counters). */
static int hs_counters(void *mod, struct proc_counters *out)
{
	struct lp_java_counters c;
	int ret = runtime_module__bpf_counters(mod, "java_counters", &c, sizeof(c));

	if (ret)
		return ret;
	*out = (struct proc_counters){
		.title = "Java",
		.n = 5,
		.c =
			{
				{"hotspot_interpreted_frames", "interpreted frames", c.interpreted},
				{"hotspot_compiled_frames", "compiled", c.compiled},
				{"hotspot_stub_frames", "of stubs", c.stubs},
				{"hotspot_pcs_in_no_blob", "pcs in no code blob", c.no_blob,
				 .problem = true, .clause = true},
				{"hotspot_faults", "faults", c.faults, .problem = true},
			},
	};
	return 0;
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
		return symbolizer__interp_frame(m->sym, FRAME_JAVA, NULL, NULL, 0, 0);
	return symbolizer__interp_frame(m->sym, FRAME_JAVA, meth->function, meth->file,
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
	__u64 out[LP_MAX_STACK_WORDS], now = now_ns();
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
	.describe = hs_describe,
	.counters = hs_counters,
};
