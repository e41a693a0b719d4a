// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What differs between architectures for TLS (docs/design.md section 3):
 * relocation numbers and names, where the dtv is, and the layout of an
 * executable's own static TLS block, whose recipe needs nothing but the file.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/compiler.h"
#include "lib/elf.h"
#include "proc/tls.h"
#include "proc/tls_arch.h"

/* Larger alignments are not believed. */
#define TLS_MAX_ALIGN (1u << 20)

static const struct tls_arch tls_arches[] = {
	{
		.machine = EM_X86_64,
		.name = "x86-64",
		.r_tlsdesc = R_X86_64_TLSDESC,
		.r_tpoff = R_X86_64_TPOFF64,
		.r_dtpmod = R_X86_64_DTPMOD64,
		.r_dtpoff = R_X86_64_DTPOFF64,
		.reloc_names = {[TLS_RELOC_TLSDESC] = "R_X86_64_TLSDESC",
				[TLS_RELOC_TPOFF] = "R_X86_64_TPOFF64",
				[TLS_RELOC_DTPMOD] = "R_X86_64_DTPMOD64",
				[TLS_RELOC_DTPOFF] = "R_X86_64_DTPOFF64"},
		/* glibc: tcbhead_t { tcb, dtv, ... }, 16-byte dtv_t; musl: pthread { self, dtv } */
		.dtv = {[TLS_LIBC_GLIBC] = {8, 16, LP_DTV_GLIBC}, [TLS_LIBC_MUSL] = {8, 8, 0}},
	},
	{
		.machine = EM_AARCH64,
		.name = "aarch64",
		.tls_above_tp = true,
		.tcb_size = 16,
		.r_tlsdesc = R_AARCH64_TLSDESC,
		.r_tpoff = R_AARCH64_TLS_TPREL,
		.r_dtpmod = R_AARCH64_TLS_DTPMOD,
		.r_dtpoff = R_AARCH64_TLS_DTPREL,
		.reloc_names = {[TLS_RELOC_TLSDESC] = "R_AARCH64_TLSDESC",
				[TLS_RELOC_TPOFF] = "R_AARCH64_TLS_TPREL",
				[TLS_RELOC_DTPMOD] = "R_AARCH64_TLS_DTPMOD",
				[TLS_RELOC_DTPOFF] = "R_AARCH64_TLS_DTPREL"},
		/* glibc: tcbhead_t { dtv, priv } at tp; musl: dtv ends struct pthread, below tp */
		.dtv = {[TLS_LIBC_GLIBC] = {0, 16, LP_DTV_GLIBC}, [TLS_LIBC_MUSL] = {-8, 8, 0}},
	},
};

const struct tls_arch *tls_arch__find(__u32 machine)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tls_arches); i++)
		if (tls_arches[i].machine == machine)
			return &tls_arches[i];
	return NULL;
}

const char *tls__machine_name(__u32 machine)
{
	const struct tls_arch *arch = tls_arch__find(machine);

	return arch ? arch->name : NULL;
}

const char *tls__reloc_name(__u32 machine, __u32 kind)
{
	const struct tls_arch *arch = tls_arch__find(machine);

	return arch && kind <= TLS_RELOC_DTPOFF ? arch->reloc_names[kind] : NULL;
}

/*
 * Offset from tp of the executable's TLS block, which both glibc and musl
 * place first and align so that its address is congruent to p_vaddr modulo
 * p_align (glibc's l_tls_firstbyte_offset, musl's main_tls.offset).
 */
static int exe_block_offset(const struct tls_arch *arch, const struct tls_file_info *info,
			    int64_t *offset)
{
	uint64_t align = info->tls_align ? info->tls_align : 1;
	uint64_t memsz = info->tls_memsz, vaddr = info->tls_vaddr;

	if ((align & (align - 1)) || align > TLS_MAX_ALIGN || memsz > TLS_MAX_MEMSZ)
		return -EINVAL;
	if (arch->tls_above_tp)
		*offset = arch->tcb_size + ((vaddr - arch->tcb_size) & (align - 1));
	else
		*offset = -(int64_t)(memsz + ((-memsz - vaddr) & (align - 1)));
	return 0;
}

int tls__exe_recipe(const struct tls_file_info *info, struct lp_recipe *recipe)
{
	const struct tls_arch *arch = tls_arch__find(info->machine);
	int64_t block;
	int ret;

	memset(recipe, 0, sizeof(*recipe));
	if (!arch)
		return -ENOTSUP;
	if (info->form == LP_FORM_NONE && !info->has_otel)
		return -ENOENT;
	if (!info->has_tls)
		return -EINVAL;
	ret = exe_block_offset(arch, info, &block);
	if (ret)
		return ret;
	recipe->form = info->form;
	if (info->form != LP_FORM_NONE) {
		recipe->labels.access = LP_TLS_TP_OFFSET;
		recipe->labels.offset = block + (int64_t)info->tls_value;
	}
	if (info->has_otel) {
		recipe->otel.access = LP_TLS_TP_OFFSET;
		recipe->otel.offset = block + (int64_t)info->otel_value;
	}
	return 0;
}

int tls__exe_tls_offset(const struct tls_file_info *info, uint64_t value, int64_t *offset)
{
	const struct tls_arch *arch = tls_arch__find(info->machine);
	int64_t block;
	int ret;

	if (!arch)
		return -ENOTSUP;
	if (!info->has_tls || value > info->tls_memsz)
		return -EINVAL;
	ret = exe_block_offset(arch, info, &block);
	if (ret)
		return ret;
	*offset = block + (int64_t)value;
	return 0;
}
