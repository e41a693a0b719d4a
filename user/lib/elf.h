/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Read-only access to ELF files that may be truncated or hostile. Every
 * function checks what it reads against the file's real size; failures are
 * reported, never crashed on.
 */
#ifndef LABELPROF_ELF_H
#define LABELPROF_ELF_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ELF_BUILD_ID_MAX 64

struct elf_file;

/*
 * Opens an ELF64 little-endian file for reading. On failure returns NULL and
 * writes a reason a user can act on into err (if err_len > 0).
 */
struct elf_file *elf_file__open(const char *path, char *err, size_t err_len);
/* Same, for an already open descriptor (not closed by elf_file__close). */
struct elf_file *elf_file__open_fd(int fd, const char *name, char *err, size_t err_len);
void elf_file__close(struct elf_file *ef);

/* The libelf handle, for callers that walk sections or program headers. */
Elf *elf_file__elf(const struct elf_file *ef);
const char *elf_file__name(const struct elf_file *ef);
/* e_type (ET_EXEC, ET_DYN) and e_machine (EM_X86_64, EM_AARCH64). */
unsigned int elf_file__type(const struct elf_file *ef);
unsigned int elf_file__machine(const struct elf_file *ef);

/* GNU build id into buf; returns its length, 0 if the file has none. */
size_t elf_file__build_id(const struct elf_file *ef, unsigned char *buf, size_t size);
/* The .gnu_debuglink file name, or NULL. */
const char *elf_file__debuglink(const struct elf_file *ef);

/*
 * Finds a defined symbol by name, in .dynsym first and then .symtab.
 * Returns 0 and fills *sym (and *dynamic, if non-NULL), or -ENOENT.
 */
int elf_file__find_symbol(const struct elf_file *ef, const char *name, GElf_Sym *sym,
			  bool *dynamic);

/*
 * Looks up n names in one pass over .dynsym, then over .symtab for the names
 * still missing. found[i] is SHT_DYNSYM or SHT_SYMTAB where names[i] was found
 * (and syms[i] is filled), 0 where it was not. Returns how many were found.
 */
int elf_file__find_symbols(const struct elf_file *ef, const char *const *names, size_t n,
			   GElf_Sym *syms, unsigned int *found);

/*
 * Calls fn for each entry of each SHT_RELA section, with the entry's symbol
 * (index 0: a zeroed symbol named ""); entries whose symbol index is invalid
 * are skipped. Stops at the first non-zero return of fn and returns it.
 */
typedef int (*elf_rela_fn)(const GElf_Rela *rela, const GElf_Sym *sym, const char *sym_name,
			   void *ctx);
int elf_file__for_each_rela(const struct elf_file *ef, elf_rela_fn fn, void *ctx);

/* Size in bytes of the file when it was opened. */
size_t elf_file__size(const struct elf_file *ef);
/* Program headers: their number, and header i (0, or -EINVAL). */
size_t elf_file__phnum(const struct elf_file *ef);
int elf_file__phdr(const struct elf_file *ef, size_t i, GElf_Phdr *phdr);

/*
 * Reads size bytes at virtual address vaddr from the file's contents (the
 * PT_LOAD segment or section that holds them). Returns 0, -ENOENT when no
 * file-backed byte range covers them (e.g. .bss), -EIO if the file shrank
 * since it was opened.
 */
int elf_file__read_vaddr(const struct elf_file *ef, GElf_Addr vaddr, void *buf, size_t size);

/*
 * The load bias of the file mapped at start from file offset (a mapping's
 * start and offset): start minus the link-time address. 0, or -ENOENT if no
 * PT_LOAD segment is mapped from that offset.
 */
int elf_file__load_bias(const struct elf_file *ef, __u64 offset, __u64 start, __u64 *bias);

#endif /* LABELPROF_ELF_H */
