// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Read-only ELF access on top of libelf. The file is read with ELF_C_READ
 * (pread on demand) rather than mmap: a file truncated under us then gives a
 * short read and an error instead of SIGBUS. libelf checks the header tables
 * and section extents against the file size; we additionally check every
 * sh_link, entry size and address range before using them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "lib/elf.h"
#include "lib/msg.h"

/* Larger symbol tables are refused rather than read into memory. */
#define ELF_MAX_SYMTAB_BYTES (256u << 20)
/* Larger note sections or segments are skipped when looking for the build id. */
#define ELF_MAX_NOTE_BYTES (1u << 20)
#define ELF_MAX_RELA_BYTES (64u << 20)

struct elf_file {
	Elf *elf;
	int fd;
	bool own_fd;
	size_t size;
	size_t shnum;
	size_t phnum;
	GElf_Ehdr ehdr;
	const char *debuglink;
	char name[];
};

/* The .gnu_debuglink name, if it is NUL-terminated inside its section. */
static const char *find_debuglink(struct elf_file *ef)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	size_t i;

	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		return NULL;
	for (i = 1; i < ef->shnum && (scn = elf_getscn(ef->elf, i)); i++) {
		GElf_Shdr shdr;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(ef->elf, shstrndx, shdr.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < 2 || data->d_size > 4096)
			return NULL;
		if (!memchr(data->d_buf, '\0', data->d_size) || !*(const char *)data->d_buf)
			return NULL;
		return data->d_buf;
	}
	return NULL;
}

struct elf_file *elf_file__open_fd(int fd, const char *name, char *err, size_t err_len)
{
	unsigned char *ident;
	struct elf_file *ef;
	struct stat st;
	size_t name_len;

	if (!name)
		name = "(fd)";
	if (fstat(fd, &st)) {
		msg__set(err, err_len, "%s: %s", name, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		msg__set(err, err_len, "%s: not a regular file", name);
		return NULL;
	}
	if ((size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		msg__set(err, err_len, "%s: too small for an ELF file (%lld bytes)", name,
			 (long long)st.st_size);
		return NULL;
	}
	name_len = strlen(name);
	ef = calloc(1, sizeof(*ef) + name_len + 1);
	if (!ef) {
		msg__set(err, err_len, "%s: out of memory", name);
		return NULL;
	}
	memcpy(ef->name, name, name_len + 1);
	ef->fd = fd;
	ef->size = st.st_size;

	elf_version(EV_CURRENT);
	ef->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!ef->elf) {
		msg__set(err, err_len, "%s: not a valid ELF file: %s", name, elf_errmsg(-1));
		goto out_free;
	}
	if (elf_kind(ef->elf) != ELF_K_ELF) {
		msg__set(err, err_len, "%s: not an ELF file", name);
		goto out_elf_end;
	}
	ident = (unsigned char *)elf_getident(ef->elf, NULL);
	if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB) {
		msg__set(err, err_len, "%s: not a 64-bit little-endian ELF file", name);
		goto out_elf_end;
	}
	if (!gelf_getehdr(ef->elf, &ef->ehdr) || elf_getshdrnum(ef->elf, &ef->shnum) ||
	    elf_getphdrnum(ef->elf, &ef->phnum)) {
		msg__set(err, err_len, "%s: malformed ELF headers: %s", name, elf_errmsg(-1));
		goto out_elf_end;
	}
	ef->debuglink = find_debuglink(ef);
	return ef;

out_elf_end:
	elf_end(ef->elf);
out_free:
	free(ef);
	return NULL;
}

struct elf_file *elf_file__open(const char *path, char *err, size_t err_len)
{
	struct elf_file *ef;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		msg__set(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	ef = elf_file__open_fd(fd, path, err, err_len);
	if (!ef) {
		close(fd);
		return NULL;
	}
	ef->own_fd = true;
	return ef;
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	elf_end(ef->elf);
	if (ef->own_fd)
		close(ef->fd);
	free(ef);
}

Elf *elf_file__elf(const struct elf_file *ef)
{
	return ef->elf;
}

const char *elf_file__name(const struct elf_file *ef)
{
	return ef->name;
}

unsigned int elf_file__type(const struct elf_file *ef)
{
	return ef->ehdr.e_type;
}

unsigned int elf_file__machine(const struct elf_file *ef)
{
	return ef->ehdr.e_machine;
}

size_t elf_file__size(const struct elf_file *ef)
{
	return ef->size;
}

size_t elf_file__phnum(const struct elf_file *ef)
{
	return ef->phnum;
}

int elf_file__phdr(const struct elf_file *ef, size_t i, GElf_Phdr *phdr)
{
	if (i >= ef->phnum || !gelf_getphdr(ef->elf, i, phdr))
		return -EINVAL;
	return 0;
}

/* The build id in one block of notes, or 0. */
static size_t note_build_id(Elf_Data *data, unsigned char *buf, size_t size)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nhdr;
	unsigned int i;

