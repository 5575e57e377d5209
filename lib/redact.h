/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Redaction: what frctl --redact cuts from a file before it leaves the
 * host (a bundle, a report), so an incident can go into a ticket without
 * the secrets people put on command lines.  It works on decoded records
 * and on chunks, which it makes again from their records without what it
 * cut; the store and the incident files it reads are never changed.
 */
#ifndef FR_REDACT_H
#define FR_REDACT_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* The classes of what is cut (the redact group of flightrec.conf). */
enum {
	FR_REDACT_ARGS = 1u << 0,  /* exec and process arguments past argv[0] */
	FR_REDACT_HOME = 1u << 1,  /* paths under /home and /root */
	FR_REDACT_TCP = 1u << 2,   /* TCP addresses */
	FR_REDACT_MARKS = 1u << 3, /* mark and annotation texts, freeze reasons */
	FR_REDACT_URLS = 1u << 4,  /* user, password and query of URLs in metadata */
	FR_REDACT_ALL = (1u << 5) - 1,
};

/* What stands where something was cut. */
#define FR_REDACT_MARKER "[redacted]"

/* "args,home,tcp,marks,urls" (any of them, comma-separated) into classes;
 * -EINVAL with *ret_bad pointing at the name not known. */
int fr_redact_parse(const char *list, unsigned *ret, const char **ret_bad);
/* The name of one class ("args", ...). */
const char *fr_redact_class_name(unsigned class);

/* How many records (and metadata values) had something cut, by class. */
struct fr_redact_counts {
	uint64_t args, home, tcp, marks, urls;
	uint64_t chunks; /* chunks made again */
	uint64_t chunks_left_out; /* chunks that did not decode */
};

struct fr_redactor;
int fr_redactor_new(unsigned classes, struct fr_redactor **ret);
struct fr_redactor *fr_redactor_free(struct fr_redactor *rd);
unsigned fr_redactor_classes(const struct fr_redactor *rd);
const struct fr_redact_counts *fr_redactor_counts(const struct fr_redactor *rd);

/* Cuts what the classes say from @r: its strings then point into @rd
 * until the next call (TCP addresses are zeroed and the record flagged
 * FR_REC_F_ADDR_REDACTED).  Returns 1 when something was cut, else 0. */
int fr_redact_record(struct fr_redactor *rd, struct fr_record *r);

/* A chunk as stored (@len bytes): 0 with *ret NULL when nothing in it is
 * cut, else 0 with *ret (malloc'd, *ret_len bytes) the chunk made again
 * from its records with fr_redact_record() applied (more than one chunk
 * when they no longer fit in one), with its seqnum, boot and clock
 * offsets.  A chunk that does not verify or decode is left out: 0 with
 * *ret (malloc'd) and *ret_len 0.  An
 * fr_incident_chunk_filter (incident.h), @userdata being @rd. */
int fr_redact_chunk(void *userdata, const uint8_t *chunk, size_t len, uint8_t **ret, size_t *ret_len);

/* The same over JSON metadata (an incident's or a bundle's): its
 * "argv" arrays, "saddr"/"daddr", "text" and "reason" strings, and paths
 * in every string. */
struct json_object;
void fr_redact_json(struct fr_redactor *rd, struct json_object *o);

/* What a file's metadata says of it: {"classes": [...], "marker":
 * "[redacted]", "counts": {"args": N, "home": N, "tcp": N, "marks": N}
 * (records and metadata values with something cut, of the classes
 * cut), "chunks_rewritten": N}. */
struct json_object *fr_redact_summary(const struct fr_redactor *rd);

#endif
