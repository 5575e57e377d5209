/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Incident files: a frozen window, self-contained.  Layout (little-endian,
 * documented in flightrec-store(5)):
 *   incident header (64 bytes)
 *   metadata: one JSON object (id, rules, reason, triggers, host, kernel,
 *             boot id, start, end, config): from fr_incident_write, its
 *             own length, then zero bytes (not counted) up to a multiple
 *             of 8; from a builder, padded with spaces (counted) to the
 *             room it left for it, a multiple of 8
 *   chunks: byte copies of the store's chunks for the window, including
 *           the keyframe before it, each 8-byte aligned, as in a segment;
 *           then, per boot, the names of the kernel frames they leave to
 *           the store's snapshot (chunks with cpu FR_CPU_NAMES:
 *           kernel-names.h), which the file does not carry
 * The store reader opens an incident file like a one-segment store; it
 * needs only the header (incident-header.h), not the writers here.
 */
#ifndef FR_INCIDENT_H
#define FR_INCIDENT_H

#include <stddef.h>
#include <stdint.h>

#include "incident-header.h"
#include "kernel-names.h"
#include "store-reader.h"
#include "store.h"

#define FR_INCIDENT_SUFFIX ".fri"

/* Bytes an incident of @meta and @refs takes at most (chunks that no
 * longer verify when copied are left out), but for the names chunks
 * appended when it is sealed: known only then, they can make it larger
 * (by the size of the kernel functions' names its samples pass through,
 * tens of KiB). */
uint64_t fr_incident_size_max(const char *meta, const struct fr_chunk_ref *refs, size_t nrefs);

/* An incident file built in memory, sealed when complete: room for the
 * metadata is set first (so chunks can be written out before the
 * metadata is final), chunks are appended, then the metadata (padded with
 * spaces to its room) and the header are filled in by _seal. */
struct fr_incident_builder;
int fr_incident_builder_new(size_t meta_room, struct fr_incident_builder **ret);
struct fr_incident_builder *fr_incident_builder_free(struct fr_incident_builder *b);
/* Appends one chunk as stored (header, payload, padding).  Its kernel
 * frames are named at the seal from the snapshots of the store of an
 * fr_incident_builder_add_refs() before it (none: left unnamed). */
int fr_incident_builder_add(struct fr_incident_builder *b, const void *chunk, size_t len);
/* Appends the chunks @refs read from @r; those that no longer verify
 * (overwritten or damaged since selected) are left out.  Their kernel
 * frames are looked up now (the seal, on an incident's critical path,
 * names only the chunks added after). */
int fr_incident_builder_add_refs(struct fr_incident_builder *b, struct fr_store_reader *r,
				 const struct fr_chunk_ref *refs, size_t nrefs);
/* The names chunks for the chunks added so far, built now, off the
 * critical path: the seal takes them when no kernel address came since
 * (fr_kernel_names_collector_prepare()). */
int fr_incident_builder_prepare_names(struct fr_incident_builder *b);
/* Appends the names chunks (kernel-names.h), then fills in @meta and the
 * sealed header.  -E2BIG: @meta exceeds the room.  Once. */
int fr_incident_builder_seal(struct fr_incident_builder *b, const char *meta);
/* What the names chunks sealed in left unnamed (counts). */
/* Lends the kernel-names collector a table for boot @boot_id in place of
 * its snapshot (fr_kernel_names_collector_lend_ksyms()). */
void fr_incident_builder_lend_ksyms(struct fr_incident_builder *b, const uint8_t boot_id[16],
				    const struct fr_ksyms *ks);
void fr_incident_builder_names_stats(const struct fr_incident_builder *b, struct fr_kernel_names_stats *ret);
/* The file's bytes so far (the whole file once sealed). */
const uint8_t *fr_incident_builder_data(const struct fr_incident_builder *b, size_t *ret_len);
size_t fr_incident_builder_chunks_offset(const struct fr_incident_builder *b);

/* Writes @path (atomically: a temporary file, fsync, rename, fsync of the
 * directory) with metadata @meta and the chunks @refs copied from @r, and
 * the names chunks for them, sealed; what those left unnamed into
 * @names_st, if not NULL.  Returns the bytes written or -errno. */
int64_t fr_incident_write(const char *path, const char *meta, struct fr_store_reader *r,
			  const struct fr_chunk_ref *refs, size_t nrefs, struct fr_kernel_names_stats *names_st);

/* Called with each chunk as stored before it is written: 0 with *ret
 * NULL writes it as it is, 0 with *ret (malloc'd, *ret_len bytes: one
 * chunk or more, each as stored, or none with *ret_len 0) writes those
 * bytes instead, <0 fails the write.  frctl --redact writes chunks made again without what it cuts. */
typedef int (*fr_incident_chunk_filter)(void *userdata, const uint8_t *chunk, size_t len, uint8_t **ret,
					size_t *ret_len);

/* Writes the incident of fr_incident_write() to @fd, from its current
 * offset, which must be 0 (no sync, no rename): each chunk through
 * @filter, if not NULL (the names chunks are for the chunks it gives).
 * Returns the bytes written or -errno. */
int64_t fr_incident_write_fd(int fd, const char *meta, struct fr_store_reader *r, const struct fr_chunk_ref *refs,
			     size_t nrefs, fr_incident_chunk_filter filter, void *userdata,
			     struct fr_kernel_names_stats *names_st);

/* Writes @len bytes at offset @off of @fd (no sync). */
int fr_incident_pwrite(int fd, const void *buf, size_t len, uint64_t off);

/* Writes @len bytes at offset 0 of @fd and fdatasync()s them.  For an
 * incident built in memory written over a spare file (see daemon/incident-spare.h):
 * blocks already allocated and durable, so no journal commit is needed. */
int fr_incident_write_at(int fd, const void *buf, size_t len);

#endif
