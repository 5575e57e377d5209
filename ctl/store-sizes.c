/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl dump --sizes: where a window's bytes on disk go, by record type
 * and by field stream, to see what fills the store and what to cut.
 *
 * A chunk is one zstd frame of all its streams, so what each stream costs
 * compressed is not in the file: each stream of each chunk is compressed
 * again alone, at the configured level, and the chunk's payload is split
 * in proportion.  Within a stream, a record type's share is its share of
 * the stream's bytes before compression.  Estimates, and said to be.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../lib/chunk.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/store-format.h"
#include "../lib/store-reader.h"
#include "frctl-error.h"
#include "store-sizes.h"

#define NTYPES 256
/* the streams, and the rows of chunks written before columns */
#define NSTREAMS (FR_REC_STREAMS + 1)
#define ROWS FR_REC_STREAMS

struct sizes {
	struct fr_store_reader *r;
	const struct fr_window_query *q;
	int level;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	uint8_t *scratch, *zbuf;
	size_t scratch_cap, zbuf_cap;
	uint64_t (*m)[NSTREAMS]; /* this chunk's raw bytes by type and stream */

	uint64_t chunks, chunks_damaged, records_bad;
	uint64_t stored, payload, raw; /* chunks as stored, their payloads, content */
	uint64_t first_wall, last_wall;
	struct {
		uint64_t records, raw;
		double disk;
		double sdisk[NSTREAMS]; /* disk by stream */
	} type[NTYPES];
	struct {
		uint64_t raw;
		double disk;
	} stream[NSTREAMS];
};

static int grow(uint8_t **p, size_t *cap, size_t need)
{
	uint8_t *n;

	if (need <= *cap)
		return 0;
	n = realloc(*p, need);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = need;
	return 0;
}

/* Compressed alone, the bytes of each stream of a chunk; their sum. */
static int streams_alone(struct sizes *s, const struct fr_record_iter *it, size_t alone[NSTREAMS], size_t *sum)
{
	*sum = 0;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		size_t len = (size_t)(it->cur[i].end - it->cur[i].p), z;

		alone[i] = 0;
		if (!len)
			continue;
		if (grow(&s->zbuf, &s->zbuf_cap, ZSTD_compressBound(len)) < 0)
			return -ENOMEM;
		z = ZSTD_compressCCtx(s->cctx, s->zbuf, s->zbuf_cap, it->cur[i].p, len, s->level);
		if (ZSTD_isError(z))
			return -EIO;
		alone[i] = z;
		*sum += z;
	}
	return 0;
}

static int chunk_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct sizes *s = userdata;
	const struct fr_chunk_info *ci = &ref->info;
	uint64_t first = ci->first_ts + (uint64_t)ci->realtime_offset, last = ci->last_ts + (uint64_t)ci->realtime_offset;
	bool columns = ci->incompat_flags & FR_CHUNK_INCOMPAT_STREAMS;
	struct fr_record_iter it;
	struct fr_record rec;
	size_t alone[NSTREAMS] = {}, sum = 0, len, pos;
	uint64_t len_of[NSTREAMS] = {};
	_cleanup_free_ uint8_t *buf = NULL;
	int k;

	if (s->q->one_boot && memcmp(ci->boot_id, s->q->boot_id, sizeof(ci->boot_id)) != 0)
		return 0;
	if (last < s->q->since_ns || first > s->q->until_ns)
		return 0;
	if (fr_store_reader_read_chunk(s->r, ref, &buf, &len) < 0 ||
	    grow(&s->scratch, &s->scratch_cap, fr_chunk_content_size(ci)) < 0 ||
	    fr_chunk_payload_decode(s->dctx, ci, buf + sizeof(struct fr_chunk_header), NULL, s->scratch, &it) < 0) {
		s->chunks_damaged++;
		return 0;
	}
	if (columns) {
		k = streams_alone(s, &it, alone, &sum);
		if (k < 0)
			return k;
		for (unsigned i = 0; i < FR_REC_STREAMS; i++)
			len_of[i] = (uint64_t)(it.cur[i].end - it.cur[i].p);
	} else {
		alone[ROWS] = sum = 1;
		len_of[ROWS] = (uint64_t)(it.cur[0].end - it.cur[0].p);
	}
	memset(s->m, 0, sizeof(*s->m) * NTYPES);
	for (uint32_t n = 0; n < ci->nrecords; n++) {
		const uint8_t *before[FR_REC_STREAMS];

		for (unsigned i = 0; i < FR_REC_STREAMS; i++)
			before[i] = it.cur[i].p;
		if (fr_record_iter_next(&it, &rec, &pos) < 0) {
			/* (the end: types skipped) */
			s->records_bad += !fr_record_iter_done(&it);
			break;
		}
		s->type[rec.type % NTYPES].records++;
		if (!columns)
			s->m[rec.type % NTYPES][ROWS] += (uint64_t)(it.cur[0].p - before[0]);
		else
			for (unsigned i = 0; i < FR_REC_STREAMS; i++)
				s->m[rec.type % NTYPES][i] += (uint64_t)(it.cur[i].p - before[i]);
	}
	/* the payload split between the streams, each stream's part between
	 * the types that wrote it */
	for (unsigned i = 0; i < NSTREAMS; i++) {
		double disk = sum ? (double)ci->payload_size * (double)alone[i] / (double)sum : 0;

		s->stream[i].raw += len_of[i];
		s->stream[i].disk += disk;
		for (unsigned t = 0; t < NTYPES && len_of[i]; t++)
			if (s->m[t][i]) {
				double share = disk * (double)s->m[t][i] / (double)len_of[i];

				s->type[t].raw += s->m[t][i];
				s->type[t].disk += share;
				s->type[t].sdisk[i] += share;
			}
	}
	s->chunks++;
	s->stored += fr_chunk_disk_size(ci);
	s->payload += ci->payload_size;
	s->raw += ci->raw_size;
	if (!s->first_wall || first < s->first_wall)
		s->first_wall = first;
	s->last_wall = MAX(s->last_wall, last);
	return 0;
}

