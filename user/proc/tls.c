// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Finding a thread's label object in a live process (docs/design.md section
 * 3). Files are inspected once (proc/tls_file.c, cached by device and inode);
 * a live process is then resolved from its mappings and a few GOT words read
 * through /proc/PID/mem.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/compiler.h"
#include "lib/msg.h"
#include "proc/maps.h"
#include "proc/root.h"
#include "proc/tls.h"
#include "proc/tls_arch.h"

/* Sanity bounds on values read from the process. */
#define TLS_MAX_TP_OFFSET (1ll << 32)
#define DTV_MAX_MODID	  (1u << 20)
#define DTV_MAX_OFFSET	  TLS_MAX_MEMSZ
#define MAPS_MAX_OBJECTS  4096

/* ---- live processes ------------------------------------------------------- */

/* A file with an executable mapping: a loaded ELF object. */
struct proc_object {
	const struct maps_entry *map; /* its first executable mapping */
	uint64_t dev;
	struct tls_file_info info;
};

struct proc {
	int pid;
	int mem_fd;
	enum tls_libc libc;
	const struct tls_arch *arch;
	struct maps *maps;
	struct proc_object *objs;
	size_t nr_objs;
};

static void proc__free(struct proc *p)
{
	free(p->objs);
	maps__free(p->maps);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
}

static int proc__add_object(struct proc *p, size_t *cap, const struct maps_entry *e)
{
	uint64_t dev = makedev(e->dev_major, e->dev_minor);
	struct proc_object *o;
	size_t i;
	int ret;

	for (i = 0; i < p->nr_objs; i++)
		if (p->objs[i].dev == dev && p->objs[i].map->inode == e->inode)
			return 0;
	if (p->nr_objs >= MAPS_MAX_OBJECTS)
		return -E2BIG;
	ret = ARRAY_RESERVE_MIN(p->objs, *cap, p->nr_objs + 1, 64);
	if (ret)
		return ret;
	o = &p->objs[p->nr_objs++];
	memset(o, 0, sizeof(*o));
	o->map = e;
	o->dev = dev;
	return 0;
}

/* The objects of p's mappings: maps (a reference is taken), or NULL to read them. */
static int proc__read_maps(struct proc *p, struct maps *maps)
{
	size_t objs_cap = 0, i;
	int ret;

	if (maps) {
		p->maps = maps__get(maps);
	} else {
		ret = maps__read(p->pid, 0, &p->maps);
		if (ret)
			return ret;
	}
	for (i = 0; i < maps__count(p->maps); i++) {
		const struct maps_entry *e = maps__entry(p->maps, i);

		if (e->kind != MAPS_FILE || !e->inode)
			continue;
		if (p->libc != TLS_LIBC_MUSL && tls__libc_of_name(e->path) != TLS_LIBC_UNKNOWN)
			p->libc = tls__libc_of_name(e->path);
		if (!(e->prot & MAPS_PROT_EXEC))
			continue;
		ret = proc__add_object(p, &objs_cap, e);
		/* Past MAPS_MAX_OBJECTS, the rest of the objects are not looked at. */
		if (ret && ret != -E2BIG)
			return ret;
	}
	return 0;
}

/* The inspection result for an object, from the cache when the file is unchanged. */
static int proc__inspect_object(struct proc *p, struct tls_cache *cache, struct proc_object *o,
				char *err, size_t err_len)
{
	const struct maps_entry *m = o->map;
	struct stat st;
	int fd, ret;

	fd = proc_root__open_mapped(p->pid, m, &st);
	/* A path on another device number (overlay) must still be the mapped inode. */
	if (fd >= 0 && st.st_ino != m->inode) {
		close(fd);
		fd = -ESTALE;
	}
	if (fd < 0) {
		msg__set(err, err_len, "%s: not reachable through /proc/%d", m->path, p->pid);
		return fd;
	}
	ret = tls_cache__inspect(cache, fd, &st, o->dev, m->inode, m->path, &o->info, err, err_len);
	close(fd);
	return ret;
}

