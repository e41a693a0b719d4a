// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind rows from CFI (docs/design.md section 9). Every FDE is listed with
 * dwarf_next_cfi, then libdw's interpreter (dwarf_cfi_addrframe) gives the
 * rule set of each of its address ranges in turn. A rule set becomes a row
 * when the walker in BPF can follow it: CFA = SP or FP + offset, the x86-64
 * PLT expression, gcc's stack realignment expression *(FP + offset), a signal
 * trampoline; return address and FP saved at CFA + offset.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/msg.h"
#include "lib/sorted.h"
#include "unwind/table.h"

/*
 * DWARF register numbers of the registers the walker knows, and the signal
 * trampoline that has no CFI of its own (sigreturn, with the length of its
 * code and of what precedes it), if any.
 */
struct cfi_regs {
	int sp, fp, ra, ip;
	const char *sigreturn;
	unsigned int sigreturn_len, sigreturn_before;
};

static const struct cfi_regs x86_64_regs = {.sp = 7, .fp = 6, .ra = 16, .ip = 16};
/*
 * arm64's vdso has no CFI for __kernel_rt_sigreturn (unwinders recognise its
 * code): mov x8, #__NR_rt_sigreturn; svc #0, after a nop that a return
 * address minus one, the handler's, falls in.
 */
static const struct cfi_regs aarch64_regs = {.sp = 31,
					     .fp = 29,
					     .ra = 30,
					     .ip = -1,
					     .sigreturn = "__kernel_rt_sigreturn",
					     .sigreturn_len = 8,
					     .sigreturn_before = 4};

/* More FDEs than this in one object are refused (the largest binaries have a few million). */
#define MAX_FDES (16u << 20)

struct fde_range {
	Dwarf_Addr start;
	Dwarf_Addr end;
	Dwarf_CFI *cfi;
	unsigned int source; /* 0: .eh_frame, 1: .debug_frame, which wins a tie */
};

static int push_row(struct unwind_table *t, __u32 pc, __u16 cfa, __s16 regs)
{
	struct lp_unwind_row *last = t->count ? &t->rows[t->count - 1] : NULL;

	if (last && last->cfa == cfa && last->regs == regs)
		return 0;
	if (last && last->pc == pc) { /* an empty range: the newer rule wins */
		last->cfa = cfa;
		last->regs = regs;
		if (t->count > 1 && last[-1].cfa == cfa && last[-1].regs == regs)
			t->count--;
		return 0;
	}
	if (ARRAY_RESERVE_MIN(t->rows, t->cap, t->count + 1, 1024))
		return -ENOMEM;
	t->rows[t->count++] = (struct lp_unwind_row){.pc = pc, .cfa = cfa, .regs = regs};
	return 0;
}

static __u16 cfa_word(enum lp_cfa_rule rule, Dwarf_Sword off)
{
	if (off < 0 || off > LP_CFA_MAX_OFFSET || off % 8)
		return LP_CFA_NONE;
	return rule | (__u16)(off / 8) << LP_CFA_RULE_BITS;
}

/* LP_CFA_FP_DEREF's offset is signed: the saved CFA lies below the frame record. */
static __u16 deref_word(Dwarf_Sword off)
{
	if (off < LP_CFA_DEREF_MIN || off > LP_CFA_DEREF_MAX || off % 8)
		return LP_CFA_NONE;
	return LP_CFA_FP_DEREF | (__u16)((__u16)(off / 8) << LP_CFA_RULE_BITS);
}

static bool is_breg(const Dwarf_Op *op, int reg, Dwarf_Sword *off)
{
	if (op->atom == DW_OP_bregx && op->number == (Dwarf_Word)reg) {
		*off = (Dwarf_Sword)op->number2;
		return true;
	}
	if (reg < 32 && op->atom == DW_OP_breg0 + reg) {
		*off = (Dwarf_Sword)op->number;
		return true;
	}
	return false;
}

/*
 * binutils' x86-64 PLT rule: DW_OP_breg7 (rsp) N; DW_OP_breg16 (rip) 0;
 * DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus: past the 11th byte of a 16-byte entry, it pushed one word.
 */
static __u16 plt_cfa(const struct cfi_regs *r, const Dwarf_Op *ops, size_t n)
{
	static const __u8 tail[] = {DW_OP_lit15, DW_OP_and, DW_OP_lit11, DW_OP_ge,
				    DW_OP_lit3,	 DW_OP_shl, DW_OP_plus};
	Dwarf_Sword off, zero;
	size_t i;

	if (r->ip < 0 || n != 2 + sizeof(tail) || !is_breg(&ops[0], r->sp, &off) ||
	    !is_breg(&ops[1], r->ip, &zero) || zero)
		return LP_CFA_NONE;
	for (i = 0; i < sizeof(tail); i++)
		if (ops[2 + i].atom != tail[i])
			return LP_CFA_NONE;
	return cfa_word(LP_CFA_PLT, off);
}

