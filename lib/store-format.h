/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store's on-disk layout (documented in flightrec-store(5); this file is
 * authoritative).  All integers little-endian, layouts pinned.
 *
 *   <store>/segments/NNNN.frs   a fixed ring of segment files, each at most
 *                               segment_size bytes:
 *       segment header (64 bytes)
 *       chunk, chunk, ...       each 8-byte aligned
 *   chunk = chunk header (128 bytes) + one zstd frame (payload_size bytes)
 *           + zero padding to 8 bytes
 *
 * Append-only: a chunk is reachable once its bytes are on disk; a chunk whose
 * header or payload checksum fails never existed.  Retention reuses the
 * segment with the lowest sequence number, truncating it first.
 */
#ifndef FR_STORE_FORMAT_H
#define FR_STORE_FORMAT_H

#include <stdint.h>

#define FR_SEGMENT_MAGIC "FRECSEG\0"
#define FR_CHUNK_MAGIC "FRECCHK\0"
#define FR_MAGIC_LEN 8

/* Bump on any change an old reader would misread; readers refuse versions
 * they do not know. */
#define FR_STORE_VERSION 1

/* Incompatible flags: a reader that does not know one set must refuse.
 * Compatible flags: unknown ones are ignored.  Each header kind has its
 * own flags; these are those of segment and incident headers (no
 * incompatible ones yet). */
#define FR_INCOMPAT_KNOWN 0u
/* Segment header: prev_last_wall and prev_keyframe_age_ms describe the
 * segment of seqnum - 1, as the writer left it to start this one.
 * Readers use them to skip segments a time window cannot need. */
#define FR_SEGMENT_COMPAT_PREV (1u << 0)

/* Incompatible flags of chunk headers.  Records have no length prefix, so
 * a field added to a record type was one an older reader would misread:
 * such a field was announced by a flag on the chunk, and readers decode
 * it only in chunks that have the flag (older chunks read as before).
 * From FR_CHUNK_INCOMPAT_RECORD_EXT on, records say the length of what
 * they add: new fields and new types need no more flags. */
#define FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL (1u << 0) /* offcpu records end in
							  an svarint syscall nr */
/* The payload holds the records in columns, not rows: FR_REC_STREAMS
 * (record.h) u32 stream lengths, then the streams one after the other
 * (lib/record-codec.c says which field goes where).  raw_size is still
 * the size of the records as rows, which readers turn them back into; the
 * zstd frame holds raw_size + 4 * FR_REC_STREAMS bytes. */
#define FR_CHUNK_INCOMPAT_STREAMS (1u << 1)
/* The chunk holds FR_REC_INLINE records, a type older readers do not
 * know: without the flag they would take the chunk for damaged from the
 * first one on.  Set only on chunks that hold one, so that an older
 * reader still reads the others; the codec reads the type in any chunk. */
#define FR_CHUNK_INCOMPAT_INLINE (1u << 2)
/* offcpu records carry a stack after their syscall nr, as a sample's
 * (kernel frames where the task slept, user frames where it entered the
 * kernel; both counts 0 when none was captured). */
#define FR_CHUNK_INCOMPAT_OFFCPU_STACK (1u << 3)
/* trigger records end in the record the rule fired on: its type (varint)
 * and its time as the trigger's time minus it (svarint).  Set only on
 * chunks that hold a trigger record, as FR_CHUNK_INCOMPAT_INLINE. */
#define FR_CHUNK_INCOMPAT_TRIGGER_CAUSE (1u << 4)
/* signal records end in the sender's tid (svarint, from sender_pid),
 * what their stack is (varint, FR_SIGNAL_STACK_* of record.h), the fault
 * address (varint) if the record's FR_REC_F_FAULT_ADDR flag is set, and
 * the sender's stack as a sample's.  Set only on chunks that hold a
 * signal record, as FR_CHUNK_INCOMPAT_INLINE. */
#define FR_CHUNK_INCOMPAT_SIGNAL_STACK (1u << 5)
/* Records extend: a record whose flags have FR_REC_F_EXT ends, after the
 * fields above, in a varint length and that many bytes (its extension,
 * in the "other" stream).  Fields added to a type from now on go there,
 * after those an older reader knows, and a type added has no fields but
 * its extension; a reader skips the extension bytes it does not know, and
 * records of types it does not know, counted (lib/record-codec.c).  The
 * last incompatible flag a record change needs: set on every chunk. */