static int proc__read(struct proc *p, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (p->mem_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", p->pid);
		p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (p->mem_fd < 0)
			return errno == ENOENT ? -ESRCH : -errno;
	}
	if (addr > (uint64_t)INT64_MAX)
		return -EFAULT;
	n = pread(p->mem_fd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int proc__read_u64(struct proc *p, uint64_t addr, uint64_t *val)
{
	uint64_t raw;
	int ret = proc__read(p, addr, &raw, sizeof(raw));

	*val = le64toh(raw);
	return ret;
}

/* Load bias of an object: its executable mapping belongs to one PF_X segment. */
static int object_bias(const struct proc_object *o, uint64_t *bias)
{
	uint64_t page = sysconf(_SC_PAGESIZE);
	uint32_t i;

	for (i = 0; i < o->info.nr_exec_segments; i++) {
		const struct tls_segment *s = &o->info.exec_segments[i];

		if ((s->offset & ~(page - 1)) == o->map->offset) {
			*bias = o->map->start - (s->vaddr & ~(page - 1));
			return 0;
		}
	}
	return -ENOENT;
}

static int set_dtv(const struct proc *p, struct lp_tls_ref *r, uint64_t modid, uint64_t offset,
		   struct tls_diag *diag)
{
	if (p->libc == TLS_LIBC_UNKNOWN) {
		msg__set(diag->msg, sizeof(diag->msg), "dynamic TLS with an unknown libc");
		return -ENOTSUP;
	}
	if (!modid || modid > DTV_MAX_MODID || offset > DTV_MAX_OFFSET) {
		msg__set(diag->msg, sizeof(diag->msg),
			 "implausible TLS module id %" PRIu64 " / offset %" PRIu64, modid, offset);
		return -EINVAL;
	}
	r->access = LP_TLS_DTV;
	r->offset = offset;
	r->dtv_tp_offset = p->arch->dtv[p->libc].tp_offset;
	r->dtv_modid = modid;
	r->dtv_entry_size = p->arch->dtv[p->libc].entry_size;
	r->dtv_flags = p->arch->dtv[p->libc].flags;
	return 0;
}

static int set_tlsdesc(const struct proc *p, struct lp_tls_ref *r, uint64_t slot,
		       struct tls_diag *diag)
{
	if (p->libc == TLS_LIBC_UNKNOWN) {
		msg__set(diag->msg, sizeof(diag->msg), "TLSDESC with an unknown libc");
		return -ENOTSUP;
	}
	r->access = LP_TLS_TLSDESC;
	r->tlsdesc_addr = slot;
	r->offset = 0;
	r->dtv_tp_offset = p->arch->dtv[p->libc].tp_offset;
	r->dtv_entry_size = p->arch->dtv[p->libc].entry_size;
	r->dtv_flags = p->arch->dtv[p->libc].flags;
	return 0;
}

static int set_tp_offset(struct lp_tls_ref *r, int64_t offset, struct tls_diag *diag)
{
	if (offset <= -TLS_MAX_TP_OFFSET || offset >= TLS_MAX_TP_OFFSET) {
		msg__set(diag->msg, sizeof(diag->msg), "implausible TLS offset %" PRId64, offset);
		return -EINVAL;
	}
	r->access = LP_TLS_TP_OFFSET;
	r->offset = offset;
	return 0;
}

static int try_tlsdesc(struct proc *p, uint64_t slot, struct lp_tls_ref *r, struct tls_diag *diag)
{
	const struct maps_entry *arg_range, *fn_range;
	uint64_t fn, arg, modid, offset;
	int ret;

	ret = proc__read_u64(p, slot, &fn);
	if (!ret)
		ret = proc__read_u64(p, slot + 8, &arg);
	if (ret) {
		msg__set(diag->msg, sizeof(diag->msg), "cannot read TLS descriptor: %s",
			 strerror(-ret));
		return ret;
	}
	fn_range = maps__find(p->maps, fn);
	if (!fn && !arg) {
		/*
		 * The dynamic loader has mapped the library but not relocated it
		 * yet (it is starting, or dlopen is under way). BPF reads the
		 * descriptor itself at every sample, so the recipe holds from the
		 * instant the loader fills it: a short-lived process loses no label.
		 */
		diag->tls_case = TLS_CASE_TLSDESC_PENDING;
		msg__set(diag->msg, sizeof(diag->msg),
			 "TLSDESC at 0x%" PRIx64 ", not relocated yet", slot);
		return set_tlsdesc(p, r, slot, diag);
	}
	if (!fn || !fn_range || !(fn_range->prot & MAPS_PROT_EXEC)) {
		msg__set(diag->msg, sizeof(diag->msg), "TLS descriptor not relocated yet");
		return -EAGAIN;
	}
	arg_range = maps__find(p->maps, arg);
	if (!arg_range) {
		/* The static resolver: the argument is the offset from tp itself. */
		diag->tls_case = TLS_CASE_TLSDESC_STATIC;
		msg__set(diag->msg, sizeof(diag->msg), "TLSDESC, static TLS, offset %" PRId64,
			 (int64_t)arg);
		return set_tp_offset(r, (int64_t)arg, diag);
	}
	if (arg == slot || !(arg_range->prot & MAPS_PROT_WRITE)) {
		/* A lazy resolver: the argument is the descriptor or its relocation. */
		msg__set(diag->msg, sizeof(diag->msg), "TLS descriptor still lazy");
		return -EAGAIN;
	}
	/* The dynamic resolver: the argument points at { module id, offset, ... }. */
	ret = proc__read_u64(p, arg, &modid);
	if (!ret)
		ret = proc__read_u64(p, arg + 8, &offset);
	if (ret) {
		msg__set(diag->msg, sizeof(diag->msg), "cannot read TLS descriptor argument: %s",
			 strerror(-ret));
		return ret;
	}
	diag->tls_case = TLS_CASE_TLSDESC_DYNAMIC;
	msg__set(diag->msg, sizeof(diag->msg),
		 "TLSDESC, dynamic TLS, module %" PRIu64 " offset %" PRIu64, modid, offset);
	return set_dtv(p, r, modid, offset, diag);
}

static int try_tpoff(struct proc *p, uint64_t slot, struct lp_tls_ref *r, struct tls_diag *diag)
{
	uint64_t val;
	int ret = proc__read_u64(p, slot, &val);

	if (ret) {
		msg__set(diag->msg, sizeof(diag->msg), "cannot read TLS offset: %s",
			 strerror(-ret));
		return ret;
	}
	if (!val) {
		/* Never a valid offset from tp in either variant: not relocated yet. */
		msg__set(diag->msg, sizeof(diag->msg), "TLS offset not relocated yet");
		return -EAGAIN;
	}
	diag->tls_case = TLS_CASE_TPOFF;
	msg__set(diag->msg, sizeof(diag->msg), "initial-exec, offset %" PRId64, (int64_t)val);
	return set_tp_offset(r, (int64_t)val, diag);
}

/* Where a TLS symbol of an object is. */
struct tls_sym {
	uint64_t value; /* st_value */
	const struct tls_reloc *relocs;
	uint32_t nr_relocs;
};

static int try_dtpmod(struct proc *p, const struct tls_sym *sym, const struct tls_reloc *rel,
		      uint64_t bias, struct lp_tls_ref *r, struct tls_diag *diag)
{
	uint64_t modid, offset = sym->value;
	uint32_t i;
	int ret;

	ret = proc__read_u64(p, bias + rel->r_offset, &modid);
	if (ret) {
		msg__set(diag->msg, sizeof(diag->msg), "cannot read TLS module id: %s",
			 strerror(-ret));
		return ret;
	}
	if (!modid) {
		msg__set(diag->msg, sizeof(diag->msg), "TLS module id not relocated yet");
		return -EAGAIN;
	}
	/* The symbol's own offset slot, if it has one, follows the module id. */
	for (i = 0; !rel->local && i < sym->nr_relocs; i++) {
		const struct tls_reloc *off = &sym->relocs[i];

		if (off->kind != TLS_RELOC_DTPOFF || off->local ||
		    off->r_offset != rel->r_offset + 8)
			continue;
		ret = proc__read_u64(p, bias + off->r_offset, &offset);
		if (ret) {
			msg__set(diag->msg, sizeof(diag->msg), "cannot read TLS offset: %s",
				 strerror(-ret));
			return ret;
		}
		break;
	}
	diag->tls_case = TLS_CASE_DTPMOD;
	msg__set(diag->msg, sizeof(diag->msg),
		 "general-dynamic, module %" PRIu64 " offset %" PRIu64, modid, offset);
	return set_dtv(p, r, modid, offset, diag);
}

static struct tls_sym labels_sym(const struct proc_object *o)
{
	return (struct tls_sym){o->info.tls_value, o->info.relocs, o->info.nr_relocs};
}

static struct tls_sym otel_sym(const struct proc_object *o)
{
	return (struct tls_sym){o->info.otel_value, o->info.otel_relocs, o->info.nr_otel_relocs};
}

/* The TLS reference to the symbol sym of an object. */
static int proc__locate(struct proc *p, const struct proc_object *o, const struct tls_sym *sym,
			bool is_exe, struct lp_tls_ref *r, struct tls_diag *diag)
{
	static const uint32_t order[] = {TLS_RELOC_TLSDESC, TLS_RELOC_TPOFF, TLS_RELOC_DTPMOD};
	int first_err = 0, ret;
	uint64_t bias;
	size_t k;
	uint32_t i;

	if (is_exe) {
		struct lp_recipe exe;

		diag->tls_case = TLS_CASE_EXE_STATIC;
		ret = tls__exe_recipe(&o->info, &exe);
		*r = sym->relocs == o->info.otel_relocs ? exe.otel : exe.labels;
		msg__set(diag->msg, sizeof(diag->msg), "executable's static TLS (%s, variant %s)",
			 p->arch->name, p->arch->tls_above_tp ? "I" : "II");
		return ret;
	}
	if (object_bias(o, &bias)) {
		msg__set(diag->msg, sizeof(diag->msg),
			 "mapping does not match the program headers");
		return -ENOENT;
	}
	for (k = 0; k < ARRAY_SIZE(order); k++) {
		for (i = 0; i < sym->nr_relocs; i++) {
			const struct tls_reloc *rel = &sym->relocs[i];

			if (rel->kind != order[k])
				continue;
			if (rel->kind == TLS_RELOC_TLSDESC)
				ret = try_tlsdesc(p, bias + rel->r_offset, r, diag);
			else if (rel->kind == TLS_RELOC_TPOFF)
				ret = try_tpoff(p, bias + rel->r_offset, r, diag);
			else
				ret = try_dtpmod(p, sym, rel, bias, r, diag);
			if (!ret)
				return 0;
			if (!first_err)
				first_err = ret;
		}
	}
	if (!first_err)
		msg__set(diag->msg, sizeof(diag->msg), "no TLS relocation of the label symbol");
	return first_err ? first_err : -ENOENT;
}

/* The version the live process publishes, or the file's if it cannot be read. */
static int proc__version(struct proc *p, const struct proc_object *o, uint32_t *version)
{
	uint64_t bias;
	uint32_t raw;

	if (!object_bias(o, &bias) &&
	    !proc__read(p, bias + o->info.version_vaddr, &raw, sizeof(raw))) {
		*version = le32toh(raw);
		return 0;
	}
	if (!o->info.version_in_file)
		return -ENOENT;
	*version = o->info.abi_version;
	return 0;
}

/*
 * The main program among the objects: the file /proc/PID/exe names or, when
 * that is the dynamic linker run as a command (ld.so ./prog), the first
 * executable it loaded.
 */
static const struct proc_object *proc__main_program(const struct proc *p)
{
	char link[64], path[PATH_MAX], root[PATH_MAX];
	const char *exe;
	struct stat st;
	bool have_st;
	ssize_t n;
	size_t i;

	snprintf(link, sizeof(link), "/proc/%d/exe", p->pid);
	have_st = !stat(link, &st);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	/* named as the objects are */
	maps__read_root(p->pid, root, sizeof(root));
	exe = maps__path_in_root(path, root);
	for (i = 0; i < p->nr_objs; i++) {
		const struct proc_object *o = &p->objs[i];

		if ((have_st && o->dev == st.st_dev && o->map->inode == st.st_ino) ||
		    (exe[0] && !strcmp(o->map->path, exe))) {
			if (o->info.is_exe)
				return o;
			break;
		}
	}
	for (i = 0; i < p->nr_objs; i++)
		if (p->objs[i].info.is_exe)
			return &p->objs[i];
	return NULL;
}

static void diag_object(struct tls_diag *diag, const struct proc_object *o)
{
	snprintf(diag->object, sizeof(diag->object), "%s", o->map->path);
}

/*
 * Where the OTel thread context pointer is: the executable's, else the first
 * mapped object's that can be located. 0 with ref->access NONE: no object
 * defines it.
 */
static int proc__resolve_otel(struct proc *p, const struct proc_object *main_program,
			      struct lp_tls_ref *ref, struct tls_diag *diag)
{
	int ret, first_err = 0;
	struct tls_diag d;
	struct tls_sym sym;
	size_t pass, i;

	memset(ref, 0, sizeof(*ref));
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->nr_objs; i++) {
			const struct proc_object *o = &p->objs[i];
			bool is_exe = o == main_program;

			if (!o->info.has_otel || is_exe != (pass == 0))
				continue;
			memset(&d, 0, sizeof(d));
			p->arch = tls_arch__find(o->info.machine);
			sym = otel_sym(o);
			ret = proc__locate(p, o, &sym, is_exe, ref, &d);
			snprintf(diag->otel_object, sizeof(diag->otel_object), "%s", o->map->path);
			snprintf(diag->otel_msg, sizeof(diag->otel_msg), "%s", d.msg);
			diag->otel_case = d.tls_case;
			diag->otel_nodejs = o->info.otel_nodejs;
			if (!ret)
				return 0;
			memset(ref, 0, sizeof(*ref));
			if (ret == -EAGAIN || ret == -ESRCH)
				return ret;
			if (!first_err)
				first_err = ret;
		}
	}
	if (!diag->otel_object[0])
		msg__set(diag->otel_msg, sizeof(diag->otel_msg),
			 "no OpenTelemetry thread context (" SYM_OTEL " or " SYM_OTEL_NODE
			 ") in any mapped file");
	return first_err;
}

