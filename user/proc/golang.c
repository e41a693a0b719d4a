// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Go build info and the goroutine-label offsets per Go version
 * (docs/design.md section 8).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compiler.h"
#include "lib/elf.h"
#include "lib/msg.h"
#include "proc/golang.h"
#include "proc/tls.h"

/* The build info header: magic, pointer size, flags (cmd/go/internal/version, debug/buildinfo). */
#define BUILDINFO_MAGIC	      "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN   14
#define BUILDINFO_HDR_LEN     32
#define BUILDINFO_FLAG_BE     0x1
#define BUILDINFO_FLAG_INLINE 0x2 /* Go >= 1.18: varint-prefixed strings follow the header */

/*
 * Offsets for 64-bit targets (amd64 and arm64 lay g and m out alike), by
 * minor version. Sources: each release's src/runtime/runtime2.go (g.m, m.curg,
 * g.labels) and src/runtime/pprof/label.go (the labels format); the numbers
 * agree with the DWARF of that release's binaries as tabulated by the
 * OpenTelemetry eBPF profiler (interpreter/golabels/runtime_data.go). Go 1.19
 * is checked against the DWARF of binaries built here (tests/unit/test_golang.c).
 */
static const struct go_offsets {
	int minor_min, minor_max;
	uint32_t format;
	uint32_t m, curg, labels;
} go_table[] = {
	/* go1.17-go1.20 runtime2.go and pprof/label.go: labelMap is map[string]string */
	{17, 20, LP_GO_LABELS_MAP, 48, 192, 360},
	/* go1.21, go1.22 runtime2.go: fields before g.labels changed, labels @344 */
	{21, 22, LP_GO_LABELS_MAP, 48, 192, 344},
	/* go1.23 runtime2.go: labels @352 */
	{23, 23, LP_GO_LABELS_MAP, 48, 192, 352},
	/* go1.24 pprof/label.go: labelMap is struct { LabelSet }, a sorted []label */
	{24, 24, LP_GO_LABELS_SLICE, 48, 192, 352},
	/* go1.25 runtime2.go: m.curg @184, g.labels @344 */
	{25, 25, LP_GO_LABELS_SLICE, 48, 184, 344},
	/* go1.26 runtime2.go: g.labels @352 */
	{26, 26, LP_GO_LABELS_SLICE, 48, 184, 352},
};

/* Go's own linker (no PT_TLS): g is the word just below tp on amd64 (cmd/link Tlsoffset). */
#define GO_AMD64_G_TP_OFFSET (-8)

static const char *const format_names[] = {
	[LP_GO_LABELS_MAP] = "map",
	[LP_GO_LABELS_SLICE] = "slice",
};

const char *golang__format_name(uint32_t format)
{
	return format < ARRAY_SIZE(format_names) ? format_names[format] : NULL;
}

int golang__minor_version(const char *version)
{
	char *end;
	long minor;

	if (strncmp(version, "go1.", 4) || version[4] < '0' || version[4] > '9')
		return -1;
	minor = strtol(version + 4, &end, 10);
	return minor > 1000 ? -1 : (int)minor;
}

/* The .go.buildinfo section's address, or 0. */
static uint64_t buildinfo_addr(const struct elf_file *ef)
{
	Elf *elf = elf_file__elf(ef);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && !strcmp(name, ".go.buildinfo"))
			return shdr.sh_addr;
	}
	return 0;
}

