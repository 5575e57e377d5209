/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The code a chunk describes (its mapping, symbol and inline records), and
 * frame resolution against it: how a reader names the frames of the
 * chunk's samples without the processes, the binaries or /proc.
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
	struct fr_record *inls;        /* sorted by pid, then addr */
	struct fr_record *pys;         /* pycode records, sorted by pid, then code */
	size_t nmaps, nsyms, ninls, npys, mapcap, symcap, inlcap, pycap;
};

/* Frames a sample can become once the functions inlined at its user
 * frames are frames of their own (fr_window_frames()): room enough for
 * what real code has, which is a few per frame at most, and a bound on
 * what a hostile chunk can make of a sample.  Size arrays of frames with
 * it. */
#define FR_FRAMES_EXPANDED_MAX (2 * FR_SAMPLE_FRAMES_MAX)

/* A frame as readers print it. */
struct fr_frame {
	uint64_t addr;
	bool kernel;
	bool inlined;          /* a function inlined where the next frame is
				  (same addr, module and offset): not a call */
	const char *sym;       /* function name, not NUL-terminated; NULL: unresolved;
				  a marker's text (fr_frame_marker_name()); C++
				  names demangled (fr_window_frames()) */
	uint32_t sym_len;
	const char *mangled;   /* the name as the binary has it, when sym is it
				  demangled; else NULL */
	uint32_t mangled_len;
	uint64_t sym_off;      /* addr - start of the function */
	const char *module;    /* file path, "[kernel.kallsyms]", module name; NULL: unknown */
	uint32_t module_len;
	bool module_brackets;  /* a kernel module name: print as "[name]" */
	bool has_offset;
	uint64_t offset;       /* ELF address in the module (user frames with a mapping) */
	const uint8_t *build_id;
	uint32_t build_id_len;
	/* a Python frame (fr_frame_is_python(addr)): sym its qualified
	 * name (NULL: not described), file its source file, line its line
	 * (0: not known); no module */
	bool python;
	const char *file;
	uint32_t file_len;
	uint32_t line;
};

/* Adds an FR_REC_MAPPING, FR_REC_SYMBOL or FR_REC_INLINE record (others
 * are ignored); strings are referenced, not copied. */
int fr_symtab_add(struct fr_symtab *t, const struct fr_record *r);
/* Sorts; call once after the last add. */
void fr_symtab_finish(struct fr_symtab *t);
void fr_symtab_done(struct fr_symtab *t);

/* Frame @i of sample @r (kernel frames first, each part leaf first) into
 * @ret.  @ksyms, if not NULL, names kernel frames the chunk did not
 * describe.  A user frame whose address is a marker (below
 * FR_FRAME_MARKER_MAX, record.h) is looked up nowhere: named by the
 * marker's text, without module or offset, or unnamed when this reader
 * does not know the marker. */
void fr_symtab_resolve(const struct fr_symtab *t, const struct fr_ksyms *ksyms, const struct fr_record *r,
		       unsigned i, uint64_t addr, struct fr_frame *ret);

/* The FR_REC_INLINE record of @pid at lookup address @addr (exactly), or
 * NULL. */
const struct fr_record *fr_symtab_inline(const struct fr_symtab *t, uint32_t pid, uint64_t addr);

/* The functions inlined at user frame @f, frame @i of sample @r as
 * fr_symtab_resolve() named it, as frames of their own, innermost first,
 * into out[0..max): each a copy of @f (address, module, offset) named by
 * one of them, sym_off 0, inlined.  Returns how many (0 for kernel
 * frames, markers, and frames without an inline record). */
size_t fr_symtab_inlined(const struct fr_symtab *t, const struct fr_record *r, unsigned i,
			 const struct fr_frame *f, struct fr_frame *out, size_t max);
/* The same from @names, as an FR_REC_INLINE record holds them
 * (NUL-separated, innermost first). */
size_t fr_frame_inlined(const struct fr_frame *f, const char *names, uint32_t names_len, struct fr_frame *out,
			size_t max);

/* Whether a frame's name takes the offset of its address in the
 * function: not an inlined function's (its code lies inside another
 * function), nor a marker's (no code at all). */
static inline bool fr_frame_sym_has_off(const struct fr_frame *f)
{
	return !f->inlined && !f->python && (f->kernel || !fr_frame_marker_name(f->addr));
}

/* The frame for people: "name+0x1f" (@with_offset, and
 * fr_frame_sym_has_off()) or "name"; unresolved
 * frames as "libfoo.so+0x1234" (module base name and offset in it), or
 * "[unknown]@0x7f..." when not even the mapping is known.  A Python
 * frame: "name (file:line)", "name (file)" without its line, and
 * "[python]@0x..." (its code object) when not described. */
const char *fr_frame_name(const struct fr_frame *f, bool with_offset, char *buf, size_t len);
/* The module as JSON shows it: the path, "[kernel.kallsyms]", "[ext4]"; NULL if unknown. */
const char *fr_frame_module(const struct fr_frame *f, char *buf, size_t len);
/* The last path component of the module. */
const char *fr_frame_module_base(const struct fr_frame *f, uint32_t *ret_len);

#endif
