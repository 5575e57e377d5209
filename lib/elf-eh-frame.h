/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unwind tables looked up by binary search, whatever the linker's
 * section order.  libdw (0.188, Debian 12's) takes the first section
 * named .eh_frame and uses the search table of .eh_frame_hdr only when
 * that section came before it; lld places .eh_frame_hdr after .eh_frame
 * (libLLVM-14, libclang-cpp), and each lookup then parses, and keeps,
 * every FDE before the address: 5.4 MiB of heap for one lookup in
 * libLLVM-14 (the 67,000 FDEs before it), 1 KiB with the table, and again for each
 * process, since libdwfl keeps its tables per process.  A compile loop's
 * clang processes took the parser's heap past its bound within a single
 * stack.  libdw reads the table from the program header PT_GNU_EH_FRAME
 * when no section is named .eh_frame: so in such a file that section's
 * name is taken away, in libelf's copy of the headers.
 */
#ifndef FR_ELF_EH_FRAME_H
#define FR_ELF_EH_FRAME_H

#include <libelf.h>

/* For @elf, opened ELF_C_READ_MMAP (its private mapping's page of
 * section headers is made writable: copied on write, the file is not
 * changed) or with headers of its own: 1 when .eh_frame was renamed to
 * "" (the file has PT_GNU_EH_FRAME, and no .eh_frame_hdr section before
 * its first .eh_frame), 0 when nothing needed doing, -EBADMSG when the
 * headers cannot be read, -errno of mprotect(). */
int fr_elf_eh_frame_by_table(Elf *elf);

#endif