struct tls_process {
	struct proc p;
	const struct proc_object *main_program;
	int skipped;		     /* objects that could not be inspected */
	char skip_err[TLS_DIAG_LEN]; /* why the first one could not */
};

int tls_process__open(struct tls_cache *cache, int pid, struct maps *maps, struct tls_process **out,
		      struct tls_diag *diag)
{
	struct tls_process *tp = calloc(1, sizeof(*tp));
	size_t i;
	int ret;

	*out = NULL;
	if (!tp)
		return -ENOMEM;
	tp->p.pid = pid;
	tp->p.mem_fd = -1;
	ret = proc__read_maps(&tp->p, maps);
	if (ret) {
		msg__set(diag->msg, sizeof(diag->msg), "cannot read /proc/%d/maps: %s", pid,
			 strerror(-ret));
		tls_process__close(tp);
		return ret;
	}
	for (i = 0; i < tp->p.nr_objs; i++) {
		struct proc_object *o = &tp->p.objs[i];

		ret = proc__inspect_object(&tp->p, cache, o, tp->skip_err[0] ? NULL : tp->skip_err,
					   sizeof(tp->skip_err));
		if (ret) {
			memset(&o->info, 0, sizeof(o->info));
			tp->skipped++;
		}
	}
	tp->main_program = proc__main_program(&tp->p);
	if (tp->p.libc == TLS_LIBC_UNKNOWN && tp->main_program)
		tp->p.libc = tp->main_program->info.interp_libc;
	diag->libc = tp->p.libc;
	*out = tp;
	return 0;
}

