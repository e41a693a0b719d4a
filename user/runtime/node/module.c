// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Node.js (V8) as a registry module (docs/design.md section 13): inspect
 * reads the V8 constants of the node executable or libnode once per image
 * and gives BPF what finds JavaScript frames; frames names the functions of
 * those frames.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/clock.h"
#include "lib/compiler.h"
#include "registry/module.h"
#include "runtime/code_cache.h"
#include "runtime/node/node.h"
#include "runtime/runtime_module.h"
#include "symbolize/symbols.h"

/* An address that held no function BPF saw is read again when used this long after. */
#define BAD_RETRY_NS (100ull * 1000 * 1000)

struct node_cached {
	struct code_entry e; /* bad: could not be named */
	struct node_function f;
};

static void free_function(struct code_entry *e)
{
	node_function__free(&container_of(e, struct node_cached, e)->f);
}

static const struct code_cache_kind function_kind = {
	.size = sizeof(struct node_cached),
	.free = free_function,
	.check_ns = BAD_RETRY_NS,
};

struct node_proc {
	__u64 seq; /* exec count + 1 when the binary was read; 0: never */
	bool found;
	bool reported;
	int status;    /* node__find_js_layout's */
	char msg[320]; /* the file the layout came from, or why none */
	struct node_js_layout layout;
	struct code_cache functions; /* (SharedFunctionInfo, ident) -> struct node_cached */
};

static int node_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct runtime_module *m = mod;
	struct node_proc *p = state;
	int ret;

	/* the constants are the binary's: once per image */
	if (p->seq != v->exec_seq + 1) {
		p->msg[0] = 0;
		ret = node__find_js_layout(v->pid, v->maps, &p->layout, p->msg, sizeof(p->msg));
		p->status = ret;
		p->found = !ret;
		p->seq = v->exec_seq + 1;
		if (m->verbose && !p->reported && ret != -ENOENT) {
			fprintf(stderr, "labelprof: pid %d: %s%s\n", v->pid,
				ret ? "JavaScript frames not read: " : "V8 JavaScript frames from ",
				p->msg);
			p->reported = true;
		}
	}
	if (p->found)
		recipe->v8 = p->layout.ref;
	return 0;
}

static void node_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct node_proc *p = state;

	code_cache__clear(&p->functions, &function_kind);
}

/* Where JavaScript frames are found from, as record finds it, or why not. */
static void node_describe(void *mod, void *state, pid_t pid, const struct proc_report *r)
{
	const struct node_proc *p = state;
	bool none = !p->seq || p->status == -ENOENT;

	if (r->json) {
		fputs(",\"javascript\":", r->out);
		if (none) {
			fputs("null", r->out);
			return;
		}
		fputs("{\"message\":", r->out);
		r->json_str(r->out, p->found ? "ok" : p->msg);
		if (p->found) {
			fputs(",\"file\":", r->out);
			r->json_str(r->out, p->msg);
			fprintf(r->out, ",\"fp_function\":%d,\"fp_marker\":%d",
				p->layout.ref.fp_function, p->layout.ref.fp_marker);
		}
		fputc('}', r->out);
	} else if (p->found) {
		r->text_line(r->out, "  JavaScript frames: V8 postmortem constants of %s", p->msg);
	} else if (!none) {
		r->text_line(r->out, "  JavaScript frames: not read: %s", p->msg);
	}
}

/* The BPF walk's counters (map v8_counters). */
static int node_counters(void *mod, struct proc_counters *out)
{
	struct lp_v8_counters c;
	int ret = runtime_module__bpf_counters(mod, "v8_counters", &c, sizeof(c));

	if (ret)
		return ret;
	*out = (struct proc_counters){
		.title = "JavaScript",
		.n = 4,
		.c =
			{
				{"node_js_frames", "frames", c.js},
				{"node_typed_frames", "typed V8 frames", c.typed},
				{"node_frames_without_function",
				 "frames of V8's shape without a function", c.not_js},
				{"node_faults", "faults", c.faults, .problem = true},
			},
	};
	return 0;
}

/*
 * The function of SharedFunctionInfo sfi as BPF saw it (ident); NULL if it
 * cannot be named. Named once: the pair names one function even after a
 * moving GC took it elsewhere (another function there has another ident).
 */
static const struct node_function *function_at(struct node_proc *p, pid_t pid, __u64 sfi,
					       __u64 ident, __u64 now)
{
	struct node_cached *c;
	struct code_entry *e;
	bool due;

	e = code_cache__entry(&p->functions, &function_kind, sfi, ident, now, &due);
	if (!e)
		return NULL;
	c = container_of(e, struct node_cached, e);
	if (e->bad && due) {
		node_function__free(&c->f);
		e->checked_ns = now;
		e->bad = node_function__read(pid, &p->layout, sfi, ident, &c->f) != 0;
	}
	return e->bad ? NULL : &c->f;
}

static bool is_js(__u64 ip)
{
	return ip >> 60 == LP_JS_TAG;
}

/* BPF stored each JavaScript frame as two words in place of its pc: its token instead. */
static size_t node_frames(void *mod, void *state, pid_t pid, __u64 *ips, size_t n, size_t cap)
{
	struct runtime_module *m = mod;
	struct node_proc *p = state;
	const struct node_function *f;
	__u64 now = now_ns(), ident;
	size_t i, k = 0;

	if (!p->found)
		return n;
	for (i = 0; i < n; i++) {
		if (!is_js(ips[i])) {
			ips[k++] = ips[i];
			continue;
		}
		if (ips[i] & LP_JS_SECOND)
			continue;
		/* a pair the walk's depth limit cut has no second word: not named */
		ident = i + 1 < n && is_js(ips[i + 1]) && (ips[i + 1] & LP_JS_SECOND)
				? ips[i + 1] & LP_JS_ADDR_MASK
				: 0;
		f = ident ? function_at(p, pid, ips[i] & LP_JS_ADDR_MASK, ident, now) : NULL;
		ips[k++] = symbolizer__interp_frame(
			m->sym, FRAME_JS, f ? (f->name ? f->name : "(anonymous)") : NULL,
			f ? f->file : NULL, f ? f->line : 0, f ? f->line : 0);
	}
	return k < cap ? k : cap;
}

const struct proc_module node_module = {
	.name = "Node.js",
	.state_size = sizeof(struct node_proc),
	.open = runtime_module__open,
	.close = runtime_module__close,
	.inspect = node_inspect,
	.end = node_end,
	.frames = node_frames,
	.describe = node_describe,
	.counters = node_counters,
};
