/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A time window of a store, decoded and merged across CPUs into time order:
 * what dump, report and incident writing work from.
 */
#ifndef FR_WINDOW_H
#define FR_WINDOW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "record.h"
#include "store-reader.h"
#include "symtab.h"

/* One record of the window, decoded by fr_window_get(). */
struct fr_window_entry {
	struct fr_record r;
	uint64_t wall_ns;    /* ts turned into CLOCK_REALTIME by its chunk's offset */
	uint32_t chunk;      /* index into fr_window.chunks */
	uint32_t cgroup_len;
	const char *cgroup;  /* path, NULL when the chunk did not describe it */
	const char *exe;     /* executable of pid at this time, NULL if unknown */
	uint32_t exe_len;
	bool kernel_thread;  /* pid is a kernel thread (it has no executable) */
	bool hidden;         /* context, not part of the window: metadata, or an
				exec/fork before since_ns that names a process */
};

/* What the window keeps per record: where to decode it from, and what
 * sorting and cheap filtering need.  32 bytes, so that a window of
 * millions of records costs little memory and sorts fast; the record is
 * decoded again, from its chunk, when it is looked at. */
struct fr_window_item {
	uint64_t wall_ns;
	uint32_t chunk;  /* index into fr_window.chunks */
	uint32_t pos;    /* offset of the record in its chunk's payload */
	uint32_t pid;
	uint32_t exe;    /* 1 + index into the window's executables; 0: unknown */
	uint16_t type;
	bool hidden;
};

struct fr_kernel_names;
struct fr_late_names;
struct fr_out;
struct fr_window_chunk; /* per loaded chunk: payload, names (window-chunk.c) */

struct fr_window {
	struct fr_window_item *items; /* in time order; ties in store order */
	size_t n, cap;
	struct fr_chunk_info *chunks;
	struct fr_window_chunk *cd;   /* beside chunks[] */
	size_t nchunks, ncd;
	uint64_t chunks_damaged; /* chunks in range whose payload failed to verify */
	uint64_t records_bad;    /* records that failed to decode (rest of chunk skipped) */
	uint64_t records_unknown; /* records of types this reader does not know (a newer
				     writer's), skipped */
	struct fr_window_exe *exes; /* executables named by keyframes and execs */
	size_t nexes;
	struct fr_window_ksyms *ksyms; /* kernel symbol snapshots, by boot, loaded on use */
	size_t nksyms;
	pthread_mutex_t ksyms_lock;
	pthread_t ksyms_prefetch; /* loading the newest boot's, from the open */
	bool ksyms_prefetching;
	int store_fd;            /* for the snapshots; -EBADF for incidents */
	struct fr_kernel_names *names; /* an incident's, instead (kernel-names.h) */
	struct fr_window_stream *stream; /* the reader (window-internal.h) */
	struct fr_late_names *late_names; /* not owned; NULL: none */
	struct fr_demangler *demangler;   /* C++ names, demangled once (NULL: out of memory) */
};

/* Loads every record with since_ns <= wall time <= until_ns, plus the
 * metadata to name its processes: the keyframe before since_ns and those
 * inside the window (entries for which fr_record_type_is_meta() is true; they
 * are not for printing).  Unless skip_exe, every entry's exe is resolved
 * from keyframes and the exec and fork records before it. */
struct fr_window_query {
	uint64_t since_ns, until_ns; /* wall clock, inclusive */
	bool one_boot;               /* only chunks of boot_id */
	bool skip_exe;               /* entries' exe not needed: saves a pid
					lookup per record */
	uint8_t boot_id[16];
	size_t slice_bytes;          /* streamed: payload loaded per slice
					(0: a few MiB) */
	/* called after each chunk loaded, if set */
	void (*progress)(size_t done, size_t total, void *userdata);
	/* streamed, optional: the line of each record (not hidden) is
	 * written to @o by the thread that decoded its chunk, while that is
	 * fresh in its cache, in store order; fr_window_line() hands it out
	 * in time order.  Writing nothing leaves the record out.  @slot (<=
	 * fr_window_threads()) is the calling thread's, for state of its
	 * own: each slot is one thread at a time, the slots run at once.
	 * @e's exe is not known there (skip_exe). */
	void (*line)(struct fr_window *w, const struct fr_window_item *it, const struct fr_window_entry *e,
		     unsigned slot, struct fr_out *o, void *userdata);
	/* with line and skip_exe: records are read only for their lines
	 * (fr_window_get() fails with -ENODATA), so the chunks are not kept
	 * decoded: no copy of every record, no memory for one */
	bool lines_only;
	/* chunks loaded by the calling thread alone, no loader threads (a
	 * fuzzer's run per input: starting them cost more than its load) */
	bool no_threads;
	void *userdata;      /* progress's */
	void *line_userdata; /* line's */
};