static __u16 cfa_rule(const struct cfi_regs *r, Dwarf_Frame *f)
{
	Dwarf_Sword off;
	Dwarf_Op *ops;
	size_t n;

	if (dwarf_frame_cfa(f, &ops, &n) || !n)
		return LP_CFA_NONE;
	if (n == 1 && is_breg(&ops[0], r->sp, &off))
		return cfa_word(LP_CFA_SP, off);
	if (n == 1 && is_breg(&ops[0], r->fp, &off))
		return cfa_word(LP_CFA_FP, off);
	/*
	 * gcc's stack realignment (a dynamic allocation beside an over-aligned
	 * local): the register that held the CFA is pushed below the frame
	 * record, after the callee-saved registers pushed before it, and the
	 * CFA is *(FP + offset). FP + 16 is not the CFA: the realignment's
	 * padding lies between them.
	 */
	if (r->ip >= 0 && n == 2 && is_breg(&ops[0], r->fp, &off) && ops[1].atom == DW_OP_deref)
		return deref_word(off);
	return plt_cfa(r, ops, n);
}

enum reg_rule { REG_SAME, REG_UNDEFINED, REG_AT_CFA, REG_AT_FP, REG_OTHER };

/* Where the caller's register reg is: unchanged, lost, at CFA + *off, or at FP + *off. */
static enum reg_rule reg_rule(const struct cfi_regs *r, Dwarf_Frame *f, int reg, Dwarf_Sword *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(f, reg, mem, &ops, &n))
		return REG_OTHER;
	if (!n)
		return ops ? REG_UNDEFINED : REG_SAME;
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return REG_OTHER;
	if (n == 1) {
		*off = 0;
		return REG_AT_CFA;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (Dwarf_Sword)ops[1].number;
		return REG_AT_CFA;
	}
	if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*off = (Dwarf_Sword)ops[1].number;
		return REG_AT_CFA;
	}
	/* DW_CFA_expression (libdw pushes the CFA first): saved at FP + offset */
	if (n == 2 && is_breg(&ops[1], r->fp, off))
		return REG_AT_FP;
	return REG_OTHER;
}

static bool slot_offset(Dwarf_Sword off)
{
	return off < 0 && off >= -32768 && off % 8 == 0;
}

/* The row word for frame f: 0 when the walker cannot follow it. */
static void frame_row(const struct cfi_regs *r, Dwarf_Frame *f, bool signal, __u16 *cfa,
		      __s16 *regs)
{
	Dwarf_Sword fp_off = 0, ra_off = 0;
	enum reg_rule fp, ra;

	*regs = 0;
	if (signal) { /* a sigreturn trampoline: the kernel's frame is at SP */
		*cfa = LP_CFA_SIGNAL;
		return;
	}
	ra = reg_rule(r, f, r->ra, &ra_off);
	if (ra == REG_UNDEFINED) {
		*cfa = LP_CFA_END;
		return;
	}
	*cfa = cfa_rule(r, f);
	fp = reg_rule(r, f, r->fp, &fp_off);
	if ((*cfa & LP_CFA_RULE_MASK) == LP_CFA_FP_DEREF) {
		/* the realigned frame's record: FP saved at FP, the return address at CFA - 8 */
		if (fp != REG_AT_FP || fp_off || ra != REG_AT_CFA || ra_off != -8)
			goto none;
		return;
	}
	if (fp == REG_AT_CFA) {
		if (!slot_offset(fp_off))
			goto none;
		*regs = fp_off;
	} else if (fp != REG_SAME && fp != REG_UNDEFINED) {
		goto none;
	}
	/* REG_UNDEFINED FP: the caller's value is lost, which only a caller using FP would notice */
	if (r->ip >= 0) { /* x86-64: the call pushed the return address */
		if (ra != REG_AT_CFA || ra_off != -8)
			goto none;
		return;
	}
	if (ra == REG_SAME) {
		*regs |= LP_RA_LR;
	} else if (ra == REG_AT_CFA && fp == REG_AT_CFA && ra_off == fp_off + 8) {
		*regs |= LP_RA_FP_P8;
	} else if (ra == REG_AT_CFA && fp != REG_AT_CFA && slot_offset(ra_off)) {
		*regs = ra_off | LP_RA_AT;
	} else {
		goto none;
	}
	return;
none:
	*cfa = LP_CFA_NONE;
	*regs = 0;
}

