// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel symbols: the text symbols of /proc/kallsyms, the vmlinux build id. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/sorted.h"
#include "symbolize/symbols_int.h"

/* No kernel function is this large: farther from a symbol means "not in it". */
#define KERNEL_MAX_FUNC_SIZE (256u << 10)

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The vmlinux build id from /sys/kernel/notes. */
void kallsyms__build_id(struct kallsyms *k)
{
	unsigned char buf[4096];
	size_t off = 0;
	ssize_t len;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	while (len > 0 && off + 12 <= (size_t)len) {
		__u32 namesz = le32(buf + off), descsz = le32(buf + off + 4);
		__u32 type = le32(buf + off + 8);
		size_t name_off = off + 12, desc_off = name_off + ((namesz + 3ULL) & ~3ULL);

		if (desc_off + descsz > (size_t)len)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz && descsz <= sizeof(k->build_id)) {
			memcpy(k->build_id, buf + desc_off, descsz);
			k->build_id_len = descsz;
			return;
		}
		off = desc_off + ((descsz + 3ULL) & ~3ULL);
	}
}

/* Text symbols of kallsyms, sorted; all-zero addresses (kptr_restrict) load nothing. */
int kallsyms__load(struct kallsyms *k, const char *path)
{
	size_t cap = 0, names_cap = 0, names_len = 0, line_cap = 0, i, n;
	__u32 module = KSYM_CORE, module_len = 0;
	char *line = NULL;
	ssize_t len;
	FILE *fp;
	int err = 0;

	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while ((len = getline(&line, &line_cap, fp)) > 0) {
		char *p = line, *name, *mod, *end;
		unsigned long long addr;
		size_t need, name_len, mod_len = 0;
		char type;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		addr = strtoull(p, &end, 16);
		if (end == p || end[0] != ' ' || !end[1] || end[2] != ' ' || !addr)
			continue;
		type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		mod = strchr(name, '\t');
		name_len = mod ? (size_t)(mod - name) : strlen(name);
		if (!name_len)
			continue;
		if (mod) {
			mod++;
			mod_len = strlen(mod);
			if (mod_len < 3 || mod[0] != '[' || mod[mod_len - 1] != ']')
				continue;
		}
		need = name_len + 1 + mod_len + 1;
		/* names are found by 32-bit offsets */
		if (names_len + need > UINT32_MAX) {
			err = -EFBIG;
			break;
		}
		if (ARRAY_RESERVE_MIN(k->names, names_cap, names_len + need, 1 << 20) ||
		    ARRAY_RESERVE_MIN(k->syms, cap, k->nr + 1, 65536)) {
			err = -ENOMEM;
			break;
		}
		/* Lines of one module are consecutive: store its name once per run. */
		if (!mod) {
			module = KSYM_CORE;
		} else if (module == KSYM_CORE || module_len != mod_len ||
			   memcmp(k->names + module, mod, mod_len)) {
			module = names_len;
			module_len = mod_len;
			memcpy(k->names + names_len, mod, mod_len + 1);
			names_len += mod_len + 1;
		}
		k->syms[k->nr++] = (struct ksym){addr, names_len, module};
		memcpy(k->names + names_len, name, name_len);
		k->names[names_len + name_len] = '\0';
		names_len += name_len + 1;
	}
	free(line);
	fclose(fp);
	if (err)
		return err;
	if (k->nr)
		qsort(k->syms, k->nr, sizeof(*k->syms), cmp_ksym);
	/*
	 * Aliases at one address: keep the name with the fewest leading
	 * underscores, then the smallest, whatever order qsort left them in.
	 */
	for (i = 0, n = 0; i < k->nr; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr) {
			const char *a = k->names + k->syms[n - 1].name,
				   *b = k->names + k->syms[i].name;

			if (leading_underscores(b) < leading_underscores(a) ||
			    (leading_underscores(b) == leading_underscores(a) && strcmp(b, a) < 0))
				k->syms[n - 1] = k->syms[i];
			continue;
		}
		k->syms[n++] = k->syms[i];
	}
	k->nr = n;
	return 0;
}

const struct ksym *kallsyms__find(const struct kallsyms *k, __u64 addr)
{
	size_t i = SORTED_UPPER_BOUND(k->syms, k->nr, addr, addr);
	const struct ksym *s;

	if (!i)
		return NULL;
	s = &k->syms[i - 1];
	if (addr - s->addr >= KERNEL_MAX_FUNC_SIZE)
		return NULL;
	return s;
}
