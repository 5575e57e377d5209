/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The single writer of a store: places closed chunks into the segment ring
 * and writes them with io_uring.  Completions arrive on an eventfd the
 * caller polls (fr_store_writer_fd) and drains (fr_store_writer_process).
 */
#ifndef FR_STORE_WRITER_H
#define FR_STORE_WRITER_H

#include <stdint.h>
#include <stddef.h>

struct fr_store_writer;

struct fr_store_params {
	uint64_t size;      /* bound on the bytes of all segments; 0: "auto"
			       (fr_store_auto_size()) */
	uint32_t nsegments; /* ring slots; segment size = size / nsegments */
	uint64_t max_chunk; /* largest chunk the caller will append (for checks) */
};

/* Called when chunk data could not be written: its event records (not
 * gaps or metadata) are lost, and the losses its gap records reported
 * (@gap_lost) must be reported again. */
typedef void (*fr_store_loss_cb)(uint32_t cpu, uint64_t records, uint64_t gap_lost, int error,
				 void *userdata);

struct fr_store_writer_stats {
	uint64_t bytes_written;
	uint64_t chunks_written;
	uint64_t chunks_failed;
	uint64_t records_lost;
	uint64_t syncs;
	uint64_t syncs_failed; /* their unsynced chunks are counted failed, their records lost */
	int last_error;     /* last write/sync error (-errno), 0 if none */
	unsigned segments_trimmed; /* emptied to keep the bound after the store
				      was made smaller (store.size/segments) */
	unsigned segments_removed; /* at open: slots beyond store.segments */
	unsigned inflight;  /* writes and syncs queued to the disk */
	unsigned closes_inflight; /* their fds, closed on the ring (a flush can wait) */
	unsigned held_chunks; /* chunks waiting to be queued (a slow disk, a rotation) */
	uint64_t held_bytes;
};

/* Opens (creating if needed) the store at @dir, takes the writer lock,
 * recovers the tail of the newest segment.  -EBUSY: another writer holds
 * the lock.  -EINVAL: parameters out of range.  -EPROTONOSUPPORT: the store
 * holds segments of a format this writer does not know (never overwritten). */
int fr_store_writer_open(const char *dir, const struct fr_store_params *p,
			 fr_store_loss_cb loss_cb, void *userdata, struct fr_store_writer **ret);
/* Waits for all in-flight I/O, syncs, and frees. NULL is fine. */
struct fr_store_writer *fr_store_writer_close(struct fr_store_writer *w);

/* Takes ownership of @buf (a chunk as made by fr_chunk_builder_close, @len
 * bytes) and queues it.  On error the buffer is freed and the loss reported
 * through the loss callback. */
int fr_store_writer_append(struct fr_store_writer *w, void *buf, size_t len);

/* Called with each chunk as its write is queued, its bytes as they will
 * be stored: the incident being written takes the chunks of its window's
 * last moments from here, without waiting for the store or reading them
 * back. */
typedef void (*fr_store_chunk_cb)(const void *chunk, size_t len, void *userdata);
void fr_store_writer_set_chunk_cb(struct fr_store_writer *w, fr_store_chunk_cb cb, void *userdata);

/* Queues an fdatasync ordered after every write queued so far. */
int fr_store_writer_sync(struct fr_store_writer *w);
/* Submits queued I/O; call once per loop iteration after appends. */
int fr_store_writer_submit(struct fr_store_writer *w);

/* The eventfd signalled on completions, and the function draining them. */
int fr_store_writer_fd(struct fr_store_writer *w);
/* The store directory (for the files beside the segments: boot-files.h). */
int fr_store_writer_dir_fd(const struct fr_store_writer *w);
int fr_store_writer_process(struct fr_store_writer *w);
/* Blocks until nothing is in flight. */
int fr_store_writer_drain(struct fr_store_writer *w);
/* Blocks until every write queued so far has completed (its data is in the
 * page cache, readable), without waiting for a sync queued after them:
 * what an incident copies must be readable, not yet durable in the store. */
int fr_store_writer_wait_written(struct fr_store_writer *w);

void fr_store_writer_get_stats(struct fr_store_writer *w, struct fr_store_writer_stats *ret);
uint64_t fr_store_writer_segment_size(struct fr_store_writer *w);
/* The bound on the bytes of all segments; *@ret_fs (may be NULL): the
 * size of the file system "auto" took its share of, or 0 (a set size). */
uint64_t fr_store_writer_size_bound(const struct fr_store_writer *w, uint64_t *ret_fs);

#endif