struct row {
	const char *name;
	uint64_t records, raw;
	double disk;
	const double *sdisk; /* a type's disk bytes by stream */
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->disk < y->disk ? 1 : x->disk > y->disk ? -1 : strcmp(x->name, y->name);
}

/* The types that have records, and the streams that have bytes, largest first. */
static size_t type_rows(const struct sizes *s, struct row *out)
{
	size_t n = 0;

	for (unsigned t = 0; t < NTYPES; t++)
		if (s->type[t].records)
			out[n++] = (struct row){ fr_record_type_name((uint16_t)t), s->type[t].records, s->type[t].raw,
						 s->type[t].disk, s->type[t].sdisk };
	qsort(out, n, sizeof(*out), cmp_row);
	return n;
}

static size_t stream_rows(const struct sizes *s, struct row *out)
{
	size_t n = 0;

	for (unsigned i = 0; i < NSTREAMS; i++)
		if (s->stream[i].raw)
			out[n++] = (struct row){ i == ROWS ? "rows" : fr_record_stream_name(i), 0, s->stream[i].raw,
						 s->stream[i].disk, NULL };
	qsort(out, n, sizeof(*out), cmp_row);
	return n;
}

static double span_s(const struct sizes *s)
{
	return s->last_wall > s->first_wall ? (double)(s->last_wall - s->first_wall) / 1e9 : 0;
}

static void print_text(const struct sizes *s, FILE *out)
{
	struct row rows[NTYPES];
	double span = span_s(s), all = (double)s->payload;
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t records = 0;
	size_t n;

	for (unsigned t = 0; t < NTYPES; t++)
		records += s->type[t].records;
	fprintf(out, "%" PRIu64 " chunks, %" PRIu64 " records, over %.0f s\n", s->chunks, records, span);
	fprintf(out, "on disk %s (%s/s); payloads %s, compressed from %s (%.1fx); chunk headers and padding %s\n",
		fr_format_size(s->stored, a, sizeof(a)),
		fr_format_size(span > 0 ? (uint64_t)((double)s->stored / span) : 0, b, sizeof(b)),
		fr_format_size(s->payload, c, sizeof(c)), fr_format_size(s->raw, d, sizeof(d)),
		s->payload ? (double)s->raw / (double)s->payload : 0.0,
		fr_format_size(s->stored - s->payload, e, sizeof(e)));
	if (s->chunks_damaged || s->records_bad)
		fprintf(out, "not counted: %" PRIu64 " damaged chunks, the rest of %" PRIu64 " chunks after a record "
			"that did not decode\n", s->chunks_damaged, s->records_bad);
	fprintf(out, "\n%-10s %10s %12s %8s %12s %8s %6s\n", "TYPE", "RECORDS", "RAW", "RAW/REC", "DISK~", "DISK/REC",
		"SHARE");
	n = type_rows(s, rows);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%-10s %10" PRIu64 " %12" PRIu64 " %8.1f %12.0f %8.2f %5.1f%%\n", rows[i].name,
			rows[i].records, rows[i].raw, (double)rows[i].raw / (double)rows[i].records, rows[i].disk,
			rows[i].disk / (double)rows[i].records, all > 0 ? 100 * rows[i].disk / all : 0.0);
	fprintf(out, "\n%-10s %12s %12s %6s\n", "STREAM", "RAW", "DISK~", "SHARE");
	n = stream_rows(s, rows);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%-10s %12" PRIu64 " %12.0f %5.1f%%\n", rows[i].name, rows[i].raw, rows[i].disk,
			all > 0 ? 100 * rows[i].disk / all : 0.0);
	fprintf(out, "\nRAW: bytes before compression. DISK~: the payload bytes, estimated: each stream of each\n"
		     "chunk compressed alone at zstd level %d gives the stream its share of the chunk's payload,\n"
		     "and a type gets its share of each stream's raw bytes.\n",
		s->level);
}

