// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which mapped file is a CPython interpreter, and the offsets of the
 * structures labelprof reads in it (docs/design.md section 11). 3.13 and
 * later describe themselves (_Py_DebugOffsets at the start of _PyRuntime);
 * for 3.10 to 3.12 the offsets are a table, from the CPython headers of each
 * version (Include/internal/pycore_runtime.h, pycore_interp.h,
 * pycore_frame.h, cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h;
 * 3.10: cpython/frameobject.h), for x86-64 and aarch64 (LP64), checked
 * against the interpreters by tests/unit/test_python.c and tests/e2e/test_python.py.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf.h"
#include "proc/maps.h"
#include "runtime/runtime_module.h"
#include "runtime/python/python.h"

struct py_table {
	__u32 version;
	__u16 interp_head; /* in _PyRuntimeState */
	struct lp_py_ref ref;
	struct py_code_offsets code;
};

static const struct py_table tables[] = {
	{
		.version = 0x030a,
		.interp_head = 32,
		.ref = {.flags = LP_PY_FRAME_OBJECT,
			.threads_head = 8, /* tstate_head */
			.tstate_next = 8,
			.tstate_id = 176, /* thread_id: pthread_self() */
			.tstate_frame = 24,
			.frame_previous = 24, /* f_back */
			.frame_code = 32,
			.frame_instr = 96}, /* f_lasti */
		.code = {.name = 112, .filename = 104, .firstlineno = 40, .linetable = 120,
			 .ascii_size = 48, .compact_size = 72},
	},
	{
		.version = 0x030b,
		.interp_head = 40,
		.ref = {.flags = LP_PY_NATIVE_TID | LP_PY_CFRAME | LP_PY_IS_ENTRY,
			.threads_head = 16,
			.tstate_next = 8,
			.tstate_id = 160,
			.tstate_frame = 56,
			.cframe_frame = 8,
			.frame_previous = 48,
			.frame_code = 32,
			.frame_instr = 56, /* prev_instr */
			.frame_mark = 68}, /* is_entry */
		.code = {.name = 120, .qualname = 128, .filename = 112, .firstlineno = 72,
			 .linetable = 136, .adaptive = 184, .ascii_size = 48, .compact_size = 72},
	},
	{
		.version = 0x030c,
		.interp_head = 40,
		.ref = {.flags = LP_PY_NATIVE_TID | LP_PY_CFRAME | LP_PY_SHIM,
			.threads_head = 72,
			.tstate_next = 8,
			.tstate_id = 144,
			.tstate_frame = 56,
			.cframe_frame = 0,
			.frame_previous = 8,
			.frame_code = 0,
			.frame_instr = 56, /* prev_instr */
			.frame_mark = 70}, /* owner */
		.code = {.name = 120, .qualname = 128, .filename = 112, .firstlineno = 68,
			 .linetable = 136, .adaptive = 192, .ascii_size = 40, .compact_size = 56},
	},
};

/* _Py_DebugOffsets of 3.13, as 64-bit words from the start of _PyRuntime. */
enum {
	DO_COOKIE = 0,
	DO_VERSION = 1,
	DO_FREE_THREADED = 2,
	DO_INTERP_HEAD = 5,
	DO_THREADS_HEAD = 9,
	DO_TSTATE_NEXT = 21,
	DO_TSTATE_FRAME = 23,
	DO_TSTATE_NATIVE_ID = 25,
	DO_FRAME_PREVIOUS = 29,
	DO_FRAME_EXECUTABLE = 30,
	DO_FRAME_INSTR = 31,
	DO_FRAME_OWNER = 33,
	DO_CODE_FILENAME = 35,
	DO_CODE_NAME = 36,
	DO_CODE_QUALNAME = 37,
	DO_CODE_LINETABLE = 38,
	DO_CODE_FIRSTLINENO = 39,
	DO_CODE_ADAPTIVE = 43,
	DO_BYTES_OB_SIZE = 65,
	DO_BYTES_OB_SVAL = 66,
	DO_UNICODE_ASCII_SIZE = 70,
	DO_WORDS = 71,
};

#define BYTES_OB_SIZE 16
#define BYTES_OB_SVAL 32