	/* gelf_getnote checks each note against d_size and always advances. */
	for (i = 0; i < 4096 && off < data->d_size; i++, off = next) {
		next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off);
		if (!next)
			break;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
			continue;
		if (!nhdr.n_descsz || nhdr.n_descsz > ELF_BUILD_ID_MAX || nhdr.n_descsz > size)
			return 0;
		memcpy(buf, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
		return nhdr.n_descsz;
	}
	return 0;
}

size_t elf_file__build_id(const struct elf_file *ef, unsigned char *buf, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t i, len;

	for (i = 0; i < ef->phnum; i++) {
		GElf_Phdr phdr;
		Elf_Data *data;

		if (!gelf_getphdr(ef->elf, i, &phdr) || phdr.p_type != PT_NOTE)
			continue;
		if (phdr.p_offset > ef->size || phdr.p_filesz > ef->size - phdr.p_offset ||
		    phdr.p_filesz > ELF_MAX_NOTE_BYTES)
			continue;
		data = elf_getdata_rawchunk(ef->elf, phdr.p_offset, phdr.p_filesz,
					    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && (len = note_build_id(data, buf, size)))
			return len;
	}
	/* Separate debug files keep the notes as sections only. */
	for (i = 1; i < ef->shnum && (scn = elf_getscn(ef->elf, i)); i++) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE ||
		    shdr.sh_size > ELF_MAX_NOTE_BYTES)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (len = note_build_id(data, buf, size)))
			return len;
	}
	return 0;
}

const char *elf_file__debuglink(const struct elf_file *ef)
{
	return ef->debuglink;
}

/*
 * The symbols and string table of section scn if they are usable: returns the
 * number of symbols (0 if none or malformed).
 */
static size_t symtab_data(const struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *shdr,
			  Elf_Data **data)
{
	Elf_Scn *strscn;
	GElf_Shdr strshdr;

	if (shdr->sh_size > ELF_MAX_SYMTAB_BYTES || shdr->sh_link == 0 ||
	    shdr->sh_link >= ef->shnum)
		return 0;
	strscn = elf_getscn(ef->elf, shdr->sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strshdr) || strshdr.sh_type != SHT_STRTAB)
		return 0;
	*data = elf_getdata(scn, NULL);
	if (!*data || !(*data)->d_buf || (*data)->d_type != ELF_T_SYM)
		return 0;
	return (*data)->d_size / sizeof(Elf64_Sym);
}

int elf_file__find_symbols(const struct elf_file *ef, const char *const *names, size_t n,
			   GElf_Sym *syms, unsigned int *found)
{
	static const unsigned int types[] = {SHT_DYNSYM, SHT_SYMTAB};
	size_t missing = n, i, t;

	for (i = 0; i < n; i++)
		found[i] = 0;
	for (t = 0; t < ARRAY_SIZE(types) && missing; t++) {
		Elf_Scn *scn = NULL;

		for (i = 1; i < ef->shnum && missing && (scn = elf_getscn(ef->elf, i)); i++) {
			GElf_Shdr shdr;
			Elf_Data *data;
			size_t count, s, k;

			if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != types[t])
				continue;
			count = symtab_data(ef, scn, &shdr, &data);
			for (s = 1; s < count && missing; s++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(data, s, &sym) || sym.st_shndx == SHN_UNDEF ||
				    !sym.st_name)
					continue;
				name = elf_strptr(ef->elf, shdr.sh_link, sym.st_name);
				if (!name)
					continue;
				for (k = 0; k < n; k++) {
					if (found[k] || strcmp(name, names[k]))
						continue;
					syms[k] = sym;
					found[k] = types[t];
					missing--;
					break;
				}
			}
		}
	}
	return n - missing;
}

int elf_file__find_symbol(const struct elf_file *ef, const char *name, GElf_Sym *sym, bool *dynamic)
{
	unsigned int found;

	if (elf_file__find_symbols(ef, &name, 1, sym, &found) != 1)
		return -ENOENT;
	if (dynamic)
		*dynamic = found == SHT_DYNSYM;
	return 0;
}

static int pread_all(int fd, void *buf, size_t size, off_t off)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pread(fd, (char *)buf + done, size - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* the file shrank since it was opened */
		done += n;
	}
	return 0;
}

/*
 * Relocation entries read at once: a large library has megabytes of them
 * (libLLVM: 9 MB, nearly all R_X86_64_RELATIVE), which elf_getdata would
 * copy whole and keep until the file is closed.
 */
#define RELA_CHUNK 512

