// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What an ELF file publishes for a thread's label object (docs/design.md
 * section 3): which label form, its TLS segment and the TLS relocations of
 * the label symbol.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "lib/elf.h"
#include "lib/msg.h"
#include "proc/root.h"
#include "proc/tls.h"
#include "proc/tls_arch.h"

/* Sanity bounds on values read from files. */
#define INTERP_MAX	    4096
#define DYNAMIC_MAX_ENTRIES 4096

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

enum tls_libc tls__libc_of_name(const char *path)
{
	const char *name = base_name(path);

	if (!strncmp(name, "ld-musl-", 8) || !strncmp(name, "libc.musl-", 10))
		return TLS_LIBC_MUSL;
	if (!strncmp(name, "ld-linux", 8) || !strncmp(name, "libc.so.6", 9))
		return TLS_LIBC_GLIBC;
	return TLS_LIBC_UNKNOWN;
}

const char *tls__form_name(__u32 form)
{
	if (form == LP_FORM_CUSTOM_LABELS_V0)
		return "custom_labels_v0";
	if (form == LP_FORM_CUSTOM_LABELS_V1)
		return "custom_labels_v1";
	return NULL;
}

/* ---- file inspection ------------------------------------------------------ */

/* The TLS relocations of one symbol, of st_value value, into relocs[*nr]. */
struct reloc_ctx {
	const struct tls_arch *arch;
	const char *name;
	__u64 value;
	struct tls_reloc *relocs;
	__u32 *nr;
};

static int collect_reloc(const GElf_Rela *rela, const GElf_Sym *sym, const char *name, void *ctx)
{
	struct reloc_ctx *c = ctx;
	unsigned int type = GELF_R_TYPE(rela->r_info);
	struct tls_reloc *r;
	uint32_t kind, i;
	bool local;

	if (type == c->arch->r_tlsdesc)
		kind = TLS_RELOC_TLSDESC;
	else if (type == c->arch->r_tpoff)
		kind = TLS_RELOC_TPOFF;
	else if (type == c->arch->r_dtpmod)
		kind = TLS_RELOC_DTPMOD;
	else if (type == c->arch->r_dtpoff)
		kind = TLS_RELOC_DTPOFF;
	else
		return 0;

	local = GELF_R_SYM(rela->r_info) == 0;
	if (!local && strcmp(name, c->name))
		return 0;
	if (local) {
		/* Against the object's own block: the addend is the offset in it, and a
		 * module id slot serves every variable of the object. */
		if (kind == TLS_RELOC_DTPMOD) {
			for (i = 0; i < *c->nr; i++)
				if (c->relocs[i].kind == kind && c->relocs[i].local)
					return 0;
		} else if ((uint64_t)rela->r_addend != c->value) {
			return 0;
		}
	}
	if (*c->nr == TLS_MAX_RELOCS)
		return 1;
	r = &c->relocs[(*c->nr)++];
	r->r_offset = rela->r_offset;
	r->kind = kind;
	r->local = local;
	return 0;
}

static enum tls_libc interp_libc(Elf *elf, const GElf_Phdr *phdr, size_t file_size)
{
	Elf_Data *data;

	if (phdr->p_offset > file_size || phdr->p_filesz > file_size - phdr->p_offset ||
	    phdr->p_filesz < 2 || phdr->p_filesz > INTERP_MAX)
		return TLS_LIBC_UNKNOWN;
	data = elf_getdata_rawchunk(elf, phdr->p_offset, phdr->p_filesz, ELF_T_BYTE);
	if (!data || !memchr(data->d_buf, '\0', data->d_size))
		return TLS_LIBC_UNKNOWN;
	return tls__libc_of_name(data->d_buf);
}

/* DF_1_PIE in DT_FLAGS_1, and whether there is a DT_SONAME. */
static void dynamic_flags(Elf *elf, const GElf_Phdr *phdr, size_t file_size, bool *pie,
			  bool *soname)
{
	Elf_Data *data;
	size_t i, n;

	if (phdr->p_offset > file_size || phdr->p_filesz > file_size - phdr->p_offset)
		return;
	n = phdr->p_filesz / sizeof(Elf64_Dyn);
	if (n > DYNAMIC_MAX_ENTRIES)
		n = DYNAMIC_MAX_ENTRIES;
	data = elf_getdata_rawchunk(elf, phdr->p_offset, n * sizeof(Elf64_Dyn), ELF_T_DYN);
	if (!data)
		return;
	for (i = 0; i < n; i++) {
		GElf_Dyn dyn;

		if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
			*pie = true;
		if (dyn.d_tag == DT_SONAME)
			*soname = true;
	}
}

