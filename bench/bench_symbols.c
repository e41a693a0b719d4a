// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolization of large C++ objects: for each file given, maps it into this
 * process and resolves an address inside each of its function symbols
 * through the symbolizer (ELF symbols only, no DWARF): once cold (the
 * symbol table is parsed on the way) and once warm; then demangles every
 * distinct name found, as the profile builder does once per name and
 * profile. Prints one JSON line per file.
 *   bench_symbols FILE...
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "symbolize/demangle.h"
#include "symbolize/symbols.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *file, const char *what)
{
	fprintf(stderr, "bench_symbols: %s: %s\n", file, what);
	exit(1);
}

/* The file offset of ELF address vaddr, or -1 if no PT_LOAD holds it. */
static long file_offset(Elf *elf, size_t phnum, __u64 vaddr)
{
	size_t i;

	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return -1;
}

/* Addresses (in a mapping of the whole file at base) inside each sized function symbol. */
static __u64 *function_addresses(Elf *elf, __u64 base, size_t *n)
{
	Elf_Scn *scn = NULL;
	__u64 *ips = NULL;
	size_t cap = 0, phnum;

	*n = 0;
	if (elf_getphdrnum(elf, &phnum))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		for (i = 1; data && i < data->d_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym s;
			long off;

			if (!gelf_getsym(data, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || s.st_size < 2)
				continue;
			off = file_offset(elf, phnum, s.st_value + 1);
			if (off < 0)
				continue;
			if (ARRAY_RESERVE_MIN(ips, cap, *n + 1, 4096))
				return NULL;
			ips[(*n)++] = base + off;
		}
	}
	return ips;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bench_file(const char *path)
{
	struct symbolizer_opts opts = {.no_dwarf = true, .max_symbol_bytes = 256u << 20};
	size_t n, i, named = 0, distinct = 0, mangled = 0;
	double t0, cold_ms, warm_ms, demangle_ms;
	struct symbolizer *sym;
	struct sym_frame f;
	struct stat st;
	char **names;
	__u64 *ips;
	__u32 snap;
	Elf *elf;
	void *m;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		die(path, "cannot open");
	m = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (m == MAP_FAILED || !elf)
		die(path, "cannot map");
	ips = function_addresses(elf, (uintptr_t)m, &n);
	names = calloc(n ? n : 1, sizeof(*names));
	sym = symbolizer__new(&opts);
	if (!ips || !n || !names || !sym)
		die(path, "no function symbols");
	snap = symbolizer__snapshot(sym, getpid(), NULL);

	t0 = now_ms();
	for (i = 0; i < n; i++) {
		if (symbolizer__resolve_user(sym, snap, ips[i], 0, &f))
			continue;
		names[named] = strdup(f.function);
		if (!names[named++])
			die(path, "out of memory");
	}
	cold_ms = now_ms() - t0;
	t0 = now_ms();
	for (i = 0; i < n; i++)
		symbolizer__resolve_user(sym, snap, ips[i], 0, &f);
	warm_ms = now_ms() - t0;

	qsort(names, named, sizeof(*names), cmp_str);
	t0 = now_ms();
	for (i = 0; i < named; i++) {
		char *d;

		if (i && !strcmp(names[i], names[i - 1]))
			continue;
		distinct++;
		d = sym_demangle(names[i]);
		mangled += !!d;
		free(d);
	}
	demangle_ms = now_ms() - t0;

	printf("{\"file\": \"%s\", \"addresses\": %zu, \"named\": %zu, \"names\": %zu, "
	       "\"mangled\": %zu, \"cold_ms\": %.1f, \"warm_ns_per_address\": %.0f, "
	       "\"demangle_ms\": %.1f, \"demangle_us_per_name\": %.2f}\n",
	       path, n, named, distinct, mangled, cold_ms, warm_ms * 1e6 / n, demangle_ms,
	       mangled ? demangle_ms * 1e3 / mangled : 0.0);
	for (i = 0; i < named; i++)
		free(names[i]);
	free(names);
	free(ips);
	symbolizer__free(sym);
	elf_end(elf);
	munmap(m, st.st_size);
	close(fd);
}

int main(int argc, char **argv)
{
	int i;

	elf_version(EV_CURRENT);
	for (i = 1; i < argc; i++)
		bench_file(argv[i]);
	return 0;
}