void tls_process__close(struct tls_process *tp)
{
	if (!tp)
		return;
	proc__free(&tp->p);
	free(tp);
}

const struct tls_file_info *tls_process__main_program(const struct tls_process *tp)
{
	return tp->main_program ? &tp->main_program->info : NULL;
}

int tls_process__custom_labels(struct tls_process *tp, struct lp_recipe *recipe,
			       struct tls_diag *diag)
{
	static const uint32_t forms[] = {LP_FORM_CUSTOM_LABELS_V1, LP_FORM_CUSTOM_LABELS_V0};
	struct proc *p = &tp->p;
	struct tls_sym sym;
	int ret, first_err = 0;
	size_t i, f, pass;

	for (i = 0; i < p->nr_objs; i++) {
		const struct proc_object *o = &p->objs[i];

		if (o->info.has_version && o->info.form == LP_FORM_NONE) {
			diag_object(diag, o);
			msg__set(diag->msg, sizeof(diag->msg),
				 "unknown label ABI version %u: not read", o->info.abi_version);
			break;
		}
	}
	/* v1 wins over v0; within a form the executable, then the first mapped object. */
	for (f = 0; f < ARRAY_SIZE(forms); f++) {
		for (pass = 0; pass < 2; pass++) {
			for (i = 0; i < p->nr_objs; i++) {
				const struct proc_object *o = &p->objs[i];
				bool is_exe = o == tp->main_program;
				uint32_t version;

				if (o->info.form != forms[f] || is_exe != (pass == 0))
					continue;
				diag_object(diag, o);
				diag->tls_case = TLS_CASE_NONE;
				if (proc__version(p, o, &version)) {
					msg__set(diag->msg, sizeof(diag->msg),
						 "label ABI version not readable");
					continue;
				}
				if (version != (forms[f] == LP_FORM_CUSTOM_LABELS_V1 ? 1u : 0u)) {
					msg__set(diag->msg, sizeof(diag->msg),
						 "live label ABI version %u: not read", version);
					continue;
				}
				p->arch = tls_arch__find(o->info.machine);
				sym = labels_sym(o);
				ret = proc__locate(p, o, &sym, is_exe, &recipe->labels, diag);
				if (!ret) {
					recipe->form = forms[f];
					return 0;
				}
				memset(&recipe->labels, 0, sizeof(recipe->labels));
				if (ret == -EAGAIN || ret == -ESRCH)
					return ret;
				if (!first_err)
					first_err = ret;
			}
		}
	}
	if (!first_err && !diag->object[0]) {
		if (tp->skipped)
			msg__set(diag->msg, sizeof(diag->msg),
				 "no Custom Labels symbols (" SYM_VERSION
				 ") in the mapped files inspected (%d not inspected, first: %s)",
				 tp->skipped, tp->skip_err);
		else
			msg__set(diag->msg, sizeof(diag->msg),
				 "no Custom Labels symbols (" SYM_VERSION
				 ") in any mapped file: not linked with libcustomlabels, or "
				 "the symbols are not exported");
	}
	return first_err;
}

int tls_process__otel_thread(struct tls_process *tp, struct lp_tls_ref *ref, struct tls_diag *diag)
{
	return proc__resolve_otel(&tp->p, tp->main_program, ref, diag);
}