static int inspect_elf(const struct elf_file *ef, struct tls_file_info *info, char *err,
		       size_t err_len)
{
	static const char *const names[] = {SYM_VERSION, SYM_V0, SYM_V1, SYM_OTEL, SYM_OTEL_NODE};
	const char *name = elf_file__name(ef);
	const struct tls_arch *arch;
	bool has_interp = false, pie = false, soname = false;
	size_t size = elf_file__size(ef), i;
	unsigned int found[5];
	struct reloc_ctx ctx;
	GElf_Sym syms[5];
	int o;
	uint32_t version;
	uint64_t obj_size;
	int tls_idx, ret;

	memset(info, 0, sizeof(*info));
	info->machine = elf_file__machine(ef);
	arch = tls_arch__find(info->machine);
	if (!arch) {
		msg__set(err, err_len, "%s: unsupported machine %u", name, info->machine);
		return -ENOTSUP;
	}
	for (i = 0; i < elf_file__phnum(ef); i++) {
		GElf_Phdr phdr;

		if (elf_file__phdr(ef, i, &phdr))
			continue;
		switch (phdr.p_type) {
		case PT_TLS:
			info->has_tls = true;
			info->tls_memsz = phdr.p_memsz;
			info->tls_align = phdr.p_align;
			info->tls_vaddr = phdr.p_vaddr;
			break;
		case PT_INTERP:
			has_interp = true;
			info->interp_libc = interp_libc(elf_file__elf(ef), &phdr, size);
			break;
		case PT_DYNAMIC:
			dynamic_flags(elf_file__elf(ef), &phdr, size, &pie, &soname);
			break;
		case PT_LOAD:
			if ((phdr.p_flags & PF_X) &&
			    info->nr_exec_segments < TLS_MAX_EXEC_SEGMENTS) {
				info->exec_segments[info->nr_exec_segments].vaddr = phdr.p_vaddr;
				info->exec_segments[info->nr_exec_segments].offset = phdr.p_offset;
				info->nr_exec_segments++;
			}
			break;
		}
	}
	/* libc.so.6 has a PT_INTERP too, but also a soname. */
	info->is_exe = elf_file__type(ef) == ET_EXEC ||
		       (elf_file__type(ef) == ET_DYN && (pie || (has_interp && !soname)));

	if (info->is_exe)
		golang__inspect_elf(ef, &info->go);

	elf_file__find_symbols(ef, names, 5, syms, found);
	ctx.arch = arch;
	/*
	 * The OTel thread context pointer needs no version symbol; one outside
	 * the TLS segment is not used (the custom labels may still be). A file
	 * with both forms is read by the pointer.
	 */
	o = found[3] ? 3 : 4;
	if (found[o] && GELF_ST_TYPE(syms[o].st_info) == STT_TLS && info->has_tls &&
	    info->tls_memsz <= TLS_MAX_MEMSZ && syms[o].st_value <= info->tls_memsz &&
	    (o == 3 ? sizeof(void *) : OTEL_NODE_SIZE) <= info->tls_memsz - syms[o].st_value) {
		info->has_otel = true;
		info->otel_nodejs = o == 4;
		info->otel_value = syms[o].st_value;
		info->otel_sym_dynamic = found[o] == SHT_DYNSYM;
		ctx.name = names[o];
		ctx.value = info->otel_value;
		ctx.relocs = info->otel_relocs;
		ctx.nr = &info->nr_otel_relocs;
		elf_file__for_each_rela(ef, collect_reloc, &ctx);
	}
	if (!found[0])
		return 0;
	info->has_version = true;
	info->version_vaddr = syms[0].st_value;
	ret = elf_file__read_vaddr(ef, syms[0].st_value, &version, sizeof(version));
	if (ret == 0) {
		info->version_in_file = true;
		info->abi_version = le32toh(version);
	} else if (ret != -ENOENT) {
		msg__set(err, err_len, "%s: cannot read %s: %s", name, SYM_VERSION, strerror(-ret));
		return ret;
	}

	/* The version decides the form; when it is not in the file, the live value will. */
	if (info->version_in_file)
		tls_idx = info->abi_version == 1 ? 2 : info->abi_version == 0 ? 1 : -1;
	else
		tls_idx = found[2] ? 2 : 1;
	if (tls_idx < 0 || !found[tls_idx] || GELF_ST_TYPE(syms[tls_idx].st_info) != STT_TLS)
		return 0;
	if (!info->has_tls) {
		msg__set(err, err_len, "%s: TLS symbol %s but no PT_TLS segment", name,
			 names[tls_idx]);
		return -EINVAL;
	}
	obj_size = tls_idx == 2 ? sizeof(void *) : 2 * sizeof(void *);
	if (info->tls_memsz > TLS_MAX_MEMSZ || syms[tls_idx].st_value > info->tls_memsz ||
	    obj_size > info->tls_memsz - syms[tls_idx].st_value) {
		msg__set(err, err_len, "%s: %s lies outside the TLS segment", name, names[tls_idx]);
		return -EINVAL;
	}
	info->form = tls_idx == 2 ? LP_FORM_CUSTOM_LABELS_V1 : LP_FORM_CUSTOM_LABELS_V0;
	info->tls_value = syms[tls_idx].st_value;
	info->tls_sym_dynamic = found[tls_idx] == SHT_DYNSYM;

	ctx.name = names[tls_idx];
	ctx.value = info->tls_value;
	ctx.relocs = info->relocs;
	ctx.nr = &info->nr_relocs;
	elf_file__for_each_rela(ef, collect_reloc, &ctx);
	return 0;
}

int tls__inspect_fd(int fd, const char *name, struct tls_file_info *info, char *err, size_t err_len)
{
	struct elf_file *ef;
	int ret;

	memset(info, 0, sizeof(*info));
	ef = elf_file__open_fd(fd, name, err, err_len);
	if (!ef)
		return -EINVAL;
	ret = inspect_elf(ef, info, err, err_len);
	elf_file__close(ef);
	return ret;
}

int tls__inspect_file(const char *path, struct tls_file_info *info, char *err, size_t err_len)
{
	struct stat st;
	int fd, ret;

	memset(info, 0, sizeof(*info));
	fd = proc_root__open(0, path, &st);
	if (fd < 0) {
		msg__set(err, err_len, "%s: %s", path, strerror(-fd));
		return fd;
	}
	ret = tls__inspect_fd(fd, path, info, err, err_len);
	close(fd);
	return ret;
}

/* ---- recipes -------------------------------------------------------------- */
