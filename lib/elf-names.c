/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "elf-names.h"
#include "macro.h"
#include "range-find.h"
#include "record-fields.h"
#include "record.h"

_Static_assert(offsetof(struct fr_elf_sym, value) == offsetof(struct fr_range, start) &&
	       offsetof(struct fr_elf_sym, size) == offsetof(struct fr_range, size), "fr_elf_sym starts as fr_range");

static int cmp_sym(const void *a, const void *b)
{
	const struct fr_elf_sym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Of the names at one address (glibc's read, __read, __libc_read), the
 * one people call it by: the fewest leading underscores, then an exported
 * one over a local one (__libc_start_main over __libc_start_main_impl),
 * then the shortest; the first in the table among equals.  Deterministic:
 * qsort() alone would keep any of them.  @len: the name's, without a
 * symbol version. */
static uint32_t name_rank(const char *name, size_t len, const GElf_Sym *sym)
{
	uint32_t under = 0;

	while (under < 3 && name[under] == '_')
		under++;
	return under << 20 | (GELF_ST_BIND(sym->st_info) == STB_LOCAL) << 16 | (uint32_t)MIN(len, (size_t)0xffff);
}

/* The function symbols of section @scn (a symbol table) into @t. */
static int read_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct fr_elf_symtab *t)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, nsyms = 0, nlen = 0, ncap = 0, k = 0;
	_cleanup_free_ struct fr_elf_sym *v = NULL;
	_cleanup_free_ char *names = NULL;

	if (!data || n == 0)
		return -ENODATA;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		size_t l;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		/* a .symtab's versioned names (__libc_start_main@@GLIBC_2.34)
		 * as the .dynsym has them */
		l = (name[0] == '@' ? strlen(name) : strcspn(name, "@")) + 1;
		if (nlen + l > ncap) {
			size_t c = ncap ? ncap * 2 : 16384;
			char *q;

			while (c < nlen + l)
				c *= 2;
			q = realloc(names, c);
			if (!q)
				return -ENOMEM;
			names = q;
			ncap = c;
		}
		memcpy(names + nlen, name, l - 1);
		names[nlen + l - 1] = 0;
		v[nsyms++] = (struct fr_elf_sym){ .value = sym.st_value, .size = sym.st_size, .name = (uint32_t)nlen,
						  .rank = name_rank(name, l - 1, &sym) };
		nlen += l;
	}
	if (!nsyms)
		return -ENODATA;
	qsort(v, nsyms, sizeof(*v), cmp_sym);
	/* aliases: one per address; sizeless symbols reach the next one */
	for (size_t i = 0; i < nsyms; i++) {
		if (k && v[k - 1].value == v[i].value) {
			if (!v[k - 1].size)
				v[k - 1].size = v[i].size;
			continue;
		}
		v[k++] = v[i];
	}
	for (size_t i = 0; i < k; i++)
		if (!v[i].size)
			v[i].size = i + 1 < k ? MIN(v[i + 1].value - v[i].value, FR_ELF_SIZELESS_MAX) : FR_ELF_SIZELESS_MAX;
	*t = (struct fr_elf_symtab){ .n = k, .bytes = n * sizeof(*v) + ncap };
	t->syms = TAKE_PTR(v);
	t->names = TAKE_PTR(names);
	return 0;
}

int fr_elf_symtab_read(Elf *elf, bool dynsym_too, struct fr_elf_symtab *ret)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh, dsh, tsh;
	int k;

	*ret = (struct fr_elf_symtab){};
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !tab) {
			tab = scn;
			tsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dsh = sh;
		}
	}
	if (tab && (k = read_section(elf, tab, &tsh, ret)) != -ENODATA)
		return k;
	if (dynsym_too && dyn)
		return read_section(elf, dyn, &dsh, ret);
	return -ENODATA;
}

const struct fr_elf_sym *fr_elf_symtab_find(const struct fr_elf_symtab *t, uint64_t vaddr)
{
	return fr_range_find(t->syms, t->n, sizeof(*t->syms), vaddr);
}

void fr_elf_symtab_done(struct fr_elf_symtab *t)
{
	free(t->syms);
	free(t->names);
	*t = (struct fr_elf_symtab){};
}

int fr_elf_inlined_names(Dwarf *dw, uint64_t vaddr, char **ret, uint32_t *ret_len)
{
	_cleanup_free_ Dwarf_Die *scopes = NULL;
	_cleanup_free_ char *names = NULL;
	Dwarf_Die cudie;
	size_t len = 0;
	int n;

	*ret = NULL;
	*ret_len = 0;
	if (!dwarf_addrdie(dw, vaddr, &cudie))
		return 0;
	n = dwarf_getscopes(&cudie, vaddr, &scopes);
	for (int i = 0; i < n; i++) {
		Dwarf_Attribute attr;
		const char *name;
		size_t l;
		char *q;

		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break; /* the function they are in: named by its symbol */
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue; /* a lexical block */
		name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr));
		if (!name)
			name = "[inlined]";
		l = strlen(name);
		if (len + !!len + l > FR_INLINE_NAMES_MAX)
			break;
		q = realloc(names, len + l + 1);
		if (!q)
			return -ENOMEM;
		names = q;
		if (len)
			names[len++] = 0;
		memcpy(names + len, name, l);
		len += l;
	}
	*ret_len = (uint32_t)len;
	*ret = TAKE_PTR(names);
	return 0;
}

int fr_debug_file_open(const char *debug_dir, const uint8_t *build_id, size_t build_id_len)
{
	char path[PATH_MAX], dir[3], rest[2 * FR_BUILD_ID_MAX + 1];
	int fd;

	if (build_id_len < 2 || build_id_len > FR_BUILD_ID_MAX)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/.build-id/%s/%s.debug", debug_dir, fr_format_hex(build_id, 1, dir, sizeof(dir)),
		 fr_format_hex(build_id + 1, build_id_len - 1, rest, sizeof(rest)));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}
