/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "elf-inflated.h"

/* GNU's older scheme: a section named .zdebug_* starts with "ZLIB" and
 * the inflated size, 8 bytes big-endian, whatever the file's byte order. */
static int zdebug_size(Elf_Scn *scn, uint64_t *ret)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const unsigned char *p;
	uint64_t v = 0;

	if (!d || !d->d_buf || d->d_size < 12)
		return -EBADMSG;
	p = d->d_buf;
	if (memcmp(p, "ZLIB", 4) != 0)
		return -EBADMSG;
	for (int i = 4; i < 12; i++)
		v = v << 8 | p[i];
	*ret = v;
	return 0;
}

int fr_elf_inflated_check(Elf *elf, const struct fr_elf_inflate_limits *lim, uint64_t *ret_total)
{
	uint64_t total = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -EBADMSG;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		uint64_t size;

		if (!gelf_getshdr(scn, &sh))
			return -EBADMSG;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;
			if (!gelf_getchdr(scn, &ch))
				return -EBADMSG;
			size = ch.ch_size;
		} else {
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!name || strncmp(name, ".zdebug", 7) != 0)
				continue;
			if (zdebug_size(scn, &size) < 0)
				return -EBADMSG;
		}
		if (size > lim->section_max || size > lim->total_max - total)
			return -EFBIG;
		total += size;
	}
	if (ret_total)
		*ret_total = total;
	return 0;
}

/* The sections of DWARF (after ".debug_", or GNU's ".zdebug_") that names
 * do not need: dwarf_addrdie() and dwarf_getscopes() read units, their
 * abbreviations, strings, address ranges and range lists only. */
static const char *const unnamed_sections[] = { "line", "loc", "loclists", "macro", "macinfo" };

int fr_elf_names_only(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -EBADMSG;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -EBADMSG;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		if (strncmp(name, ".debug_", 7) == 0)
			name += 7;
		else if (strncmp(name, ".zdebug_", 8) == 0)
			name += 8;
		else
			continue;
		for (size_t i = 0; i < sizeof(unnamed_sections) / sizeof(*unnamed_sections); i++)
			if (strcmp(name, unnamed_sections[i]) == 0) {
				sh.sh_type = SHT_NOBITS;
				if (!gelf_update_shdr(scn, &sh))
					return -EBADMSG;
				break;
			}
	}
	return 0;
}
