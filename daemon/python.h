/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Python frames in the daemon (bpf/python.bpf.h walks them): which
 * executables are a CPython it knows (put into the py_exes map the BPF
 * programs read, as the parser finds them), the code objects the
 * programs describe, kept per process so that a process that exited keeps
 * its names, and each stack's Python frames put in place of the native
 * frames of the interpreter loop that ran them, as pycode-named frames
 * (lib/record.h: fr_frame_python()).
 *
 * Memory is bounded: at most FR_PYTHON_BYTES of descriptions, the least
 * recently used processes' dropped first (counted); a process's go ten
 * seconds after it exits.
 */
#ifndef FR_PYTHON_H
#define FR_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/event.h"
#include "python-probe.h"
#include "symbolizer.h"

#define FR_PYTHON_BYTES (8u << 20)

struct fr_python;

int fr_python_new(struct fr_python **ret);
struct fr_python *fr_python_free(struct fr_python *py);

/* The py_exes map (fr_rings_py_exes_fd()): where known executables go. */
void fr_python_set_exes_fd(struct fr_python *py, int fd);

/* Keeps the description @e (@size bytes, checked) of a code object. */
void fr_python_add_code(struct fr_python *py, const struct fr_event_pycode *e, size_t size, uint64_t now);

/* The executable (@dev, @ino as BPF sees it) of process @comm is what
 * @probe says (the parser, fr_parser_python()): a CPython of a known
 * version goes into py_exes (from then its processes' stacks have Python
 * frames); another version is logged once and counted. */
void fr_python_learn(struct fr_python *py, uint32_t dev, uint64_t ino, const struct fr_py_probe *probe,
		     const char *comm);

/* Stack @ps of process @pid, taken with the user frames @uframes[0..@n)
 * (@udesc their descriptions, NULL when they were not named: then the
 * Python frames are counted as unplaced; room for @max): its Python
 * frames in place of the interpreter loop's native frames, each with its
 * pycode description.  Returns the new count.  Descriptions point into the
 * table, valid until the next fr_python_tick(). */
size_t fr_python_merge(struct fr_python *py, uint32_t pid, uint64_t ts, const struct fr_py_stack *ps,
		       uint64_t *uframes, struct fr_frame_desc *udesc, size_t n, size_t max);

/* Process @pid exited (its descriptions go a while later). */
void fr_python_exit(struct fr_python *py, uint32_t pid, uint64_t now);
/* Between drains: drops what is due and what is over the bound. */
void fr_python_tick(struct fr_python *py, uint64_t now);

struct fr_python_stats {
	uint64_t exes;             /* executables known to be CPython, walked */
	uint64_t exes_unknown;     /* CPython executables of a version not known: not walked */
	uint64_t stacks[FR_PY__STATUS_MAX]; /* stacks of CPython processes, by how the walk ended */
	uint64_t frames;           /* Python frames put into stacks */
	uint64_t frames_unnamed;   /* of which without a description (lost, or over the budget) */
	uint64_t lines_unknown;    /* of which named, but without a line (beyond a cut line table) */
	uint64_t frames_unplaced;  /* Python frames left out: no interpreter frame left in the native stack */
	uint64_t names_over;       /* descriptions BPF did not write: over the per-CPU budget */
	uint64_t descriptions;     /* description events read */
	uint64_t codes;            /* code objects described, held now */
	uint64_t bytes;            /* their bytes */
	uint64_t procs;            /* processes with descriptions held */
	uint64_t evicted;          /* processes whose descriptions were dropped for the bound */
};
void fr_python_get_stats(const struct fr_python *py, struct fr_python_stats *ret);

#endif
