// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython as a registry module (docs/design.md section 11): inspect finds
 * the interpreter among the mapped files and gives BPF its offsets; frames
 * names the code objects BPF found and puts the frames each
 * _PyEval_EvalFrameDefault call ran in place of that call's native frame.
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
#include "runtime/python/python.h"
#include "symbolize/symbols.h"

/* An address that held no code object is read again when used this long after. */
#define BAD_RETRY_NS (100ull * 1000 * 1000)

struct py_cached {
	struct code_entry e; /* bad: not a code object */
	struct py_code code;
};

static void free_code(struct code_entry *e)
{
	py_code__free(&container_of(e, struct py_cached, e)->code);
}

static const struct code_cache_kind code_kind = {
	.size = sizeof(struct py_cached),
	.free = free_code,
	.check_ns = BAD_RETRY_NS,
};

struct py_proc {
	__u64 seq; /* exec count + 1 and code pages when the maps were looked at; 0: never */
	__u64 vm;
	bool found;
	bool reported;
	int status;    /* py_image__find's */
	char *file;    /* the interpreter's file; NULL: none */
	char err[160]; /* why it cannot be read */
	struct py_image img;
	__u64 bias;
	struct code_cache codes; /* code address -> struct py_cached */
};

static int py_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct runtime_module *m = mod;
	const struct maps_entry *file = NULL;
	struct py_proc *p = state;
	int ret;

	/* the same image with the same code: what was found still holds */
	if (p->seq != v->exec_seq + 1 || p->vm != v->exec_vm || !v->exec_vm) {
		p->err[0] = 0;
		ret = py_image__find(v->pid, v->maps, &p->img, &p->bias, &file, p->err,
				     sizeof(p->err));
		if (ret && !p->err[0])
			snprintf(p->err, sizeof(p->err), "%s", strerror(-ret));
		free(p->file);
		p->file = !ret && file ? strdup(file->path) : NULL;
		p->status = ret;
		p->found = !ret;
		p->seq = v->exec_seq + 1;
		p->vm = v->exec_vm;
		if (m->verbose && ret == -ENOTSUP && !p->reported) {
			fprintf(stderr, "labelprof: pid %d: %s\n", v->pid, p->err);
			p->reported = true;
		}
	}
	if (!p->found)
		return 0;
	if (m->verbose && !p->reported) {
		fprintf(stderr, "labelprof: pid %d: Python %u.%u (offsets: %s)\n", v->pid,
			p->img.version >> 8, p->img.version & 0xff, p->img.source);
		p->reported = true;
	}
	recipe->py = p->img.ref;
	recipe->py.interp_head = p->img.interp_head + p->bias;
	return 0;
}

static void py_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct py_proc *p = state;

	code_cache__clear(&p->codes, &code_kind);
	free(p->file);
}

/* The interpreter, as record finds it, or why it cannot be read; its thread states. */
static void py_describe(void *mod, void *state, pid_t pid, const struct proc_report *r)
{
	__u64 tids[LP_PY_MAX_THREADS];
	struct py_proc *p = state;
	/* before 3.11 a thread state holds its pthread_t, not its tid */
	const char *ids = p->img.ref.flags & LP_PY_NATIVE_TID ? "tid" : "pthread_t";
	int n = 0, i;

	if (p->seq && p->found)
		n = py_thread_states(pid, &p->img, p->bias, tids, ARRAY_SIZE(tids));
	if (r->json) {
		fputs(",\"python\":", r->out);
		if (!p->seq || p->status == -ENOENT) {
			fputs("null", r->out);
			return;
		}
		fputs("{\"message\":", r->out);
		if (!p->found) {
			r->json_str(r->out, p->err);
			fputc('}', r->out);
			return;
		}
		fprintf(r->out, "\"ok\",\"version\":\"%u.%u\",\"file\":", p->img.version >> 8,
			p->img.version & 0xff);
		r->json_str(r->out, p->file);
		fprintf(r->out, ",\"offsets\":\"%s\",\"thread_states\":", p->img.source);
		if (n < 0)
			fputs("null", r->out);
		else
			fprintf(r->out, "%d", n);
		fprintf(r->out, ",\"thread_ids\":\"%s\",\"threads\":[", ids);
		for (i = 0; i < n; i++)
			fprintf(r->out, "%s%llu", i ? "," : "", (unsigned long long)tids[i]);
		fputs("]}", r->out);
		return;
	}
	if (!p->seq || p->status == -ENOENT)
		return;
	if (!p->found) {
		r->text_line(r->out, "  Python: not read: %s", p->err);
		return;
	}
	r->text_line(r->out, "  Python %u.%u: %s, offsets from %s", p->img.version >> 8,
		     p->img.version & 0xff, p->file ? p->file : "", p->img.source);
	if (n < 0) {
		fprintf(r->out, "    thread states: not read: %s\n", strerror(-n));
		return;
	}
	fprintf(r->out, "    thread states: %d%s", n,
		n ? (p->img.ref.flags & LP_PY_NATIVE_TID ? ", tids" : ", pthread_t") : "");
	for (i = 0; i < n; i++)
		fprintf(r->out, " %llu", (unsigned long long)tids[i]);
	fputc('\n', r->out);
}