/* A uvarint (encoding/binary) at *addr, which it moves past; -1 if unreadable. */
static int read_uvarint(const struct elf_file *ef, uint64_t *addr, uint64_t *val)
{
	unsigned char b;
	unsigned int shift;

	*val = 0;
	for (shift = 0; shift < 64; shift += 7) {
		if (elf_file__read_vaddr(ef, (*addr)++, &b, 1))
			return -1;
		*val |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* The version string of the build info at addr into out; 0 or -1. */
static int read_buildinfo_version(const struct elf_file *ef, uint64_t addr, char *out, size_t len)
{
	unsigned char hdr[BUILDINFO_HDR_LEN];
	uint64_t at, str[2], n;

	if (elf_file__read_vaddr(ef, addr, hdr, sizeof(hdr)) ||
	    memcmp(hdr, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN))
		return -1;
	if (hdr[15] & BUILDINFO_FLAG_INLINE) {
		at = addr + BUILDINFO_HDR_LEN;
		if (read_uvarint(ef, &at, &n))
			return -1;
	} else {
		/* Go <= 1.17: a pointer to runtime.buildVersion, a { ptr, len } string */
		if (hdr[14] != 8 || (hdr[15] & BUILDINFO_FLAG_BE))
			return -1;
		memcpy(&at, hdr + 16, sizeof(at));
		if (elf_file__read_vaddr(ef, at, str, sizeof(str)))
			return -1;
		at = str[0];
		n = str[1];
	}
	if (!n || n >= len || elf_file__read_vaddr(ef, at, out, n))
		return -1;
	out[n] = '\0';
	/* a version is printable: anything else is not build info after all */
	for (at = 0; at < n; at++)
		if (out[at] < 0x20 || out[at] > 0x7e)
			return -1;
	return 0;
}

/*
 * With g in TLS, Go's code reads it at an offset from tp fixed at link time by
 * whichever linker linked it: even a stripped cgo binary, whose TLS segment
 * holds C variables too, says where g is. The offset most accesses use wins.
 *
 * x86-64: "mov %fs:DISP32, %r14" loads g into R14 (register ABI, Go >= 1.17).
 */
static const unsigned char mov_fs_r14[] = {0x64, 0x4c, 0x8b, 0x34, 0x25};
#define X86_G_LOAD_LEN (sizeof(mov_fs_r14) + sizeof(int32_t))

static bool x86_g_access(const unsigned char *p, int32_t *offset)
{
	int32_t disp;

	if (p[0] != mov_fs_r14[0] || memcmp(p, mov_fs_r14, sizeof(mov_fs_r14)))
		return false;
	memcpy(&disp, p + sizeof(mov_fs_r14), sizeof(disp));
	*offset = (int32_t)le32toh((uint32_t)disp);
	return true;
}

/*
 * aarch64: runtime.load_g and runtime.save_g (src/runtime/tls_arm64.s) take
 * tp into R0, the offset of runtime.tls_g into R27 (the linker's MOVZ, MOVK),
 * then read or write g (R28) at R0 + R27: in one instruction, or after
 * ADD R27 to R0 (later Go versions).
 */
#define A64_MRS_X0_TPIDR_EL0 0xd53bd040u
#define A64_MOVZ_X27_MASK    0xff80001fu
#define A64_MOVZ_X27	     0xd280001bu
#define A64_MOVK_X27	     0xf280001bu
#define A64_LDR_X28_X0_X27   0xf87b681cu /* ldr x28, [x0, x27] */
#define A64_STR_X28_X0_X27   0xf83b681cu /* str x28, [x0, x27] */
#define A64_ADD_X0_X0_X27    0x8b1b0000u
#define A64_LDR_X28_X0	     0xf940001cu /* ldr x28, [x0] */
#define A64_STR_X28_X0	     0xf900001cu /* str x28, [x0] */
#define A64_G_ACCESS_INSNS   5		 /* after the MRS, at most */
#define A64_G_ACCESS_LEN     (4 * (1 + A64_G_ACCESS_INSNS))

static bool a64_g_access(const unsigned char *p, int32_t *offset)
{
	uint64_t x27 = 0;
	bool have_x27 = false, added = false;
	unsigned int i, shift;
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	if (le32toh(w) != A64_MRS_X0_TPIDR_EL0)
		return false;
	for (i = 1; i <= A64_G_ACCESS_INSNS; i++) {
		memcpy(&w, p + 4 * i, sizeof(w));
		w = le32toh(w);
		shift = ((w >> 21) & 3) * 16;
		if ((w & A64_MOVZ_X27_MASK) == A64_MOVZ_X27) {
			x27 = (uint64_t)((w >> 5) & 0xffff) << shift;
			have_x27 = true;
		} else if ((w & A64_MOVZ_X27_MASK) == A64_MOVK_X27 && have_x27) {
			x27 &= ~((uint64_t)0xffff << shift);
			x27 |= (uint64_t)((w >> 5) & 0xffff) << shift;
		} else if (w == A64_ADD_X0_X0_X27 && have_x27 && !added) {
			added = true;
		} else if (have_x27 && x27 <= INT32_MAX &&
			   (added ? w == A64_LDR_X28_X0 || w == A64_STR_X28_X0
				  : w == A64_LDR_X28_X0_X27 || w == A64_STR_X28_X0_X27)) {
			*offset = (int32_t)x27;
			return true;
		} else {
			/* anything else may change R0 or R27: not this sequence */
			return false;
		}
	}
	return false;
}

#define CODE_SCAN_MAX	  (256u << 20)
#define CODE_SCAN_CHUNK	  (1u << 20)
#define CODE_SCAN_OFFSETS 8

struct disp_count {
	int32_t disp;
	uint32_t count;
};

static void count_disp(struct disp_count *c, int32_t disp)
{
	size_t i;

	for (i = 0; i < CODE_SCAN_OFFSETS; i++) {
		if (c[i].count && c[i].disp != disp)
			continue;
		c[i].disp = disp;
		c[i].count++;
		return;
	}
}

static void scan_code_for_g(const struct elf_file *ef, struct go_file_info *info)
{
	struct disp_count counts[CODE_SCAN_OFFSETS] = {};
	bool (*access)(const unsigned char *p, int32_t *offset);
	size_t insn, step, i, k, n;
	uint64_t scanned = 0, at, len;
	unsigned char *buf;
	int32_t disp;
	GElf_Phdr ph;

	switch (elf_file__machine(ef)) {
	case EM_X86_64:
		access = x86_g_access;
		insn = X86_G_LOAD_LEN;
		step = 1;
		break;
	case EM_AARCH64:
		access = a64_g_access;
		insn = A64_G_ACCESS_LEN;
		step = 4; /* instructions are aligned words, as are the segments' starts */
		break;
	default:
		return;
	}
	buf = malloc(CODE_SCAN_CHUNK + insn);
	if (!buf)
		return;
	for (i = 0; i < elf_file__phnum(ef) && scanned < CODE_SCAN_MAX; i++) {
		if (elf_file__phdr(ef, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_vaddr % step)
			continue;
		/* chunks overlap by an instruction, so that none is missed at a boundary */
		for (at = 0; at + insn <= ph.p_filesz && scanned < CODE_SCAN_MAX;
		     at += CODE_SCAN_CHUNK) {
			len = ph.p_filesz - at < CODE_SCAN_CHUNK + insn ? ph.p_filesz - at
									 : CODE_SCAN_CHUNK + insn;
			if (elf_file__read_vaddr(ef, ph.p_vaddr + at, buf, len))
				break;
			scanned += len;
			n = len - insn + 1;
			if (n > CODE_SCAN_CHUNK)
				n = CODE_SCAN_CHUNK;
			for (k = 0; k < n; k += step)
				if (access(buf + k, &disp))
					count_disp(counts, disp);
		}
	}
	free(buf);
	for (k = 0, i = 0; k < CODE_SCAN_OFFSETS; k++)
		if (counts[k].count > counts[i].count)
			i = k;
	if (counts[i].count) {
		info->has_code_g = true;
		info->code_g_offset = counts[i].disp;
	}
}

/*
 * The TLS symbol Go's code reads g from: runtime.tlsg on x86-64; on aarch64
 * runtime.tls_g (the linker makes a runtime.tlsg there too, which nothing uses).
 */
static const char *g_symbol(unsigned int machine)
{
	switch (machine) {
	case EM_X86_64:
		return "runtime.tlsg";
	case EM_AARCH64:
		return "runtime.tls_g";
	default:
		return NULL;
	}
}

void golang__inspect_elf(const struct elf_file *ef, struct go_file_info *info)
{
	uint64_t addr = buildinfo_addr(ef);
	const char *name = g_symbol(elf_file__machine(ef));
	GElf_Sym sym;

	memset(info, 0, sizeof(*info));
	if (!addr || read_buildinfo_version(ef, addr, info->version, sizeof(info->version)))
		return;
	info->is_go = true;
	if (name && !elf_file__find_symbol(ef, name, &sym, NULL) &&
	    GELF_ST_TYPE(sym.st_info) == STT_TLS) {
		info->has_g_sym = true;
		info->g_sym_value = sym.st_value;
	}
	scan_code_for_g(ef, info);
}

/* Whether the offset Go's code reads g at is a word of the executable's static TLS block. */
static bool code_g_in_block(const struct tls_file_info *info)
{
	int64_t first, end;

	if (tls__exe_tls_offset(info, 0, &first) ||
	    tls__exe_tls_offset(info, info->tls_memsz, &end))
		return false;
	return info->go.code_g_offset >= first &&
	       (int64_t)info->go.code_g_offset + (int64_t)sizeof(uint64_t) <= end;
}

/* g's slot relative to tp, or g in a register; 0 or -EINVAL with a reason in msg. */
static int locate_g(const struct tls_file_info *info, struct lp_go_ref *ref, char *how,
		    size_t how_len, char *msg, size_t msg_len)
{
	const struct go_file_info *go = &info->go;
	uint64_t value;
	int64_t offset;

	if (!info->has_tls) {
		/* Go's own linker: no TLS segment, g in Go's fixed slot or register */
		if (info->machine == EM_X86_64) {
			ref->g_offset = GO_AMD64_G_TP_OFFSET;
			snprintf(how, how_len, "g at tp%+d", GO_AMD64_G_TP_OFFSET);
			return 0;
		}
		if (info->machine == EM_AARCH64) {
			ref->g_in_register = 1;
			snprintf(how, how_len, "g in R28");
			return 0;
		}
		msg__set(msg, msg_len, "%s: unsupported machine %u", go->version, info->machine);
		return -EINVAL;
	}
	/*
	 * Linked by the system linker (cgo): g is in the executable's static
	 * TLS block, where Go's code reads it; else where its symbol is (the
	 * code not recognized); stripped of .symtab too, a TLS segment of one
	 * word can only be that slot.
	 */
	if (go->has_code_g && code_g_in_block(info)) {
		ref->g_offset = go->code_g_offset;
		snprintf(how, how_len, "g at tp%+d (where %s reads it)", go->code_g_offset,
			 info->machine == EM_AARCH64 ? "runtime.load_g" : "Go's code");
		return 0;
	}
	if (go->has_g_sym)
		value = go->g_sym_value;
	else if (info->tls_memsz <= sizeof(uint64_t))
		value = 0;
	else {
		msg__set(msg, msg_len,
			 "%s: %s not in .symtab (stripped), no known access to it in the code, and "
			 "the TLS segment holds %llu bytes: g not located",
			 go->version, g_symbol(info->machine) ?: "g's symbol",
			 (unsigned long long)info->tls_memsz);
		return -EINVAL;
	}
	if (tls__exe_tls_offset(info, value, &offset)) {
		msg__set(msg, msg_len, "%s: unusable TLS segment", go->version);
		return -EINVAL;
	}
	ref->g_offset = offset;
	snprintf(how, how_len, "g at tp%+lld (%s)", (long long)offset,
		 go->has_g_sym ? g_symbol(info->machine) : "the TLS segment's only word");
	return 0;
}

int golang__recipe(const struct tls_file_info *info, struct lp_go_ref *ref, char *msg,
		   size_t msg_len)
{
	const struct go_file_info *go = &info->go;
	const struct go_offsets *o = NULL;
	char how[96];
	int minor = golang__minor_version(go->version), ret;
	size_t i;

	memset(ref, 0, sizeof(*ref));
	if (!go->is_go)
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(go_table); i++)
		if (minor >= go_table[i].minor_min && minor <= go_table[i].minor_max)
			o = &go_table[i];
	if (!o) {
		msg__set(msg, msg_len, "%s: labels not supported (no offsets for this version)",
			 go->version);
		return -ENOTSUP;
	}
	ret = locate_g(info, ref, how, sizeof(how), msg, msg_len);
	if (ret) {
		memset(ref, 0, sizeof(*ref));
		return ret;
	}
	ref->format = o->format;
	ref->m_offset = o->m;
	ref->curg_offset = o->curg;
	ref->labels_offset = o->labels;
	msg__set(msg, msg_len, "%s: pprof labels (%s), %s, g.m @%u, m.curg @%u, g.labels @%u",
		 go->version, golang__format_name(o->format), how, o->m, o->curg, o->labels);
	return 0;
}
