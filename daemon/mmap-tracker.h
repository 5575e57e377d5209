/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The executable mappings of every process, learned as they are made, so
 * that a record of a process that has exited (a crash, a short-lived
 * command, a wait that ended the process) unwinds and names like a live
 * process's.  The kernel reports each executable mmap, exec, fork and
 * exit on a perf side-band event per CPU (PERF_RECORD_MMAP2, COMM with
 * PERF_RECORD_MISC_COMM_EXEC, FORK, EXIT: what perf record uses), read at
 * the start of each drain, before the records those mappings explain, and
 * applied in time order (a process that moved between CPUs has its exec
 * and its next mapping in two rings, read one after the other).
 *
 * Nothing here opens or parses a process's files: what a dead process
 * mapped is handed out as the text of a /proc/PID/maps (proc-access.h),
 * and its files are then opened as any others are, by path in the
 * daemon's namespace and checked against the device and inode the kernel
 * reported (mapped-file.h).  Live processes are still read from /proc.
 *
 * Bounded: FR_TRACKER_PROCS processes, FR_TRACKER_MAPPINGS mappings in
 * all (shared by a parent and the children it forked until one of them
 * maps something; their paths interned), exited processes kept
 * FR_TRACKER_KEEP_NS for the records still in the rings, oldest first out.  Every event lost in the
 * kernel, and every mapping not kept, is counted.
 */
#ifndef FR_MMAP_TRACKER_H
#define FR_MMAP_TRACKER_H

#include <stdint.h>

#define FR_TRACKER_PROCS 32768
#define FR_TRACKER_MAPPINGS 131072
/* the rings are drained every 100 ms, and a second at most behind when
 * the daemon sheds load */
#define FR_TRACKER_KEEP_NS (10ULL * 1000000000ULL)
/* perf ring pages per CPU (a power of two): an exec storm of 10,000 a
 * second makes ~1.5 MB/s of events, drained every 100 ms */
#define FR_TRACKER_PAGES 64

struct fr_mmap_tracker;

/* Opens the side-band events on @ncpu CPUs. */
int fr_mmap_tracker_new(unsigned ncpu, struct fr_mmap_tracker **ret);
struct fr_mmap_tracker *fr_mmap_tracker_free(struct fr_mmap_tracker *t);

/* Reads what the kernel reported since the last call. */
void fr_mmap_tracker_poll(struct fr_mmap_tracker *t);

/* The executable file mappings of @pid as the text of /proc/PID/maps,
 * in a sealed memfd (each file's mapping preceded by one for the pages
 * before it from offset 0, where its ELF headers are, as a loader maps
 * them), and the inode of the image it ran in *exe_ino (0 when its exec
 * was not seen: a process older than the tracker).  -ESRCH when @pid is
 * not known. */
int fr_mmap_tracker_maps(struct fr_mmap_tracker *t, uint32_t pid, uint64_t *exe_ino);

struct fr_mmap_tracker_stats {
	uint64_t events;      /* side-band events read */
	uint64_t lost;        /* lost in the kernel (the perf rings were full) */
	uint64_t mmaps;       /* executable file mappings learned */
	uint64_t execs, forks, exits;
	uint64_t processes;   /* held now, exited ones included */
	uint64_t mappings;    /* held now */
	uint64_t refused;     /* mappings not kept: over a bound */
	uint64_t evicted;     /* processes dropped: exited long enough, or by the bound */
	uint64_t served;      /* maps handed out for processes that were gone */
};
void fr_mmap_tracker_get_stats(const struct fr_mmap_tracker *t, struct fr_mmap_tracker_stats *ret);

#endif
