/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User stacks unwound from what the sampler copied (bpf/event.h: the user
 * registers and the top of the stack), with the unwind tables of the
 * process's binaries (.eh_frame, and .debug_frame where a binary has
 * it), where frame pointers are missing as on most distribution
 * binaries; code without unwind tables (JIT code, hand-written assembly)
 * is walked by its frame pointers.  elfutils' libdwfl does the unwinding:
 * one Dwfl per process, made from /proc/PID/maps when the process is
 * first sampled and kept, so a process that exits before the drain is
 * still unwound.  Memory is bounded by the number of processes held,
 * least recently used first out, and by the helper's heap (fr_unwinder_shed()).
 *
 * The stack a sample gets is leaf first: the interrupted instruction, then
 * return addresses; when unwinding stops before the outermost frame, the
 * last entry is a marker frame (FR_FRAME_* of lib/record.h) that says why.
 */
#ifndef FR_UNWINDER_H
#define FR_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fr_unwinder;

int fr_unwinder_new(struct fr_unwinder **ret);
struct fr_unwinder *fr_unwinder_free(struct fr_unwinder *u);

/* What the sampler saw of one thread. */
struct fr_ustack {
	uint32_t pid, tid;
	uint32_t ppid;          /* its parent */
	uint64_t exe_ino;       /* the image the process ran (bpf/event.h) */
	const uint64_t *regs;   /* FR_UREGS, DWARF numbering */
	const uint8_t *stack;   /* copied from regs[7] (rsp) up */
	size_t stack_len;
	bool rare;              /* a fatal signal's: not held up by the samples'
				   parser budget, but by one of its own (parser.h) */
};

/* Unwinds @s into @out (room for @max >= 2 entries); returns how many. */
size_t fr_unwinder_unwind(struct fr_unwinder *u, const struct fr_ustack *s, uint64_t *out, size_t max);

/* The mappings of @pid (the text of /proc/PID/maps, or what the daemon
 * learned of them when it was gone) if the last fr_unwinder_unwind() read
 * them, and the inode of its image in *@exe_ino; NULL when it did not (it
 * had them already, or its parent's).
 * Valid until the next call into the unwinder. */
const char *fr_unwinder_maps_read(const struct fr_unwinder *u, uint32_t pid, uint64_t *exe_ino);
/* @pid exec'd, exited, or is a new process: its mappings are read again. */
void fr_unwinder_forget(struct fr_unwinder *u, uint32_t pid);
/* @child was forked by @parent: it unwinds with its parent's mappings
 * until a frame falls outside them (then its own are read). */
void fr_unwinder_fork(struct fr_unwinder *u, uint32_t parent, uint32_t child);
/* @pid exited: its state goes at a trim a second from now. */
void fr_unwinder_exited(struct fr_unwinder *u, uint32_t pid);
/* Evicts beyond the bounds; call between batches of samples. */
void fr_unwinder_trim(struct fr_unwinder *u);
/* Whether @pid's state is held: a stack of a process not held is about
 * to read its maps and grow the heap (a compiler's first: ~5 MiB). */
bool fr_unwinder_has(const struct fr_unwinder *u, uint32_t pid);
/* The heap is over its bound: all but the most recently used quarter of
 * the processes go (when more than 4 are held); counted (heap_trims). */
void fr_unwinder_shed(struct fr_unwinder *u);

struct fr_unwinder_stats {
	uint64_t stacks;        /* user stacks unwound */
	uint64_t frames;        /* frames they gave, markers not counted */
	uint64_t complete;      /* reached the outermost frame */
	uint64_t truncated;     /* ended at the copy's end or the depth limit */
	uint64_t no_info;       /* ended at a frame with no unwind information */
	uint64_t failed;        /* the process's mappings could not be read */
	uint64_t processes;     /* held now */
	uint64_t maps_read;     /* /proc/PID/maps read (at first sample, or again) */
	uint64_t inherited;     /* forked children given their parent's mappings */
	uint64_t maps_capped;   /* reads stopped at FR_MAPS_FILES_MAX mappings of files */
	uint64_t evicted;       /* processes dropped: exited, or by the bounds */
	uint64_t heap_trims;    /* times the helper's heap was over its bound (fr_unwinder_shed()) */
	uint64_t files;         /* mapped files held open (shared by processes) */
	uint64_t files_evicted; /* files closed by the bound */
	uint64_t files_refused; /* not opened: another file, or no regular file, is
				   mapped there now (fr_open_mapped_file()) */
	uint64_t files_too_big; /* not used: compressed sections that inflate past
				   the limit (lib/elf-inflated.h), frame pointers only */
	uint64_t files_eh_by_table; /* opened with their unwind table's search table
				       given back to libdw (lib/elf-eh-frame.h) */
};
void fr_unwinder_get_stats(const struct fr_unwinder *u, struct fr_unwinder_stats *ret);

#endif
