/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf-eh-frame.h"

static bool has_eh_frame_phdr(Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			return true;
	}
	return false;
}

int fr_elf_eh_frame_by_table(Elf *elf)
{
	Elf_Scn *scn = NULL, *eh = NULL;
	Elf64_Shdr *sh;
	size_t shstrndx, size;
	char *image;

	if (gelf_getclass(elf) != ELFCLASS64 || !has_eh_frame_phdr(elf))
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -EBADMSG;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr s;
		const char *name;

		if (!gelf_getshdr(scn, &s))
			return -EBADMSG;
		name = elf_strptr(elf, shstrndx, s.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".eh_frame_hdr") == 0)
			return 0; /* before .eh_frame: libdw uses its table */
		if (strcmp(name, ".eh_frame") == 0) {
			eh = scn;
			break;
		}
	}
	if (!eh)
		return 0;
	sh = elf64_getshdr(eh);
	if (!sh)
		return -EBADMSG;
	/* libelf's headers may be the mapping itself (read-only) */
	image = elf_rawfile(elf, &size);
	if (image && (char *)sh >= image && (char *)sh < image + size) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t from = (uintptr_t)sh & ~(page - 1);
		uintptr_t to = ((uintptr_t)(sh + 1) + page - 1) & ~(page - 1);

		if (mprotect((void *)from, to - from, PROT_READ | PROT_WRITE) < 0)
			return -errno;
	}
	sh->sh_name = 0; /* the empty name */
	return 1;
}