static int read_encoded(const __u8 *p, const __u8 *end, __u8 enc, __u64 field_addr, __u64 *out)
{
	__u64 v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		if (end - p < 8)
			return -1;
		memcpy(&v, p, 8);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4: {
		__u32 w;

		if (end - p < 4)
			return -1;
		memcpy(&w, p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (__u64)(__s64)(__s32)w : w;
		break;
	}
	default:
		return -1;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field_addr;
		break;
	default:
		return -1;
	}
	*out = v;
	return 0;
}

/* The FDE pointer encoding of a CIE ('R' in its augmentation); absptr without one. */
static int cie_fde_encoding(const Dwarf_CIE *cie, __u8 *enc)
{
	const char *a = cie->augmentation;
	const __u8 *d = cie->augmentation_data, *end = d + cie->augmentation_data_size;

	*enc = DW_EH_PE_absptr;
	if (a[0] != 'z')
		return a[0] ? -1 : 0;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (d >= end)
				return -1;
			*enc = *d;
			return 0;
		case 'L':
			d++;
			break;
		case 'P': {
			static const __u8 sizes[16] = {[0] = 8, [2] = 2, [3] = 4, [4] = 8,
						       [10] = 2, [11] = 4, [12] = 8};
			__u8 penc;

			if (d >= end)
				return -1;
			penc = *d++;
			if (!sizes[penc & 0x0f])
				return -1;
			d += sizes[penc & 0x0f];
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->source - (int)y->source;
}

struct fde_list {
	struct fde_range *v;
	size_t len, cap;
};

/* Adds the FDE ranges of CFI section scn of elf, interpreted by cfi, to l. */
static int list_fdes(Elf *elf, Elf_Scn *scn, bool eh_frame, Dwarf_CFI *cfi, struct fde_list *l)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	size_t found = 0;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e, cie;
	GElf_Shdr sh;
	Elf_Data *d;
	int ret;

	d = elf_getdata(scn, NULL);
	if (!ident || !d || !d->d_buf || !gelf_getshdr(scn, &sh))
		return -EINVAL;
	while ((ret = dwarf_next_cfi(ident, d, eh_frame, off, &next, &e)) == 0) {
		const __u8 *p = e.fde.start, *end = e.fde.end;
		__u64 start, range;
		Dwarf_Off cnext;
		__u8 enc;

		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (dwarf_next_cfi(ident, d, eh_frame, e.fde.CIE_pointer, &cnext, &cie) ||
		    !dwarf_cfi_cie_p(&cie) || cie_fde_encoding(&cie.cie, &enc))
			continue;
		if (read_encoded(p, end, enc, sh.sh_addr + (p - (const __u8 *)d->d_buf), &start) ||
		    read_encoded(p + ((enc & 0x0f) == DW_EH_PE_udata4 ||
					      (enc & 0x0f) == DW_EH_PE_sdata4
				      ? 4
				      : 8),
				 end, enc & 0x0f, 0, &range))
			continue;
		if (!range || start + range < start)
			continue;
		if (l->len == l->cap) {
			if ((l->cap ? 2 * l->cap : 256) > MAX_FDES)
				return -E2BIG;
			if (ARRAY_RESERVE_MIN(l->v, l->cap, l->len + 1, 256))
				return -ENOMEM;
		}
		l->v[l->len++] = (struct fde_range){start, start + range, cfi, !eh_frame};
		found++;
	}
	return ret < 0 && !found ? -EINVAL : 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

bool unwind_table__has_debug_frame(Elf *elf)
{
	return find_section(elf, ".debug_frame") != NULL;
}

/* The rows of every FDE, in address order; overlapping FDEs keep the first. */
static int derive(const struct cfi_regs *r, const struct fde_range *fdes, size_t nfdes,
		  struct unwind_table *t)
{
	Dwarf_Addr covered = 0, a, start, end;
	Dwarf_Frame *f;
	__u16 cfa;
	__s16 regs;
	bool signal;
	size_t i;
	int ret;

	for (i = 0; i < nfdes; i++) {
		if (fdes[i].start < covered)
			continue;
		if (fdes[i].end > 0xffffffffull)
			return -ERANGE;
		if (t->count && fdes[i].start > covered) { /* a gap without CFI */
			ret = push_row(t, covered, LP_CFA_NO_CFI, 0);
			if (ret)
				return ret;
		}
		for (a = fdes[i].start; a < fdes[i].end; a = end) {
			if (dwarf_cfi_addrframe(fdes[i].cfi, a, &f)) {
				cfa = LP_CFA_NONE;
				regs = 0;
				end = fdes[i].end;
			} else {
				if (dwarf_frame_info(f, &start, &end, &signal) < 0 || end <= a ||
				    end > fdes[i].end)
					end = fdes[i].end;
				frame_row(r, f, signal, &cfa, &regs);
				free(f);
			}
			ret = push_row(t, a, cfa, regs);
			if (ret)
				return ret;
		}
		covered = fdes[i].end;
	}
	return t->count ? push_row(t, covered, LP_CFA_NO_CFI, 0) : 0;
}

/* The value of elf's dynamic symbol name, or 0. */
static Dwarf_Addr dynamic_symbol(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Shdr sh;
	GElf_Sym sym;
	const char *n;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) == STT_SECTION)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_shndx != SHN_UNDEF)
				return sym.st_value;
		}
	}
	return 0;
}