#define FR_CHUNK_INCOMPAT_RECORD_EXT (1u << 6)
#define FR_CHUNK_INCOMPAT_KNOWN                                                                     \
	(FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL | FR_CHUNK_INCOMPAT_STREAMS | FR_CHUNK_INCOMPAT_INLINE | \
	 FR_CHUNK_INCOMPAT_OFFCPU_STACK | FR_CHUNK_INCOMPAT_TRIGGER_CAUSE | FR_CHUNK_INCOMPAT_SIGNAL_STACK | \
	 FR_CHUNK_INCOMPAT_RECORD_EXT)
/* What the writer sets on every chunk it makes; it adds
 * FR_CHUNK_INCOMPAT_INLINE to a chunk when it adds an FR_REC_INLINE
 * record to it, FR_CHUNK_INCOMPAT_TRIGGER_CAUSE a trigger,
 * FR_CHUNK_INCOMPAT_SIGNAL_STACK a signal (lib/chunk.c). */
#define FR_CHUNK_INCOMPAT_WRITE                                                                   \
	(FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL | FR_CHUNK_INCOMPAT_STREAMS | FR_CHUNK_INCOMPAT_OFFCPU_STACK | \
	 FR_CHUNK_INCOMPAT_RECORD_EXT)

struct fr_segment_header {
	char magic[FR_MAGIC_LEN];
	uint32_t header_size;  /* sizeof(struct fr_segment_header) */
	uint16_t version;      /* FR_STORE_VERSION */
	uint16_t reserved0;
	uint32_t compat_flags;
	uint32_t incompat_flags;
	uint64_t seqnum;       /* increases with every reuse; newest = highest */
	uint64_t segment_size; /* the bound this file was written under */
	uint64_t created_wall; /* ns since epoch */
	/* with FR_SEGMENT_COMPAT_PREV, of the segment of seqnum - 1: no chunk
	 * of it has a record later than prev_last_wall (wall ns: last_ts +
	 * realtime_offset); it holds a keyframe chunk (cpu FR_CPU_META)
	 * whose first record is no earlier than prev_last_wall less
	 * prev_keyframe_age_ms ms; FR_SEGMENT_NO_KEYFRAME: none known */
	uint64_t prev_last_wall;
	uint32_t prev_keyframe_age_ms;
	uint32_t header_crc;   /* crc32 of the bytes before this field */
};
_Static_assert(sizeof(struct fr_segment_header) == 64, "segment header layout");
#define FR_SEGMENT_NO_KEYFRAME 0xffffffffu

struct fr_chunk_header {
	char magic[FR_MAGIC_LEN];
	uint32_t header_size;    /* sizeof(struct fr_chunk_header) */
	uint16_t version;        /* FR_STORE_VERSION */
	uint16_t reserved0;
	uint32_t compat_flags;
	uint32_t incompat_flags;
	uint32_t cpu;
	uint32_t nrecords;
	uint8_t boot_id[16];
	uint64_t first_ts;       /* CLOCK_BOOTTIME ns of the earliest record */
	uint64_t last_ts;        /* ... and of the latest */
	int64_t realtime_offset; /* CLOCK_REALTIME - CLOCK_BOOTTIME at close, ns */
	int64_t monotonic_offset;/* CLOCK_MONOTONIC - CLOCK_BOOTTIME at close, ns */
	uint64_t seqnum;         /* store-wide chunk sequence, strictly increasing */
	uint32_t raw_size;       /* encoded records before compression */
	uint32_t payload_size;   /* zstd frame bytes following the header */
	uint32_t payload_crc;    /* crc32 of the payload */
	uint32_t nevents;        /* records that are events (not gaps, metadata):
				    what a lost chunk costs in gap accounting */
	uint64_t gap_lost;       /* sum of 'lost' over the chunk's gap records: if
				    the chunk is lost, those counts are reported again */
	uint64_t reserved2;
	uint32_t reserved3;
	uint32_t header_crc;     /* crc32 of the bytes before this field */
};
_Static_assert(sizeof(struct fr_chunk_header) == 128, "chunk header layout");

/* The cpu field of chunks that hold keyframes (process metadata) rather
 * than one CPU's records. */
#define FR_CPU_META 0xffffffffu
/* The cpu field of chunks found only in incident files: kernel symbol
 * descriptions (FR_REC_SYMBOL, pid 0) for the kernel frames of the other
 * chunks of the same boot in the file that they do not describe
 * themselves: the store's snapshot of the boot (ksyms.h) does not travel
 * with the incident (lib/kernel-names.h).  No CPU's records, no events:
 * its header spans those chunks' times, so that a window of any of them
 * selects it. */
#define FR_CPU_NAMES 0xfffffffeu

/* Hard limits a reader enforces before trusting sizes in a header. */
#define FR_CHUNK_RAW_MAX (16u << 20)
#define FR_CHUNK_PAYLOAD_MAX (17u << 20)

#endif