/* The BPF walk's counters (map py_counters). */
static int py_counters(void *mod, struct proc_counters *out)
{
	struct lp_py_counters c;
	int ret = runtime_module__bpf_counters(mod, "py_counters", &c, sizeof(c));

	if (ret)
		return ret;
	*out = (struct proc_counters){
		.title = "Python",
		.n = 5,
		.c =
			{
				{"python_walks", "walks", c.walks},
				{"python_frames", "frames", c.frames},
				{"python_samples_without_thread_state",
				 "samples of threads without a thread state", c.no_thread},
				{"python_faults", "faults", c.faults, .problem = true},
				{"python_truncated_walks",
				 "truncated at " __stringify(LP_MAX_PY_FRAMES) " frames",
				 c.truncated},
			},
	};
	return 0;
}

static __u64 code_ident(const struct py_code *c)
{
	return lp_py_ident(c->fingerprint[2], c->fingerprint[4], c->fingerprint[5]);
}

/*
 * The code object at addr, named; NULL if none, or if the code object there
 * now is not the one sampled, ident (freed, its address reused). A code
 * object read before is known by ident without reading it again, even once
 * the process has exited.
 */
static const struct py_code *code_at(struct py_proc *p, pid_t pid, __u64 addr, __u64 ident,
				     __u64 now)
{
	struct code_entry *e;
	struct py_cached *c;
	bool due;

	e = code_cache__entry(&p->codes, &code_kind, addr, 0, now, &due);
	if (!e)
		return NULL;
	c = container_of(e, struct py_cached, e);
	if (!e->bad && code_ident(&c->code) == ident)
		return &c->code;
	if (e->bad && !due)
		return NULL;
	py_code__free(&c->code);
	e->checked_ns = now;
	e->bad = py_code__read(pid, &p->img, p->bias, addr, &c->code) != 0;
	return e->bad || code_ident(&c->code) != ident ? NULL : &c->code;
}

/* The token of the Python frame BPF stored as raw and ident. */
static __u64 name_frame(struct runtime_module *m, struct py_proc *p, pid_t pid, __u64 raw,
			__u64 ident, __u64 now)
{
	__u64 addr = (raw & LP_PY_CODE_MASK) << 3;
	__u32 instr = (raw >> LP_PY_INSTR_SHIFT) & LP_PY_INSTR_MAX;
	const struct py_code *c = code_at(p, pid, addr, ident, now);

	if (!c)
		return symbolizer__interp_frame(m->sym, FRAME_PYTHON, NULL, NULL, 0, 0);
	return symbolizer__interp_frame(m->sym, FRAME_PYTHON, c->function, c->file,
					py_code__line(c, instr), c->first_line);
}

static bool is_python(__u64 ip)
{
	return ip >> 60 == LP_PY_TAG;
}

static bool in_eval(const struct py_proc *p, __u64 ip)
{
	return ip >= p->img.eval + p->bias && ip < p->img.eval_end + p->bias;
}

/*
 * BPF stored the native frames, then the Python frames innermost first (two
 * words each), each _PyEval_EvalFrameDefault call's last marked LP_PY_ENTRY.
 * Each native frame of that function, leaf first, takes the next call's
 * frames; the calls the native walk did not reach go at the root end.
 */
static size_t py_frames(void *mod, void *state, pid_t pid, __u64 *ips, size_t n, size_t cap)
{
	/* (a Python frame's two words, or a native frame and 0) */
	__u64 out[LP_MAX_USTACK_WORDS + LP_MAX_PY_FRAMES][2], now = now_ns();
	struct py_proc *p = state;
	size_t native = 0, py, k = 0, i;

	if (!p->found)
		return n;
	while (native < n && !is_python(ips[native]))
		native++;
	/* a walk cut in the middle of a frame's words leaves that frame out */
	n = native + (n - native) / LP_PY_FRAME_WORDS * LP_PY_FRAME_WORDS;
	py = native;
	for (i = 0; i < native && k < ARRAY_SIZE(out); i++) {
		/* a return address is in its call: one byte back */
		if (py < n && in_eval(p, i ? ips[i] - 1 : ips[i])) {
			do {
				out[k][0] = ips[py];
				out[k++][1] = ips[py + 1];
				py += LP_PY_FRAME_WORDS;
			} while (!(ips[py - LP_PY_FRAME_WORDS] & LP_PY_ENTRY) && py < n &&
				 k < ARRAY_SIZE(out));
			continue;
		}
		out[k][0] = ips[i];
		out[k++][1] = 0;
	}
	for (; py < n && k < ARRAY_SIZE(out); py += LP_PY_FRAME_WORDS) {
		out[k][0] = ips[py];
		out[k++][1] = ips[py + 1];
	}
	if (k > cap)
		k = cap;
	for (i = 0; i < k; i++)
		ips[i] = is_python(out[i][0]) ? name_frame(mod, p, pid, out[i][0], out[i][1], now)
					      : out[i][0];
	return k;
}

const struct proc_module python_module = {
	.name = "Python",
	.state_size = sizeof(struct py_proc),
	.open = runtime_module__open,
	.close = runtime_module__close,
	.inspect = py_inspect,
	.end = py_end,
	.frames = py_frames,
	.describe = py_describe,
	.counters = py_counters,
};
