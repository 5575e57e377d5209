/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a store: no lock, safe while the daemon writes.  Chunks are found
 * from their headers alone; payloads are read only for chunks a caller
 * loads.
 */
#ifndef FR_STORE_READER_H
#define FR_STORE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "chunk.h"

struct fr_store_reader;

struct fr_chunk_ref {
	uint32_t segment; /* index into the reader's segments, oldest first */
	uint64_t offset;  /* of the chunk header in that segment */
	struct fr_chunk_info info;
};

struct fr_store_reader_stats {
	uint64_t bytes_read;      /* headers and payloads read from disk */
	uint64_t chunks_damaged;  /* skipped: failed checksum or cut short */
	uint64_t regions_damaged; /* runs of chunks whose headers failed, with
				     valid chunks after them (not a torn tail):
				     lost, their times unknown */
	uint64_t chunks_unsupported; /* refused: unknown version or flags */
	uint64_t segments;
	uint64_t segments_unsupported; /* newer format: not read */
	uint64_t segments_skipped; /* by the last walk: not needed (see
				      fr_store_reader_foreach_since) */
	uint64_t bytes_on_disk;   /* segment files, kernel symbol snapshots, boots' hosts */
};

/* -ENOENT: no store at @dir; -ENOTDIR; -EACCES. */
int fr_store_reader_open(const char *dir, struct fr_store_reader **ret);
struct fr_store_reader *fr_store_reader_free(struct fr_store_reader *r);

/* Calls @cb for every valid chunk header in write order (oldest segment
 * first).  A non-zero return from @cb stops the walk and is returned. */
typedef int (*fr_chunk_cb)(const struct fr_chunk_ref *ref, void *userdata);
int fr_store_reader_foreach(struct fr_store_reader *r, fr_chunk_cb cb, void *userdata);
/* The same for a time window from @since (wall ns): skips the segments
 * whose records all end before the newest keyframe that ends before
 * @since, as far as the segments' successors' headers tell (struct
 * fr_segment_prev).  The chunks left out are none a window from @since
 * reads, nor the keyframe before it, nor the chunks after that keyframe.
 * Damage in skipped segments is not looked for. */
int fr_store_reader_foreach_since(struct fr_store_reader *r, uint64_t since, fr_chunk_cb cb, void *userdata);

/*
 * Following a store while it is written (frctl dump -f).  A cursor is where
 * a follower has read up to; chunk seqnums (segment seqnum << 32 | index)
 * increase through the store and across daemon restarts (a new run goes
 * on in the newest segment), so the chunks after a cursor are exactly the
 * ones not read yet.
 */
struct fr_store_cursor {
	uint64_t seqnum;    /* of the segment; 0: none yet (from the oldest one) */
	uint64_t offset;    /* in it: where the next chunk starts */
	uint64_t last_wall; /* the latest record time of the chunks read */
	/* bytes at offset that do not verify, with valid chunks after them,
	 * since when (CLOCK_MONOTONIC); 0: none */
	uint64_t blocked_offset, blocked_since;
};

struct fr_store_new_stats {
	/* segments reused before they were read to their end (the writer
	 * went round the ring past the cursor): their records are lost to
	 * the follower, those after lost_after_wall and, when known, up to
	 * lost_until_wall (0: unknown) */
	uint64_t segments_lost;
	uint64_t lost_after_wall, lost_until_wall;
	/* regions that did not verify, with valid chunks after them, skipped */
	uint64_t regions_damaged;
	bool store_reset; /* every segment is older than the cursor: the
			     store was made anew; read from its start */
};

/* Reads the segments directory again: new segment files, segments reused
 * since (a new seqnum), and how far each is written.  Chunk refs from
 * before are void.  -EBADF for an incident file. */
int fr_store_reader_refresh(struct fr_store_reader *r);
/* The cursor a follower starts from for a window from @since: the first
 * segment fr_store_reader_foreach_since() would walk. */
