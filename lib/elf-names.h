/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an ELF file (a binary, or a separate debug file with only its
 * .symtab and DWARF left) names code with: its function symbols, as a
 * table sorted by ELF address for lookups (one entry per address, aliases
 * merged, a symbol without a size reaching the next one), and the
 * functions its DWARF says are inlined at an address.
 */
#ifndef FR_ELF_NAMES_H
#define FR_ELF_NAMES_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A symbol of size 0 (hand-written assembly) reaches the next one, at most. */
#define FR_ELF_SIZELESS_MAX 4096

struct fr_elf_sym {
	uint64_t value, size; /* first: a struct fr_range */
	uint32_t name;        /* offset into the table's names */
	uint32_t rank;        /* while reading: which of the names at one
				 address is kept (lower first) */
};

struct fr_elf_symtab {
	struct fr_elf_sym *syms;
	size_t n;
	char *names;  /* NUL-terminated, one after another */
	size_t bytes; /* memory the table holds */
};

/* Reads the function symbols of @elf's .symtab or, with @dynsym_too,
 * of its .dynsym when it has no .symtab (or none with a function in it).
 * -ENODATA when there are none. */
int fr_elf_symtab_read(Elf *elf, bool dynsym_too, struct fr_elf_symtab *ret);
/* The function holding ELF address @vaddr, or NULL. */
const struct fr_elf_sym *fr_elf_symtab_find(const struct fr_elf_symtab *t, uint64_t vaddr);
static inline const char *fr_elf_sym_name(const struct fr_elf_symtab *t, const struct fr_elf_sym *s)
{
	return t->names + s->name;
}
void fr_elf_symtab_done(struct fr_elf_symtab *t);

/* Opens the separate debug file of the build @build_id in @debug_dir:
 * DIR/.build-id/ab/cdef....debug, where distributions' -dbg and -dbgsym
 * packages put them.  A descriptor, or -errno. */
int fr_debug_file_open(const char *debug_dir, const uint8_t *build_id, size_t build_id_len);

/* The functions inlined at ELF address @vaddr of @dw, innermost first,
 * as an FR_REC_INLINE record holds them: NUL-separated, no NUL after the
 * last, FR_INLINE_NAMES_MAX bytes at most (the function they are inlined
 * into is the symbol's, not one of them).  *ret NULL and *ret_len 0 when
 * there are none; the caller frees *ret.  0 or -ENOMEM. */
int fr_elf_inlined_names(Dwarf *dw, uint64_t vaddr, char **ret, uint32_t *ret_len);

#endif
