// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes ELF inspection: the input is a whole file, written to a memfd and
 * opened through /proc/self/fd as the profiler opens mapped files. Runs the
 * TLS inspection, then every elf_file__* reader over what the file claims.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/elf.h"
#include "proc/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads are bounded so that a claimed size cannot make the fuzzer allocate gigabytes. */
#define READ_MAX 4096

static const char *const names[] = {
	"custom_labels_current_set",
	"custom_labels_thread_local_data",
	"custom_labels_abi_version",
	"main",
	"",
};

static int fd = -1;
static char path[64];

static void read_at(const struct elf_file *ef, GElf_Addr vaddr, size_t size)
{
	static unsigned char buf[READ_MAX];
	int ret;

	if (size > READ_MAX)
		size = READ_MAX;
	ret = elf_file__read_vaddr(ef, vaddr, buf, size);
	if (ret && ret != -ENOENT && ret != -EIO)
		abort();
}

static int on_rela(const GElf_Rela *rela, const GElf_Sym *sym, const char *sym_name, void *ctx)
{
	const struct elf_file *ef = ctx;

	/* The name must be a readable C string: strlen runs it through ASan. */
	if (strlen(sym_name) > (size_t)1 << 30)
		abort();
	read_at(ef, rela->r_offset, 8);
	return 0;
}

static void inspect(const struct elf_file *ef)
{
	unsigned char id[ELF_BUILD_ID_MAX + 1];
	unsigned int found[sizeof(names) / sizeof(names[0])];
	GElf_Sym syms[sizeof(names) / sizeof(names[0])];
	const char *link;
	size_t len, i;
	GElf_Phdr phdr;
	GElf_Sym sym;
	bool dynamic;

	len = elf_file__build_id(ef, id, sizeof(id));
	if (len > ELF_BUILD_ID_MAX)
		abort();
	/* A buffer too small for the id is not overrun. */
	elf_file__build_id(ef, id, 1);
	link = elf_file__debuglink(ef);
	if (link && !*link)
		abort();
	elf_file__type(ef);
	elf_file__machine(ef);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!elf_file__find_symbol(ef, names[i], &sym, &dynamic))
			read_at(ef, sym.st_value, sym.st_size ? sym.st_size : 8);
	elf_file__find_symbols(ef, names, sizeof(names) / sizeof(names[0]), syms, found);
	elf_file__for_each_rela(ef, on_rela, (void *)ef);
	for (i = 0; i < elf_file__phnum(ef); i++) {
		if (elf_file__phdr(ef, i, &phdr))
			continue;
		read_at(ef, phdr.p_vaddr, 16);
		read_at(ef, phdr.p_vaddr + phdr.p_filesz - 1, 1);
	}
	if (!elf_file__phdr(ef, elf_file__phnum(ef), &phdr))
		abort();
	read_at(ef, 0, 8);
	read_at(ef, ~0ULL - 3, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_file_info info;
	struct lp_recipe recipe;
	struct elf_file *ef;
	char err[256];

	/* One memfd for the whole run: refilled, not recreated, for every input. */
	if (fd < 0) {
		fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();

	if (!tls__inspect_file(path, &info, err, sizeof(err))) {
		if (info.nr_relocs > TLS_MAX_RELOCS ||
		    info.nr_exec_segments > TLS_MAX_EXEC_SEGMENTS)
			abort();
		tls__exe_recipe(&info, &recipe);
	} else if (!memchr(err, '\0', sizeof(err))) {
		abort();
	}

	ef = elf_file__open_fd(fd, "fuzz", err, sizeof(err));
	if (ef) {
		inspect(ef);
		elf_file__close(ef);
	}
	return 0;
}
