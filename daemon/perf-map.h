/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names for JIT code from the perf map convention: a JIT (Node
 * --perf-basic-prof, Java agents, Python 3.12 -X perf, LuaJIT) appends
 * "START SIZE NAME" lines (hex, "0x" optional; NAME is the rest of the
 * line) to /tmp/perf-PID.map as it compiles code.  Frames in anonymous
 * executable memory are named by these files, read as they grow.
 *
 * Where lines overlap, the later line wins for the addresses it covers;
 * an earlier symbol keeps the parts no later line covers (it is reported
 * with its own start and size).  Memory is bounded: whole processes are
 * evicted least recently used first, and a single process over the bound
 * keeps its newest lines.
 */
#ifndef FR_PERF_MAP_H
#define FR_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>

struct fr_perf_maps;

/* @max_bytes bounds the memory of all maps held (entries + names, at
 * least 64 KiB); @max_procs the processes held (at least 1).  A fixed
 * 64 KiB read buffer comes on top.  -EINVAL below the minimums. */
int fr_perf_maps_new(size_t max_bytes, unsigned max_procs, struct fr_perf_maps **ret);
struct fr_perf_maps *fr_perf_maps_free(struct fr_perf_maps *m);

struct fr_perf_sym {
	uint64_t start, size;   /* the symbol as its line gave it */
	const char *name;       /* NUL-terminated too */
	uint32_t name_len;
};

/* The JIT symbol of process @pid covering @addr: 1 with *ret filled (the
 * name points into the cache, valid until the next lookup, forget or
 * free), 0 if none, negative errno on failure.
 *
 * Reads /proc/PID/root/tmp/perf-PID.map (the file as the process sees its
 * /tmp: the daemon runs with PrivateTmp, the process may be in a
 * container) at the first lookup for @pid, and again from where it
 * stopped when @addr is not covered: for growth (fstat size) at most once
 * per 100 ms per process, so a sample storm does not re-stat constantly;
 * the rest of a file longer than one 64 KiB read at the next miss, paced
 * to one such read per 4 ms over all processes, so a huge file
 * cannot stall a drain.  Only complete lines are used.
 *
 * A missing file (or process) is 0.  A file that is not a regular file
 * (a symbolic link included), is owned by neither the process's real nor
 * its effective uid, is writable by others, or is not on the mount of
 * the process's /tmp (a bind mount over the path, which a user namespace
 * may make of a root-only file) is refused (-EPERM, counted) and never
 * read (fr_access_perf_map(), proc-access.h): another user must not name
 * someone else's frames, nor read what only root may.  Errors
 * are returned by the lookup that tried the file; the lookups until the
 * next try return 0 (or what was read before). */
int fr_perf_maps_lookup(struct fr_perf_maps *m, uint32_t pid, uint64_t addr, struct fr_perf_sym *ret);

/* @pid exec'd or exited: its map is dropped. */
void fr_perf_maps_forget(struct fr_perf_maps *m, uint32_t pid);

struct fr_perf_maps_stats {
	uint64_t files;     /* map files started on (a replaced or truncated file again) */
	uint64_t lookups;
	uint64_t named;     /* lookups that returned a symbol */
	uint64_t lines;     /* lines taken */
	uint64_t lines_bad; /* lines that did not parse, empty or over 64 KiB */
	uint64_t bytes;     /* bytes read from map files */
	uint64_t evicted;   /* processes dropped for the bounds (not by forget) */
	uint64_t trimmed;   /* entries dropped to keep one process within max_bytes */
	uint64_t refused;   /* tries that found a file of the wrong type, owner or mount */
	uint64_t held;      /* memory held now, in bytes (<= max_bytes) */
};
void fr_perf_maps_get_stats(const struct fr_perf_maps *m, struct fr_perf_maps_stats *ret);

#endif
