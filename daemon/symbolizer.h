/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names for the frames of CPU samples, found while the processes and their
 * binaries still exist: the kernel's from /proc/kallsyms, user frames from
 * the process's executable mappings (/proc/PID/maps) and the ELF symbol
 * tables of the mapped files (libelf; build ids with libdwelf; a separate
 * debug file under /usr/lib/debug/.build-id when the binary is stripped).
 * The recorder writes what it finds into the chunk of each sample as
 * mapping and symbol records, so stores and incidents resolve on their own;
 * kernel functions the store's per-boot snapshot names are not repeated
 * (incidents get them from it when written).
 *
 * Memory is bounded: processes and files are cached least recently used
 * first out, trimmed by fr_symbolizer_trim(); between trims, descriptions
 * handed out stay valid.
 */
#ifndef FR_SYMBOLIZER_H
#define FR_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "../lib/record.h"
#include "python-probe.h"

struct fr_symbolizer;
struct fr_ksyms;

/* Takes ownership of @ksyms (may be NULL: kernel frames stay unnamed).
 * Files are opened through proc-access.h: separate debug files by build
 * id under its debug directory (DIR/.build-id/ab/cdef....debug, e.g.
 * /usr/lib/debug) give the symbols of stripped binaries, and the
 * functions inlined at a frame. */
int fr_symbolizer_new(struct fr_ksyms *ksyms, struct fr_symbolizer **ret);
struct fr_symbolizer *fr_symbolizer_free(struct fr_symbolizer *s);
const struct fr_ksyms *fr_symbolizer_ksyms(const struct fr_symbolizer *s);
/* @on false: user frames are not named (counted unknown) and no
 * /proc/PID is read, for when /proc is not the host's (a private PID
 * namespace: its PID N is another process than the records' N).  Kernel
 * frames still are.  On by default. */
void fr_symbolizer_set_user_frames(struct fr_symbolizer *s, bool on);

/* What one frame needs described: FR_REC_MAPPING, FR_REC_SYMBOL and
 * FR_REC_INLINE records, each present or not (type 0), or for a Python
 * frame its FR_REC_PYCODE (python.h).  Strings point into the cache. */
struct fr_frame_desc {
	struct fr_record mapping;
	struct fr_record symbol;
	struct fr_record inl;
	struct fr_record py;
};

/* The kernel symbols this boot's snapshot in the store has (what readers
 * name kernel frames with when their chunk does not): @snapshot is NULL
 * (none: every kernel frame is described), the symbolizer's own table
 * (the snapshot was saved from it), or another table, which the
 * symbolizer then owns (a snapshot saved by an earlier run of this boot). */
void fr_symbolizer_set_snapshot(struct fr_symbolizer *s, struct fr_ksyms *snapshot);
/* That table, or NULL: it names every kernel frame the chunks leave
 * undescribed as the store's snapshot does. */
const struct fr_ksyms *fr_symbolizer_snapshot(const struct fr_symbolizer *s);
/* Kernel frame @addr (@leaf: the interrupted instruction): described
 * unless the snapshot names it the same. */
void fr_symbolizer_kernel(struct fr_symbolizer *s, uint64_t addr, bool leaf, struct fr_frame_desc *ret);
/* User frame @addr of process @pid running the executable with inode
 * @exe_ino (0: unknown) when sampled (@leaf: the interrupted instruction,
 * not a return address).  A frame of an image the process no longer runs
 * (sampled before an exec) stays unnamed rather than be named wrongly. */
void fr_symbolizer_user(struct fr_symbolizer *s, uint32_t pid, uint64_t exe_ino, uint64_t addr, bool leaf,
			struct fr_frame_desc *ret);

/* What the file of @pid's executable (inode @exe_ino), if the frames
 * named so far loaded it, says of CPython in it (python-probe.h); found
 * 0 when it is none, or not loaded. */
void fr_symbolizer_python(struct fr_symbolizer *s, uint32_t pid, uint64_t exe_ino, struct fr_py_probe *ret);

/* The mappings of @pid changed (exec) or belong to a new process (fork). */
void fr_symbolizer_forget(struct fr_symbolizer *s, uint32_t pid);
/* @child was forked by @parent: it has its parent's mappings, known
 * already when the parent's are (no /proc/CHILD/maps to read).  A child
 * that maps more later is read again at its first frame outside them, as
 * any process is; one that execs is forgotten then. */
void fr_symbolizer_fork(struct fr_symbolizer *s, uint32_t parent, uint32_t child);
/* Before naming the user frames of @pid, whose parent is @ppid and whose
 * image @exe_ino: a process gone before its maps could be read (a child
 * that forked, waited or ran briefly and exited) gets its parent's when
 * the parent runs the same image, as after fr_symbolizer_fork(). */
void fr_symbolizer_parent(struct fr_symbolizer *s, uint32_t pid, uint32_t ppid, uint64_t exe_ino);
/* The mappings of @pid, running image @exe_ino, as the unwinder just read
 * them for the stack about to be named (@text: lines of /proc/PID/maps):
 * taken in place of a read of its own, so that the frames are named with
 * the mappings they were unwound with.  A second read, moments later,
 * could find the process exited (its maps then read empty), and naming
 * would then depend on what the daemon's tracker learned of it. */
void fr_symbolizer_take_maps(struct fr_symbolizer *s, uint32_t pid, uint64_t exe_ino, const char *text);
/* Evicts beyond the cache bounds; call between batches of samples. */
void fr_symbolizer_trim(struct fr_symbolizer *s);

struct fr_symbolizer_stats {
	uint64_t frames_named;    /* user frames resolved to a function */
	uint64_t frames_inlined;  /* of which with inlined functions, from debug information */
	uint64_t dwarf_trimmed;   /* debug information closed for the memory bound (DWARF_HEAP_MAX) */
	uint64_t dwarf_too_big;   /* debug information not used: opening it alone is over the
				     bound, or its compressed sections say they inflate past it */
	uint64_t frames_jit;      /* of which named by a perf map (JIT code) */
	uint64_t frames_module;   /* user frames with a mapping but no symbol */
	uint64_t frames_unknown;  /* user frames of processes gone before their maps were
				     read, or of an image replaced by exec since */
	uint64_t kernel_named, kernel_unknown;
	uint64_t kernel_by_snapshot; /* of kernel_named: left to the store's snapshot, not described */
	uint64_t processes, files, cache_bytes;
	uint64_t maps_read;      /* /proc/PID/maps read */
	uint64_t maps_inherited; /* forked children given their parent's mappings */
	uint64_t maps_taken;     /* the unwinder's read of them taken (fr_symbolizer_take_maps()) */
	uint64_t maps_capped;    /* reads stopped at FR_MAPS_FILES_MAX executable mappings */
	uint64_t files_unopened; /* binaries not opened: their process gone, their range
				    unmapped or refused (frames named by module only) */
	uint64_t files_refused;  /* of which refused: another file, or no regular file,
				    is mapped there now (fr_open_mapped_file()) */
};
void fr_symbolizer_get_stats(const struct fr_symbolizer *s, struct fr_symbolizer_stats *ret);
/* The JIT symbol cache (daemon/perf-map.h). */
struct fr_perf_maps_stats;
void fr_symbolizer_get_jit_stats(const struct fr_symbolizer *s, struct fr_perf_maps_stats *ret);

#endif
