/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel names an incident carries.  Chunks leave the kernel functions
 * the store's snapshot of their boot names undescribed (ksyms.h), and an
 * incident file does not carry the snapshot (a megabyte compressed).  So
 * as an incident's chunks are copied, the kernel frames of their samples
 * that they do not describe are collected, by boot; after them the
 * incident gets a chunk (cpu FR_CPU_NAMES, store-format.h) per boot of
 * FR_REC_SYMBOL records (pid 0) naming those frames from the snapshot.
 * A reader of the incident names such frames from its names chunks of
 * their boot, as a reader of the store does from the snapshot: the same
 * names.
 */
#ifndef FR_KERNEL_NAMES_H
#define FR_KERNEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "store-reader.h"
#include "symtab.h"

/* Distinct addresses collected at most, all boots together, and in one
 * chunk (each costs a few dozen bytes while collected): more than the
 * kernel functions a window's samples pass through, a bound on what a
 * hostile or huge window can make it hold.  Those past it stay unnamed,
 * counted. */
#define FR_KERNEL_NAMES_ADDRS_MAX (1u << 17)

/* What a collector could not name, for the caller to report. */
struct fr_kernel_names_stats {
	uint64_t symbols;          /* named in the chunks made */
	uint64_t addrs_left_out;   /* past FR_KERNEL_NAMES_ADDRS_MAX */
	uint64_t addrs_unknown;    /* the snapshot has no function there */
	uint64_t chunks_undecoded; /* did not verify or decode: their frames unnamed */
	uint64_t boots_unnamed;    /* no snapshot of the boot (or no store: the
				      chunks came from an incident): its
				      chunks' frames stay as they are */
};

struct fr_kernel_names_collector;
int fr_kernel_names_collector_new(struct fr_kernel_names_collector **ret);
struct fr_kernel_names_collector *fr_kernel_names_collector_free(struct fr_kernel_names_collector *c);
/* The store whose snapshots name the frames (its directory, @dir_fd,
 * duplicated; < 0: none, nothing is named).  The first one set stays. */
int fr_kernel_names_collector_set_store(struct fr_kernel_names_collector *c, int dir_fd);
/* Chunks as copied into the incident (each header, payload, padding; one
 * or more end to end).  A names chunk among them covers its boot: its
 * frames are named already (an incident of an incident). */
int fr_kernel_names_collector_add(struct fr_kernel_names_collector *c, const uint8_t *chunks, size_t len);
/* Looks up what was added so far in the snapshots (loaded now, kept
 * until the end): the daemon resolves the window's chunks when it writes
 * them ahead, so that finishing, on an incident's critical path, has only
 * the chunks added since to look up. */
int fr_kernel_names_collector_resolve(struct fr_kernel_names_collector *c);
/* Builds the names chunks for what was added so far now, and keeps them
 * (one boot only): building takes ~0.7 ms (a compression context, a
 * megabyte of chunk builder), and finishing is on an incident's critical
 * path.  Finishing takes them as they are when nothing was added since
 * but later chunks without new kernel addresses: only their headers are
 * made again, to come after and span those chunks. */
int fr_kernel_names_collector_prepare(struct fr_kernel_names_collector *c);
/* The names chunks for what was added, end to end, into *ret (malloc'd;
 * NULL and 0 when there are none), seqnums after the last chunk added.
 * The collector is empty afterwards. */
int fr_kernel_names_collector_finish(struct fr_kernel_names_collector *c, uint8_t **ret, size_t *ret_len);
/* @ks (NULL: none) names the frames of boot @boot_id instead of that
 * boot's snapshot in the store, which is then not loaded (parsing one
 * takes ~20 ms): a table the caller holds that names every frame as the
 * snapshot does, the daemon's.  Lent: it must outlive the collector's
 * use of it.  Only with a store set (no store: nothing is named). */
void fr_kernel_names_collector_lend_ksyms(struct fr_kernel_names_collector *c, const uint8_t boot_id[16],
					  const struct fr_ksyms *ks);
void fr_kernel_names_collector_stats(const struct fr_kernel_names_collector *c, struct fr_kernel_names_stats *ret);

/* The names chunks of a window of an incident file, read once: the
 * window may drop chunks as it goes, these are needed to its end. */
struct fr_kernel_names;
/* Loads those of @refs (cpu FR_CPU_NAMES; none: *ret NULL).  A damaged
 * one is left out (its frames unnamed), counted in *ret_damaged if not
 * NULL (a window counts it when it loads it as one of its chunks). */
int fr_kernel_names_load(struct fr_store_reader *r, const struct fr_chunk_ref *refs, size_t n,
			 struct fr_kernel_names **ret, uint64_t *ret_damaged);
struct fr_kernel_names *fr_kernel_names_free(struct fr_kernel_names *kn);
/* The kernel functions named for @boot_id (pid 0 symbols), or NULL. */
const struct fr_symtab *fr_kernel_names_find(const struct fr_kernel_names *kn, const uint8_t boot_id[16]);

#endif