int unwind_table__set_signal(struct unwind_table *t, __u32 lo, __u32 hi)
{
	struct unwind_table n = {};
	const struct lp_unwind_row *at_hi = unwind_table__find(t, hi);
	size_t i;
	int ret = 0;

	if (lo >= hi)
		return -EINVAL;
	for (i = 0; i < t->count && t->rows[i].pc < lo && !ret; i++)
		ret = push_row(&n, t->rows[i].pc, t->rows[i].cfa, t->rows[i].regs);
	if (!ret)
		ret = push_row(&n, lo, LP_CFA_SIGNAL, 0);
	/* above it, the rule that held there: code without CFI if none did */
	if (!ret && (!at_hi || at_hi->pc < hi))
		ret = push_row(&n, hi, at_hi ? at_hi->cfa : LP_CFA_NO_CFI, at_hi ? at_hi->regs : 0);
	for (; i < t->count && !ret; i++)
		if (t->rows[i].pc >= hi)
			ret = push_row(&n, t->rows[i].pc, t->rows[i].cfa, t->rows[i].regs);
	if (ret) {
		unwind_table__free(&n);
		return ret;
	}
	unwind_table__free(t);
	*t = n;
	return 0;
}

/* The rows of r's signal trampoline, if elf defines it. */
static int add_sigreturn(const struct cfi_regs *r, Elf *elf, struct unwind_table *t)
{
	Dwarf_Addr a = r->sigreturn ? dynamic_symbol(elf, r->sigreturn) : 0;

	if (!a || a < r->sigreturn_before || a + r->sigreturn_len > 0xffffffffull)
		return 0;
	return unwind_table__set_signal(t, a - r->sigreturn_before, a + r->sigreturn_len);
}

int unwind_table__build(Elf *elf, Elf *debug, struct unwind_table *t, char *err, size_t err_len)
{
	const struct cfi_regs *r;
	struct fde_list l = {};
	Dwarf_CFI *eh_cfi = NULL, *debug_cfi = NULL;
	Elf_Scn *eh_scn, *debug_scn;
	Dwarf *dw = NULL;
	GElf_Ehdr eh;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh)) {
		msg__set(err, err_len, "not an ELF file");
		return -EINVAL;
	}
	if (eh.e_machine == EM_X86_64)
		r = &x86_64_regs;
	else if (eh.e_machine == EM_AARCH64)
		r = &aarch64_regs;
	else {
		msg__set(err, err_len, "machine %u has no unwind rules", eh.e_machine);
		return -ENOTSUP;
	}
	/* .eh_frame first; .debug_frame (of the debug file if given) where it has none */
	if (!debug)
		debug = elf;
	eh_scn = find_section(elf, ".eh_frame");
	debug_scn = find_section(debug, ".debug_frame");
	if (eh_scn) {
		eh_cfi = dwarf_getcfi_elf(elf);
		if (eh_cfi)
			ret = list_fdes(elf, eh_scn, true, eh_cfi, &l);
	}
	if (!ret && debug_scn) {
		dw = dwarf_begin_elf(debug, DWARF_C_READ, NULL);
		debug_cfi = dw ? dwarf_getcfi(dw) : NULL;
		if (debug_cfi)
			ret = list_fdes(debug, debug_scn, false, debug_cfi, &l);
	}
	if (!ret && (eh_scn || debug_scn) && !eh_cfi && !debug_cfi)
		ret = -EINVAL;
	if (ret) {
		msg__set(err, err_len, "unreadable CFI: %s", strerror(-ret));
		goto out;
	}
	if (l.len)
		qsort(l.v, l.len, sizeof(*l.v), cmp_fde);
	ret = derive(r, l.v, l.len, t);
	if (!ret)
		ret = add_sigreturn(r, elf, t);
	if (ret) {
		msg__set(err, err_len, "%s", ret == -ERANGE ? "code above 4 GiB" : strerror(-ret));
		unwind_table__free(t);
	}
out:
	free(l.v);
	if (dw)
		dwarf_end(dw);
	if (eh_cfi)
		dwarf_cfi_end(eh_cfi);
	return ret;
}

void unwind_table__free(struct unwind_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct lp_unwind_row *unwind_table__find(const struct unwind_table *t, __u32 pc)
{
	size_t i = SORTED_UPPER_BOUND(t->rows, t->count, pc, pc);

	return i ? &t->rows[i - 1] : NULL;
}