/* The largest of the offsets plus a word: what one read of the structure takes. */
static __u16 span(__u16 a, __u16 b, __u16 c, __u16 d)
{
	__u16 m = a > b ? a : b;

	m = m > c ? m : c;
	m = m > d ? m : d;
	return m + 8;
}

/* What BPF reads of a thread state and of a frame at once. */
static int read_sizes(struct py_image *img, char *err, size_t err_len)
{
	struct lp_py_ref *r = &img->ref;
	__u16 ident = img->code.qualname ? img->code.qualname : img->code.name;

	r->tstate_read = span(r->tstate_next, r->tstate_id, r->tstate_frame, 0);
	r->frame_read = span(r->frame_previous, r->frame_code, r->frame_instr, r->frame_mark);
	/* BPF reads the words that identify a code object (lp_py_ident) in one go */
	if (img->code.linetable != ident + 8) {
		snprintf(err, err_len, "Python %u.%u: the code object's line table does not follow its name",
			 img->version >> 8, img->version & 0xff);
		return -ENOTSUP;
	}
	r->code_ident = ident;
	return 0;
}

static bool fits(const __u64 *w, const int *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[idx[i]] > 240) /* a structure BPF reads in one go of at most 256 bytes */
			return false;
	return true;
}

static int from_debug_offsets(struct elf_file *ef, struct py_image *img, char *err, size_t err_len)
{
	static const int read_by_bpf[] = {DO_TSTATE_NEXT,    DO_TSTATE_FRAME,	  DO_TSTATE_NATIVE_ID,
					  DO_FRAME_PREVIOUS, DO_FRAME_EXECUTABLE, DO_FRAME_INSTR,
					  DO_FRAME_OWNER};
	__u64 w[DO_WORDS];
	struct lp_py_ref *r = &img->ref;

	if (elf_file__read_vaddr(ef, img->runtime, w, sizeof(w)) || memcmp(w, "xdebugpy", 8)) {
		snprintf(err, err_len, "Python %u.%u: no _Py_DebugOffsets in _PyRuntime",
			 img->version >> 8, img->version & 0xff);
		return -ENOTSUP;
	}
	if (w[DO_VERSION] >> 16 != img->version) {
		snprintf(err, err_len, "Python %u.%u: _Py_DebugOffsets of version %#llx",
			 img->version >> 8, img->version & 0xff, (unsigned long long)w[DO_VERSION]);
		return -ENOTSUP;
	}
	if (w[DO_FREE_THREADED]) {
		snprintf(err, err_len, "Python %u.%u: free-threaded builds are not read",
			 img->version >> 8, img->version & 0xff);
		return -ENOTSUP;
	}
	if (!fits(w, read_by_bpf, sizeof(read_by_bpf) / sizeof(read_by_bpf[0])) ||
	    w[DO_INTERP_HEAD] > 0xffff || w[DO_THREADS_HEAD] > 0xffff || w[DO_CODE_ADAPTIVE] > 0xffff) {
		snprintf(err, err_len, "Python %u.%u: offsets out of range", img->version >> 8,
			 img->version & 0xff);
		return -ENOTSUP;
	}
	img->interp_head = img->runtime + w[DO_INTERP_HEAD];
	r->flags = LP_PY_NATIVE_TID | LP_PY_SHIM;
	r->threads_head = w[DO_THREADS_HEAD];
	r->tstate_next = w[DO_TSTATE_NEXT];
	r->tstate_id = w[DO_TSTATE_NATIVE_ID];
	r->tstate_frame = w[DO_TSTATE_FRAME];
	r->frame_previous = w[DO_FRAME_PREVIOUS];
	r->frame_code = w[DO_FRAME_EXECUTABLE];
	r->frame_instr = w[DO_FRAME_INSTR];
	r->frame_mark = w[DO_FRAME_OWNER];
	img->code = (struct py_code_offsets){
		.name = w[DO_CODE_NAME],
		.qualname = w[DO_CODE_QUALNAME],
		.filename = w[DO_CODE_FILENAME],
		.firstlineno = w[DO_CODE_FIRSTLINENO],
		.linetable = w[DO_CODE_LINETABLE],
		.adaptive = w[DO_CODE_ADAPTIVE],
		.ascii_size = w[DO_UNICODE_ASCII_SIZE],
		/* the utf8 length and pointer follow (3.12+) */
		.compact_size = w[DO_UNICODE_ASCII_SIZE] + 16,
		.bytes_size = w[DO_BYTES_OB_SIZE],
		.bytes_sval = w[DO_BYTES_OB_SVAL],
	};
	r->code_adaptive = img->code.adaptive;
	img->source = "_Py_DebugOffsets";
	return 0;
}