/* Calls fn for the n entries in buf (little-endian: checked at open). */
static int rela_chunk(const struct elf_file *ef, const unsigned char *buf, size_t n,
		      Elf_Data *symdata, size_t nsyms, const GElf_Shdr *symshdr, elf_rela_fn fn,
		      void *ctx)
{
	size_t r;

	for (r = 0; r < n; r++) {
		Elf64_Rela raw;
		GElf_Rela rela;
		GElf_Sym sym = {0};
		const char *name = "";
		size_t symi;
		int ret;

		memcpy(&raw, buf + r * sizeof(raw), sizeof(raw));
		rela = (GElf_Rela){raw.r_offset, raw.r_info, raw.r_addend};
		symi = GELF_R_SYM(rela.r_info);
		if (symi) {
			/* A symbol index out of range makes the entry unusable. */
			if (symi >= nsyms || !gelf_getsym(symdata, symi, &sym))
				continue;
			name = elf_strptr(ef->elf, symshdr->sh_link, sym.st_name);
			if (!name)
				continue;
		}
		ret = fn(&rela, &sym, name, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int elf_file__for_each_rela(const struct elf_file *ef, elf_rela_fn fn, void *ctx)
{
	unsigned char buf[RELA_CHUNK * sizeof(Elf64_Rela)];
	Elf_Scn *scn = NULL;
	size_t i;

	for (i = 1; i < ef->shnum && (scn = elf_getscn(ef->elf, i)); i++) {
		Elf_Data *symdata = NULL;
		GElf_Shdr shdr, symshdr;
		Elf_Scn *symscn;
		size_t nsyms = 0, off, n;
		int ret;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA ||
		    (shdr.sh_flags & SHF_COMPRESSED) || shdr.sh_size > ELF_MAX_RELA_BYTES ||
		    shdr.sh_offset > ef->size || shdr.sh_size > ef->size - shdr.sh_offset)
			continue;
		/* sh_link names the symbol table; 0 is allowed when no entry uses one. */
		if (shdr.sh_link && shdr.sh_link < ef->shnum) {
			symscn = elf_getscn(ef->elf, shdr.sh_link);
			if (symscn && gelf_getshdr(symscn, &symshdr) &&
			    (symshdr.sh_type == SHT_DYNSYM || symshdr.sh_type == SHT_SYMTAB))
				nsyms = symtab_data(ef, symscn, &symshdr, &symdata);
		}
		for (off = 0; shdr.sh_size - off >= sizeof(Elf64_Rela);
		     off += n * sizeof(Elf64_Rela)) {
			n = (shdr.sh_size - off) / sizeof(Elf64_Rela);
			if (n > RELA_CHUNK)
				n = RELA_CHUNK;
			/* the file shrank since it was opened: the rest is unusable */
			if (pread_all(ef->fd, buf, n * sizeof(Elf64_Rela), shdr.sh_offset + off))
				break;
			ret = rela_chunk(ef, buf, n, symdata, nsyms, &symshdr, fn, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* If [vaddr, vaddr + size) lies in [start, start + len), its offset from start. */
static bool range_in(GElf_Addr vaddr, size_t size, GElf_Addr start, GElf_Xword len, GElf_Off *delta)
{
	if (vaddr < start || vaddr - start > len || size > len - (vaddr - start))
		return false;
	*delta = vaddr - start;
	return true;
}

int elf_file__read_vaddr(const struct elf_file *ef, GElf_Addr vaddr, void *buf, size_t size)
{
	Elf_Scn *scn = NULL;
	GElf_Off delta, off;
	size_t i;

	for (i = 0; i < ef->phnum; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(ef->elf, i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		if (!range_in(vaddr, size, phdr.p_vaddr, phdr.p_filesz, &delta))
			continue;
		off = phdr.p_offset;
		goto found;
	}
	for (i = 1; i < ef->shnum && (scn = elf_getscn(ef->elf, i)); i++) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC) ||
		    shdr.sh_type == SHT_NOBITS)
			continue;
		if (!range_in(vaddr, size, shdr.sh_addr, shdr.sh_size, &delta))
			continue;
		off = shdr.sh_offset;
		goto found;
	}
	return -ENOENT;

found:
	if (off > ef->size || delta > ef->size - off || size > ef->size - off - delta)
		return -ENOENT;
	return pread_all(ef->fd, buf, size, off + delta);
}

int elf_file__load_bias(const struct elf_file *ef, __u64 offset, __u64 start, __u64 *bias)
{
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < elf_file__phnum(ef); i++) {
		if (elf_file__phdr(ef, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~4095ull) == offset) {
			*bias = start - (ph.p_vaddr & ~4095ull);
			return 0;
		}
	}
	return -ENOENT;
}
