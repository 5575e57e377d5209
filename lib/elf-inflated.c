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
