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
	struct py_image img;
	__u64 bias;
	struct code_cache codes; /* code address -> struct py_cached */
};

static int py_inspect(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe)
{
	struct runtime_module *m = mod;
	struct py_proc *p = state;
	char err[160] = "";
	int ret;

	/* the same image with the same code: what was found still holds */
	if (p->seq != v->exec_seq + 1 || p->vm != v->exec_vm || !v->exec_vm) {
		ret = py_image__find(v->pid, v->maps, &p->img, &p->bias, NULL, err, sizeof(err));
		p->found = !ret;
		p->seq = v->exec_seq + 1;
		p->vm = v->exec_vm;
		if (m->verbose && ret == -ENOTSUP && !p->reported) {
			fprintf(stderr, "labelprof: pid %d: %s\n", v->pid, err);
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
		return symbolizer__interp_frame(m->sym, SYM_FRAME_PYTHON, NULL, NULL, 0, 0);
	return symbolizer__interp_frame(m->sym, SYM_FRAME_PYTHON, c->function, c->file,
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
	__u64 out[LP_MAX_STACK_DEPTH + LP_MAX_PY_FRAMES][2], now = now_ns();
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
};