/* "python3.11", "libpython3.10.so.1.0": the minor version in the name, or 0. */
static __u32 version_from_name(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned int minor;

	base = base ? base + 1 : path;
	p = strstr(base, "python3.");
	if (!p || sscanf(p + strlen("python3."), "%u", &minor) != 1 || minor > 0xff)
		return 0;
	return 0x0300 | minor;
}

int py_image__inspect(struct elf_file *ef, const char *path, struct py_image *img, char *err,
		      size_t err_len)
{
	static const char *const names[] = {"_PyRuntime", "_PyEval_EvalFrameDefault", "PyCode_Type",
					    "Py_Version"};
	GElf_Sym syms[4];
	unsigned int found[4];
	__u32 hex;
	size_t i;

	memset(img, 0, sizeof(*img));
	elf_file__find_symbols(ef, names, 4, syms, found);
	if (!found[0] || !found[1] || !found[2])
		return -ENOENT;
	img->runtime = syms[0].st_value;
	img->eval = syms[1].st_value;
	img->eval_end = syms[1].st_value + (syms[1].st_size ? syms[1].st_size : 1);
	img->code_type = syms[2].st_value;
	/* Py_Version (3.11+) is PY_VERSION_HEX */
	if (found[3] && !elf_file__read_vaddr(ef, syms[3].st_value, &hex, sizeof(hex)))
		img->version = hex >> 16;
	else
		img->version = version_from_name(path);
	if (elf_file__machine(ef) != EM_X86_64 && elf_file__machine(ef) != EM_AARCH64) {
		snprintf(err, err_len, "Python on this architecture is not read");
		return -ENOTSUP;
	}
	if (img->version >= 0x030d && img->version < 0x030e)
		return from_debug_offsets(ef, img, err, err_len) ?: read_sizes(img, err, err_len);
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const struct py_table *t = &tables[i];

		if (t->version != img->version)
			continue;
		img->interp_head = img->runtime + t->interp_head;
		img->ref = t->ref;
		img->ref.code_adaptive = t->code.adaptive;
		img->code = t->code;
		img->code.bytes_size = BYTES_OB_SIZE;
		img->code.bytes_sval = BYTES_OB_SVAL;
		img->source = "built-in table";
		return read_sizes(img, err, err_len);
	}
	if (img->version)
		snprintf(err, err_len, "Python %u.%u is not supported (3.10 to 3.13 are)",
			 img->version >> 8, img->version & 0xff);
	else
		snprintf(err, err_len, "a Python interpreter of unknown version");
	return -ENOTSUP;
}

/* Whether a mapped file may be an interpreter: python3.N, libpython3.N.so... */
static bool python_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

static bool python_wanted(const struct maps_entry *e, bool first)
{
	return python_name(e->path);
}

struct python_search {
	struct py_image *img;
	__u64 *bias;
	const struct maps_entry **file;
	char *err;
	size_t err_len;
	int failed; /* the last error other than -ENOENT */
};

static int inspect_python(struct elf_file *ef, const struct maps_entry *e, void *ctx)
{
	struct python_search *s = ctx;
	int r = py_image__inspect(ef, e->path, s->img, s->err, s->err_len);

	if (!r && elf_file__load_bias(ef, e->offset, e->start, s->bias))
		r = -ENOENT;
	if (r && r != -ENOENT)
		s->failed = r;
	if (r)
		return -ENOENT; /* another python file may be the one */
	if (s->file)
		*s->file = e;
	return 0;
}

int py_image__find(pid_t pid, const struct maps *maps, struct py_image *img, __u64 *bias,
		   const struct maps_entry **file, char *err, size_t err_len)
{
	struct python_search s = {img, bias, file, err, err_len, -ENOENT};

	if (!runtime__each_elf(pid, maps, python_wanted, inspect_python, &s))
		return 0;
	return s.failed;
}
