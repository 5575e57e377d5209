/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of the window reader share; users include window.h.
 * There is one reader, the stream: chunks are selected, loaded by worker
 * threads in order of their first record, and their records handed out in
 * slices of time.  A whole window (fr_window_load) is those slices put
 * end to end, with the chunks kept instead of dropped.
 *   window.c          opening a window, reading one whole, freeing it
 *   window-select.c   which chunks a window needs
 *   window-workers.c  the threads that load chunks ahead of the reader
 *   window-chunk.c    one chunk: decompressed, decoded, its names; and a
 *                     record of it decoded again when looked at
 *   window-merge.c    the loaded chunks' records cut into slices in time
 *                     order (window-sort.c sorts a slice)
 *   window-exe.c      what each pid runs
 *   window-frames.c   a sample's frames, named
 */
#ifndef FR_WINDOW_INTERNAL_H
#define FR_WINDOW_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

#include "pid-map.h"
#include "window.h"

/* Makes room for @need elements of @elem bytes in *p, doubling. */
static inline int window_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

struct window_cgroup {
	uint64_t id;
	const char *path;
	uint32_t len;
	uint32_t seq; /* order in the chunk: the newest description wins */
};

/* Per loaded chunk (window-chunk.c). */
struct fr_window_chunk {
	uint8_t *buf;            /* the decoded payload */
	const uint32_t *rec_off; /* with query.line: item pos's record is at
				    buf + rec_off[pos] */
	struct fr_window_entry *ents; /* streamed: its items' records, decoded once
				    (an item's pos indexes them) */
	const char *lines;       /* with query.line: item pos's line */
	const uint32_t *line_off;/* is lines[line_off[pos]..line_off[pos + 1]) */
	struct fr_symtab symtab; /* the code it describes */
	struct window_cgroup *cg;/* the cgroups it describes, by id */
	size_t ncg, cgcap;
};

struct fr_window_exe {
	const char *p;
	uint32_t len;
	bool kernel_thread;
};

/* A buffer and its size, kept for reuse. */
struct window_spare {
	void *p;
	size_t cap;
};

/* One chunk's loading, done by whichever thread takes it. */
struct window_job {
	uint32_t idx;      /* the chunk's index in fr_window.cd */
	size_t max;        /* room for max items */
	struct fr_window_item *items;
	struct fr_window_entry *ents; /* NULL, or room for max records */
	uint32_t *rec_off;            /* with lines: room for max offsets */
	struct window_spare *lines;   /* with query.line: the lines, */
	uint32_t *line_off;           /* and room for max + 1 offsets */
	uint8_t *buf;      /* room for its payload; NULL: lines only */
	bool rows;         /* its records decoded into buf (not lines only) */
	size_t n;          /* items it gave */
	uint64_t bad;      /* records that did not decode */
	uint64_t unknown;  /* records of types this reader does not know, skipped */
	int k;             /* 0, -EBADMSG (damaged: skipped) or fatal */
	bool done;         /* k and the rest are set */
};

/* What a loading thread keeps from chunk to chunk. */
struct window_loader {
	ZSTD_DCtx *dctx;
	void *buf; /* the compressed payload */
	size_t cap;
	struct fr_window_entry *ents; /* with query.line: one chunk's records */
	size_t ents_cap;
	unsigned slot;
};

/* window-chunk.c */
size_t window_chunk_max_items(const struct fr_chunk_ref *ref);
void window_chunk_load(struct fr_window *w, struct fr_store_reader *r, const struct fr_window_query *q,
		       const struct fr_chunk_ref *ref, struct window_job *job, struct window_loader *t);
void window_chunk_done(struct fr_window_chunk *c);
void window_loader_done(struct window_loader *t);
int window_item_decode(const struct fr_window *w, const struct fr_window_item *it, struct fr_record *r);

/* A chunk of the stream: its records not handed out yet, and the buffers
 * it holds. */
struct window_stream_chunk {
	struct fr_window_item *items;
	size_t n;
	bool damaged;
	struct window_spare buf, itembuf, entbuf, linebuf, offbuf;
};

struct window_worker {
	struct fr_window *w;
	unsigned slot;
};

struct fr_window_stream {
	struct fr_store_reader *r;
	struct fr_window_query q;
	bool keep;             /* whole window: chunks stay when used up */
	struct fr_chunk_ref *refs;
	uint32_t *order;       /* chunk indices by first record, then store order */
	struct window_job *jobs;/* jobs[i] loads chunk order[i] */
	size_t next;           /* order[next]: the next chunk to hand to the loaders */
	size_t merged;         /* jobs[0..merged) are done and in the open chunks */
	size_t batch_end[2];   /* the slices' worth handed out, oldest first */
	unsigned nbatches;
	struct window_stream_chunk *sc;
	uint32_t *open;        /* the loaded chunks, in store order */
	size_t nopen;
	struct window_spare *spares; /* buffers of dropped chunks, for reuse */
	size_t nspares, sparecap;
	struct fr_pid_map pids;
	size_t exes_cap;
	struct fr_window_item *scratch; /* for sorting, as big as w->items */
	/* the loading threads: they take jobs[taken..limit) in turn */
	pthread_t threads[FR_WINDOW_THREADS_MAX];
	unsigned nthreads;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	size_t taken, limit;
	bool stop, started;
	struct window_loader self; /* the calling thread's, when it helps */
	struct window_worker workers[FR_WINDOW_THREADS_MAX];
};

/* window-workers.c */
int window_workers_start(struct fr_window *w);
void window_workers_schedule(struct fr_window *w);
void window_workers_wait(struct fr_window *w, size_t end);
void window_workers_stop(struct fr_window *w);
void window_workers_drop(struct fr_window *w, uint32_t idx);

/* window-spares.c */
int window_spare_put(struct fr_window_stream *s, struct window_spare *sp);
uint8_t *window_job_take_rows(struct fr_window *w, struct window_job *job, const struct fr_chunk_ref *ref);
int window_job_take_room(struct fr_window *w, struct window_job *job, const struct fr_chunk_ref *ref);

/* window-exe.c */
int window_exe_resolve(struct fr_window *w, struct fr_pid_map *map, size_t *cap, bool copy);
void window_exes_free(struct fr_window *w, bool copied);

/* window-frames.c */
void window_ksyms_prefetch(struct fr_window *w, const uint8_t boot_id[16]);
void window_ksyms_free(struct fr_window *w);

static inline uint64_t window_ref_first(const struct fr_chunk_ref *ref)
{
	return ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
}

static inline uint64_t window_ref_last(const struct fr_chunk_ref *ref)
{
	return ref->info.last_ts + (uint64_t)ref->info.realtime_offset;
}

#endif
