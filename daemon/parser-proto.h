/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The messages between flightrecd and flightrec-parse, its sandboxed
 * parser of other users' binaries (parser.h), over a SOCK_SEQPACKET
 * socket pair: one message per send, descriptors passed with
 * SCM_RIGHTS.  Both programs come from the same build (the daemon runs
 * the helper next to itself, or its installed one, and both check
 * FR_PARSE_PROTO in the hello), so the structs are sent as they are.
 *
 * One exchange at a time, started by the daemon:
 *   daemon: STACK           helper: NEED (a file) ...  daemon: OPENED
 *                           helper: FRAMES
 *   daemon: TRIM            helper: STATS
 * NOTES (what exec'd, exited, forked since) go before either, unanswered.
 */
#ifndef FR_PARSER_PROTO_H
#define FR_PARSER_PROTO_H

#include <stdint.h>

#include "../bpf/event.h"
#include "../lib/record.h"
#include "perf-map.h"
#include "symbolizer.h"
#include "unwinder.h"

/* The helper's end of the socket. */
#define FR_PARSE_FD 3
/* A page both map (a sealed memfd): where the helper writes which file
 * it is parsing, so that a crash or an overrun is blamed on that file. */
#define FR_PARSE_CRUMB_FD 4
struct fr_parse_crumb {
	uint64_t dev, ino;
};
#define FR_PARSE_CRUMB_SIZE 4096
/* The largest message either way: a request with its 16 KiB stack copy,
 * and a reply with the descriptions of its frames (a few KiB usually;
 * frames that do not fit are sent undescribed, and counted).  Under the
 * socket's default buffer (net.core.wmem_default, 208 KiB). */
#define FR_PARSE_MSG_MAX (128u << 10)

enum {
	/* flightrecd -> flightrec-parse */
	FR_PM_NOTES = 1,
	FR_PM_STACK,
	FR_PM_TRIM,
	FR_PM_OPENED,
	/* flightrec-parse -> flightrecd */
	FR_PM_HELLO = 16,
	FR_PM_NEED,
	FR_PM_FRAMES,
	FR_PM_STATS,
};

/* the sizes of the two largest structs, and a base for changes they do
 * not show (2: TRIM carries the heap bound) */
#define FR_PARSE_PROTO                                                                                       \
	(2000000u + (uint32_t)sizeof(struct fr_pm_stack) * 100u + (uint32_t)sizeof(struct fr_pm_stats) / 8u)

struct fr_pm_hello {
	uint32_t type;
	uint32_t proto; /* FR_PARSE_PROTO */
};

enum { FR_NOTE_EXEC = 1, FR_NOTE_EXIT, FR_NOTE_FORK };

struct fr_pm_note {
	uint32_t kind;
	uint32_t pid;
	uint32_t child; /* FR_NOTE_FORK */
};

/* As many notes as the message holds. */
struct fr_pm_notes {
	uint32_t type;
	uint32_t n;
	struct fr_pm_note note[];
};
#define FR_PM_NOTES_MAX ((FR_PARSE_MSG_MAX - sizeof(struct fr_pm_notes)) / sizeof(struct fr_pm_note))

enum {
	FR_PM_UNWIND = 1 << 0,    /* unwind the stack copy that follows */
	FR_PM_LEAF_USER = 1 << 1, /* frame 0 is the interrupted instruction */
	FR_PM_NAME = 1 << 2,      /* describe the user frames */
};

/* The user stack of one record: unwound from regs and the stack copy
 * (FR_PM_UNWIND), or the frames that follow (nframes of them), then
 * described. */
struct fr_pm_stack {
	uint32_t type;
	uint32_t flags;
	uint32_t pid, tid, ppid;
	uint32_t max;      /* frames wanted at most (>= 2) */
	uint64_t exe_ino;
	uint64_t regs[FR_UREGS];
	uint32_t stack_len; /* bytes of stack copy that follow, or 0 */
	uint32_t nframes;   /* frames that follow, without FR_PM_UNWIND */
};

/* The answer: nframes frames (u64), then for each of the first ndesc a
 * mask byte (FR_PM_D_*) and those records, encoded as in chunks
 * (fr_record_encode(), each with a fresh codec state). */
enum { FR_PM_D_MAPPING = 1 << 0, FR_PM_D_SYMBOL = 1 << 1, FR_PM_D_INLINE = 1 << 2 };
struct fr_pm_frames {
	uint32_t type;
	uint32_t nframes;
	uint32_t ndesc;
	uint32_t cut; /* frames left undescribed for the message's size */
	struct fr_py_probe py; /* with FR_PM_NAME: is the executable a CPython
				  (fr_symbolizer_python()) */
};

enum { FR_NEED_MAPS = 1, FR_NEED_MAPPED, FR_NEED_DEBUG, FR_NEED_PERF_MAP, FR_NEED_MAPS_GONE };

/* A file the helper needs (proc-access.h), path_len bytes of path after it. */
struct fr_pm_need {
	uint32_t type;
	uint32_t kind;
	uint32_t pid;
	uint32_t path_len;
	uint64_t start, end, dev, ino;
	uint32_t build_id_len;
	uint8_t build_id[FR_BUILD_ID_MAX];
};
#define FR_PM_PATH_MAX 4096

/* The answer: result >= 0 with one descriptor attached, else -errno. */
struct fr_pm_opened {
	uint32_t type;
	int32_t result;
	uint64_t exe_ino; /* FR_NEED_MAPS, FR_NEED_MAPS_GONE */
};

/* the default of sources.sample.parse_memory (lib/conf.c), which the
 * helper holds to until the daemon's first TRIM */
#define FR_PARSER_HEAP_MAX (16ull << 20)

/* Asks for the caches to be trimmed and the STATS; with the bound of the
 * helper's heap (sources.sample.parse_memory), which holds from then on. */
struct fr_pm_trim {
	uint32_t type;
	uint32_t pad;
	uint64_t heap_max;
};

struct fr_pm_stats {
	uint32_t type;
	uint32_t pad;
	uint64_t heap; /* the helper's heap in use, after the trim (a gauge) */
	struct fr_symbolizer_stats sym;
	struct fr_unwinder_stats unw;
	struct fr_perf_maps_stats jit;
};

#endif