/* The whole window at once, for readers that go back to its records
 * (report): the stream below read to its end, its slices put one after
 * another and its chunks kept, each record decoded again from its chunk
 * when looked at.  Damaged chunks are left out of chunks[]. */
int fr_window_load(struct fr_store_reader *r, const struct fr_window_query *q,
		   struct fr_window **ret);

/* The same window for readers that take it once, in order: opened
 * without loading anything; then each fr_window_stream_next() makes
 * items[0..n) the next slice of it, in time order (ties in store order,
 * as fr_window_load()), and drops the chunks the slice before used up.
 * Memory stays a few slices' worth however long the window.  Returns 1 (a
 * slice, maybe empty), 0 at the end, or -errno.  chunks[] describes all
 * the chunks from the open; their tables exist while their records are in
 * a slice. */
int fr_window_stream_open(struct fr_store_reader *r, const struct fr_window_query *q,
			  struct fr_window **ret);
int fr_window_stream_next(struct fr_window *w);

/* Decodes record @i (< w->n) into @e; its strings point into the window
 * and live as long as it.  -EBADMSG cannot happen for a window that
 * loaded (the record decoded then), but is checked; -ENODATA streamed
 * with query.lines_only. */
int fr_window_get(const struct fr_window *w, size_t i, struct fr_window_entry *e);
/* Streamed with query.line: the line written for item @i (< w->n),
 * @len bytes (0: left out). */
const char *fr_window_line(const struct fr_window *w, size_t i, size_t *len);

/* The chunks fr_window_load() would read for @q (the window, the keyframe
 * before it and the context between), in store order.  Caller frees. */
int fr_window_select(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_chunk_ref **ret,
		     size_t *nret);
/* The same selection among @refs, the chunks of a walk in store order
 * (fr_store_reader_foreach_new()), instead of the whole store.  Caller
 * frees. */
int fr_window_select_from(const struct fr_window_query *q, const struct fr_chunk_ref *refs, size_t n,
			  struct fr_chunk_ref **ret, size_t *nret);
/* Loads @refs (of @r, store order: ties in time keep it) as
 * fr_window_load() loads the chunks it selects. */
int fr_window_load_refs(struct fr_store_reader *r, const struct fr_window_query *q, const struct fr_chunk_ref *refs,
			size_t n, struct fr_window **ret);
struct fr_window *fr_window_free(struct fr_window *w);

/* What each pid runs, carried from one window to the next for a reader
 * that takes windows one after another (frctl dump -f), whose entries'
 * exe a window alone cannot know (loaded with skip_exe).  Given every
 * entry in time order, context included, it sets the entry's exe as
 * fr_window_load() would have; a process's exit forgets it (after its
 * own entry), so it holds the live processes only.  The names live until
 * the next call.  -ENOMEM: the entry may then lack its name. */
struct fr_exe_track;
int fr_exe_track_new(struct fr_exe_track **ret);
int fr_exe_track_entry(struct fr_exe_track *t, struct fr_window_entry *e);
struct fr_exe_track *fr_exe_track_free(struct fr_exe_track *t);

/* How many threads loading and printing use: one per CPU, at most
 * FR_WINDOW_THREADS_MAX. */
#define FR_WINDOW_THREADS_MAX 8
unsigned fr_window_threads(void);

/* One more than the highest CPU whose chunks the window holds. */
unsigned fr_window_ncpu(const struct fr_window *w);

/* The frames of offcpu record @e's waker (its sched.waker, in the waker's
 * process), as fr_window_frames() names a record's; 0 when it has none. */
int fr_window_waker_frames(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *out,
			   size_t max);

/* From now on, fr_window_frames() names the user frames their chunks
 * left unnamed from @ln (lib/late-names.h), which must outlive the
 * window's use; NULL: not at all. */
void fr_window_set_late_names(struct fr_window *w, struct fr_late_names *ln);

/* The frames of sample @e, kernel frames first, each part leaf first, named
 * from the code its chunk describes (kernel frames also from the store's
 * snapshot of that boot, or an incident's names chunks of it; user frames
 * it does not name, with a build id,
 * from the window's late names if it has them).  A user frame with
 * functions inlined where it is (FR_REC_INLINE) comes after a frame for
 * each of them, innermost first (inlined set): there can be more frames
 * than the sample has, and the first kernel_frames are still the
 * kernel's.  At most @max, the outermost left out (room for
 * FR_FRAMES_EXPANDED_MAX is enough for real stacks).  Returns how many,
 * or -EBADMSG. */
int fr_window_frames(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *out,
		     size_t max);

#endif
