/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an ELF file's compressed sections inflate to, read from their
 * headers before libdw sees them.  libdw decompresses every compressed
 * .debug_* section of a file when it opens its DWARF (dwarf_begin_elf,
 * and libdwfl's unwinder when .eh_frame does not cover an address), into
 * the heap, all at once: a 3 MB file whose section says 3 GiB took the
 * daemon to 6.3 GB for 52 s (issue 42).  A file over the caller's
 * limits is refused whole, its frames unwound by frame pointers and
 * named by its symbol table only.
 */
#ifndef FR_ELF_INFLATED_H
#define FR_ELF_INFLATED_H

#include <libelf.h>
#include <stdint.h>

struct fr_elf_inflate_limits {
	uint64_t section_max; /* one section, inflated */
	uint64_t total_max;   /* all of a file's compressed sections, inflated */
};

/* 0 when what @elf's compressed sections (SHF_COMPRESSED, and GNU's
 * .zdebug_* with their "ZLIB" header) inflate to is within @lim, with
 * the total in *ret_total (may be NULL); -EFBIG when over, -EBADMSG when
 * a header cannot be read (a file libdw would fail on anyway). */
int fr_elf_inflated_check(Elf *elf, const struct fr_elf_inflate_limits *lim, uint64_t *ret_total);

/* Hides from libdw the debug sections that naming functions and the
 * functions inlined into them never reads (line tables, location lists,
 * macros), so that dwarf_begin_elf() does not inflate them: they are
 * marked SHT_NOBITS in @elf's own copy of the section headers, which
 * needs @elf opened ELF_C_READ_MMAP_PRIVATE (the file is not changed).
 * glibc's debug file (Debian 12): 40 -> 28 ms to open, 10.0 -> 7.3 MB
 * inflated.  Sections checked by fr_elf_inflated_check() after it are
 * only those left.  -EBADMSG when the headers cannot be read. */
int fr_elf_names_only(Elf *elf);

#endif