static struct json_object *rows_json(const struct row *rows, size_t n, const char *key, bool records)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, key, json_object_new_string(rows[i].name));
		if (records)
			json_object_object_add(o, "records", json_object_new_int64((int64_t)rows[i].records));
		json_object_object_add(o, "raw_bytes", json_object_new_int64((int64_t)rows[i].raw));
		json_object_object_add(o, "disk_bytes", json_object_new_int64((int64_t)(rows[i].disk + 0.5)));
		if (rows[i].sdisk) {
			struct json_object *by = json_object_new_object();

			for (unsigned k = 0; k < NSTREAMS; k++)
				if (rows[i].sdisk[k] >= 0.5)
					json_object_object_add(by, k == ROWS ? "rows" : fr_record_stream_name(k),
							       json_object_new_int64((int64_t)(rows[i].sdisk[k] + 0.5)));
			json_object_object_add(o, "disk_bytes_by_stream", by);
		}
		json_object_array_add(a, o);
	}
	return a;
}

static int print_json(const struct sizes *s, FILE *out)
{
	struct row rows[NTYPES];
	struct json_object *o = json_object_new_object();
	uint64_t records = 0;

	if (!o)
		return -ENOMEM;
	for (unsigned t = 0; t < NTYPES; t++)
		records += s->type[t].records;
	json_object_object_add(o, "chunks", json_object_new_int64((int64_t)s->chunks));
	json_object_object_add(o, "records", json_object_new_int64((int64_t)records));
	json_object_object_add(o, "first_ns", json_object_new_int64((int64_t)s->first_wall));
	json_object_object_add(o, "last_ns", json_object_new_int64((int64_t)s->last_wall));
	json_object_object_add(o, "stored_bytes", json_object_new_int64((int64_t)s->stored));
	json_object_object_add(o, "payload_bytes", json_object_new_int64((int64_t)s->payload));
	json_object_object_add(o, "raw_bytes", json_object_new_int64((int64_t)s->raw));
	json_object_object_add(o, "chunks_damaged", json_object_new_int64((int64_t)s->chunks_damaged));
	json_object_object_add(o, "records_bad", json_object_new_int64((int64_t)s->records_bad));
	json_object_object_add(o, "zstd_level", json_object_new_int(s->level));
	json_object_object_add(o, "types", rows_json(rows, type_rows(s, rows), "type", true));
	json_object_object_add(o, "streams", rows_json(rows, stream_rows(s, rows), "stream", false));
	fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}

int frctl_store_sizes(struct fr_store_reader *r, const struct fr_window_query *q, int zstd_level, bool json,
		      FILE *out)
{
	struct sizes *s = calloc(1, sizeof(*s));
	int k = -ENOMEM;

	if (!s)
		goto out;
	s->r = r;
	s->q = q;
	s->level = zstd_level;
	s->cctx = ZSTD_createCCtx();
	s->dctx = ZSTD_createDCtx();
	s->m = calloc(NTYPES, sizeof(*s->m));
	if (!s->cctx || !s->dctx || !s->m)
		goto out;
	k = fr_store_reader_foreach(r, chunk_cb, s);
	if (k < 0)
		goto out;
	if (json)
		k = print_json(s, out);
	else
		print_text(s, out);
out:
	if (k < 0)
		frctl_error("--sizes: %s", strerror(-k));
	if (s) {
		ZSTD_freeCCtx(s->cctx);
		ZSTD_freeDCtx(s->dctx);
		free(s->scratch);
		free(s->zbuf);
		free(s->m);
		free(s);
	}
	return k;
}
