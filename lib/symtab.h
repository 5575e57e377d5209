/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The code a chunk describes (its mapping and symbol records), and frame
 * resolution against it: how a reader names the frames of the chunk's
 * samples without the processes, the binaries or /proc.
 */
#ifndef FR_SYMTAB_H
#define FR_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct fr_ksyms;

struct fr_symtab {
	struct fr_record *maps, *syms; /* sorted by pid, then start */
	size_t nmaps, nsyms, mapcap, symcap;
};

/* A frame as readers print it. */
struct fr_frame {
	uint64_t addr;
	bool kernel;
	const char *sym;       /* function name, not NUL-terminated; NULL: unresolved */
	uint32_t sym_len;
	uint64_t sym_off;      /* addr - start of the function */
	const char *module;    /* file path, "[kernel.kallsyms]", module name; NULL: unknown */
	uint32_t module_len;
	bool module_brackets;  /* a kernel module name: print as "[name]" */
	bool has_offset;
	uint64_t offset;       /* ELF address in the module (user frames with a mapping) */
	const uint8_t *build_id;
	uint32_t build_id_len;
};

/* Adds an FR_REC_MAPPING or FR_REC_SYMBOL record (others are ignored);
 * strings are referenced, not copied. */
int fr_symtab_add(struct fr_symtab *t, const struct fr_record *r);
/* Sorts; call once after the last add. */
void fr_symtab_finish(struct fr_symtab *t);
void fr_symtab_done(struct fr_symtab *t);

/* Frame @i of sample @r (kernel frames first, each part leaf first) into
 * @ret.  @ksyms, if not NULL, names kernel frames the chunk did not
 * describe. */
void fr_symtab_resolve(const struct fr_symtab *t, const struct fr_ksyms *ksyms, const struct fr_record *r,
		       unsigned i, uint64_t addr, struct fr_frame *ret);

/* The frame for people: "name+0x1f" (@with_offset) or "name"; unresolved
 * frames as "libfoo.so+0x1234" (module base name and offset in it), or
 * "[unknown]@0x7f..." when not even the mapping is known. */
const char *fr_frame_name(const struct fr_frame *f, bool with_offset, char *buf, size_t len);
/* The module as JSON shows it: the path, "[kernel.kallsyms]", "[ext4]"; NULL if unknown. */
const char *fr_frame_module(const struct fr_frame *f, char *buf, size_t len);
/* The last path component of the module. */
const char *fr_frame_module_base(const struct fr_frame *f, uint32_t *ret_len);

#endif