void fr_store_reader_cursor_since(struct fr_store_reader *r, uint64_t since, struct fr_store_cursor *ret);
/* Calls @cb for each chunk after @cur, in write order, and moves @cur past
 * it when @cb returns 0; a non-zero return stops the walk before that
 * chunk and is returned.  Only whole chunks are given.  In the newest
 * segment, the one being written, a chunk whose records end at or after
 * @check_from_wall has its payload checked first (0: every chunk), and
 * the walk stops at the first place that does not verify (a chunk, or
 * bytes between chunks): it is read again on the next call, and taken
 * for damage and skipped only once valid chunks have followed it for 10
 * s (writes complete in any order, and may stall).  Other chunks, and
 * those of the segments the writer has left, have only their headers
 * checked here (the loaders check payloads), and a region of them that
 * does not verify is skipped.  Skipped regions, and segments lost, are
 * counted in @st.  Returns 0 when everything readable now was walked. */
int fr_store_reader_foreach_new(struct fr_store_reader *r, struct fr_store_cursor *cur, uint64_t check_from_wall,
				fr_chunk_cb cb, void *userdata, struct fr_store_new_stats *st);

/* Opens an incident file as a one-segment store; *ret_meta gets its JSON
 * metadata (caller frees).  A sealed file is read up to its length.
 * -EBADMSG: not an incident file or damaged; -ENODATA: sealed, but
 * shorter than its length (truncated). */
int fr_store_reader_open_incident(const char *path, struct fr_store_reader **ret, char **ret_meta);

/* Reads a chunk as stored (header, payload, padding), verified. */
int fr_store_reader_read_chunk(struct fr_store_reader *r, const struct fr_chunk_ref *ref, uint8_t **ret,
			       size_t *ret_len);

/* Reads, verifies and decompresses a chunk's payload into @raw, which
 * holds ref->info.raw_size bytes: its records as rows.  -EBADMSG:
 * damaged.  With its own @dctx (NULL: the reader's), a thread may load
 * while others do. */
struct ZSTD_DCtx_s;
int fr_store_reader_load(struct fr_store_reader *r, struct ZSTD_DCtx_s *dctx, const struct fr_chunk_ref *ref,
			 uint8_t *raw);
/* The same, reading the compressed payload into *buf (*cap bytes, grown
 * as needed; the caller frees it): a thread loading many chunks reuses
 * one buffer instead of fresh memory for each.  Sets @it to read the
 * records: a chunk in columns is decompressed into *buf too, and its
 * records become rows in @raw only as @it reads them, in the one pass
 * that decodes them (fr_chunk_payload_decode); with @raw NULL, not at all:
 * the records point into *buf. */
int fr_store_reader_load_into(struct fr_store_reader *r, struct ZSTD_DCtx_s *dctx, const struct fr_chunk_ref *ref,
			      uint8_t *raw, void **buf, size_t *cap, struct fr_record_iter *it);
/* fr_store_reader_load_into() in two steps, for a caller that takes @raw
 * only for a payload worth it: _read_payload reads the compressed payload
 * into *buf and checks that its zstd frame decompresses to the size the
 * header says (so a damaged or crafted header's raw_size and counts cost
 * no memory); _decode_payload then decompresses it (into @raw, or *buf
 * grown, as above) and sets @it.  -EBADMSG: damaged (counted). */
int fr_store_reader_read_payload(struct fr_store_reader *r, const struct fr_chunk_ref *ref, void **buf, size_t *cap);
int fr_store_reader_decode_payload(struct fr_store_reader *r, struct ZSTD_DCtx_s *dctx, const struct fr_chunk_ref *ref,
				   uint8_t *raw, void **buf, size_t *cap, struct fr_record_iter *it);

/* The store directory (for the files beside its segments); -EBADF when
 * reading an incident file. */
int fr_store_reader_dir_fd(const struct fr_store_reader *r);

void fr_store_reader_get_stats(struct fr_store_reader *r, struct fr_store_reader_stats *ret);

#endif
