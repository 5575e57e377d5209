/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the input is a decompressed chunk payload, a stream of
 * encoded records; decode until the end or the first malformed record, as
 * a chunk of each format would be read (without and with the chunk flags
 * that add fields), and again as the columns of a chunk that has them,
 * one record at a time, in batches, and without rows.  With
 * FR_CHUNK_INCOMPAT_RECORD_EXT, a record of a type not known is skipped
 * (decode returns 1): every reading skips the same ones. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "store-format.h"
#include "symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_all(const uint8_t *data, size_t size, uint32_t incompat_flags)
{
	struct fr_codec_state st = { .incompat_flags = incompat_flags };
	struct fr_symtab t = {};
	struct fr_record r;
	size_t pos = 0;

	int k;

	/* first pass: the code descriptions, as a reader collects them */
	while (pos < size && (k = fr_record_decode(&st, data, size, &pos, &r)) >= 0)
		if (k == 0)
			(void)fr_symtab_add(&t, &r);
	fr_symtab_finish(&t);
	st = (struct fr_codec_state){ .incompat_flags = incompat_flags };
	pos = 0;
	while (pos < size && (k = fr_record_decode(&st, data, size, &pos, &r)) >= 0) {
		if (k == 1)
			continue; /* a type not known: skipped */
		/* touch what a printer would read */
		volatile char sink = 0;
		if (r.type == FR_REC_EXEC && r.exec.filename_len)
			sink ^= r.exec.filename[r.exec.filename_len - 1];
		if (r.type == FR_REC_PROCESS && r.process.args_len)
			sink ^= r.process.args[r.process.args_len - 1];
		if (fr_record_type_has_stack(r.type)) {
			uint64_t addr[FR_SAMPLE_FRAMES_MAX];
			int n = fr_record_frames(&r, addr, FR_SAMPLE_FRAMES_MAX);
			char buf[512];
			for (int i = 0; i < n; i++) {
				struct fr_frame f;
				fr_symtab_resolve(&t, NULL, &r, (unsigned)i, addr[i], &f);
				sink ^= fr_frame_name(&f, true, buf, sizeof(buf))[0];
				if (fr_frame_module(&f, buf, sizeof(buf)))
					sink ^= buf[0];
			}
		}
		if (r.type == FR_REC_OFFCPU && r.sched.syscall_nr < -1)
			__builtin_trap(); /* the decoder refuses those */
		(void)sink;
	}
	fr_symtab_done(&t);
}

/* Columns read in batches of 5 (fr_record_iter_read()) must give what
 * one record at a time gave: @n records, @rows_len bytes of @rows. */
static void columns_batched(const uint8_t *data, size_t size, uint32_t incompat_flags, unsigned n,
			    const uint8_t *rows, size_t rows_len)
{
	size_t len = size - FR_REC_STREAM_TABLE, at[5], got, total = 0;
	uint8_t *again = malloc(len ? len : 1);
	struct fr_record_iter it;
	struct fr_record r[5];

	if (!again)
		return;
	if (fr_record_iter_init(&it, incompat_flags | FR_CHUNK_INCOMPAT_STREAMS, data, size, again, len) != 0)
		__builtin_trap(); /* it did the first time */
	do {
		got = fr_record_iter_read(&it, r, sizeof(r[0]), at, 5);
		total += got;
	} while (got == 5);
	/* one at a time stopped at the end (not a failure): a batch may
	 * have gone on to fail there, with the same records before */
	if (total != n || it.rows.len != rows_len || memcmp(again, rows, rows_len) != 0)
		__builtin_trap();
	free(again);
}

/* @r encoded again (as a row, alone): its bytes in *@out (malloc'ed), or
 * a negative length when it does not encode. */
static int encode_again(const struct fr_record *r, uint32_t incompat_flags, uint8_t **out)
{
	struct fr_codec_state st = { .incompat_flags = incompat_flags, .prev_ts = r->ts };
	size_t cap = fr_record_max_encoded_size(r);
	uint64_t addr[FR_SAMPLE_FRAMES_MAX], waddr[FR_SAMPLE_FRAMES_MAX];
	struct fr_record c = *r;

	*out = NULL;
	if (fr_record_type_has_stack(r->type)) {
		/* decoded, a sample (an offcpu record) keeps its frames
		 * encoded: as input again */
		int n = fr_record_frames(r, addr, FR_SAMPLE_FRAMES_MAX);
		if (n < 0 || n != r->stack.kernel_frames + r->stack.user_frames)
			return -2;
		c.stack.kframes = addr;
		c.stack.uframes = addr + r->stack.kernel_frames;
	}
	/* and an offcpu record's waker's */
	if (r->type == FR_REC_OFFCPU && r->sched.waker.context) {
		struct fr_record v;
		int n;
		fr_record_waker_view(r, &v);
		n = fr_record_frames(&v, waddr, FR_SAMPLE_FRAMES_MAX);
		if (n < 0 || n != v.stack.kernel_frames + v.stack.user_frames)
			return -2;
		c.sched.waker.stack.kframes = waddr;
		c.sched.waker.stack.uframes = waddr + v.stack.kernel_frames;
	}
	*out = malloc(cap);
	return *out ? fr_record_encode(&st, &c, *out, cap, 0) : -1;
}

/* Columns read without rows (records pointing into the columns, as frctl
 * reads them for lines only) must give the records the rows hold: @n of
 * them, each the same once encoded again. */
static void columns_no_rows(const uint8_t *data, size_t size, uint32_t incompat_flags, unsigned n,
			    const uint8_t *rows, size_t rows_len)
{
	struct fr_codec_state st = { .incompat_flags = incompat_flags };
	struct fr_record_iter it;
	struct fr_record r[5], want;
	size_t at[5], got, total = 0, pos = 0;

	if (fr_record_iter_init(&it, incompat_flags | FR_CHUNK_INCOMPAT_STREAMS, data, size, NULL,
				size - FR_REC_STREAM_TABLE) != 0)
		__builtin_trap(); /* it did with rows */
	do {
		got = fr_record_iter_read(&it, r, sizeof(r[0]), at, 5);
		for (size_t i = 0; i < got; i++) {
			uint8_t *a = NULL, *b = NULL;
			int na, nb;
			int k;
			while ((k = fr_record_decode(&st, rows, rows_len, &pos, &want)) == 1)
				; /* the types not known, skipped */
			if (k != 0)
				__builtin_trap(); /* more records than the rows hold */
			na = encode_again(&r[i], incompat_flags, &a);
			nb = encode_again(&want, incompat_flags, &b);
			if (na != nb || (na > 0 && memcmp(a, b, (size_t)na) != 0) || r[i].ts != want.ts)
				__builtin_trap();
			free(a);
			free(b);
		}
		total += got;
	} while (got == 5);
	if (total != n)
		__builtin_trap();
}

/* The input as a chunk's content in columns: records are read until one
 * does not decode or the content is used up; used up, the rows they
 * became must decode as the same number of records, to the byte. */
static void columns_all(const uint8_t *data, size_t size, uint32_t incompat_flags)
{
	struct fr_record_iter it;
	struct fr_record r;
	uint8_t *rows;
	size_t len, at;
	unsigned n = 0;

	if (size < FR_REC_STREAM_TABLE)
		return;
	len = size - FR_REC_STREAM_TABLE;
	rows = malloc(len ? len : 1);
	if (!rows)
		return;
	if (fr_record_iter_init(&it, incompat_flags | FR_CHUNK_INCOMPAT_STREAMS, data, size, rows, len) == 0) {
		while (!fr_record_iter_done(&it) && fr_record_iter_next(&it, &r, &at) == 0)
			n++;
		columns_batched(data, size, incompat_flags, n, rows, it.rows.len);
		columns_no_rows(data, size, incompat_flags, n, rows, it.rows.len);
		if (fr_record_iter_done(&it)) {
			struct fr_codec_state st = { .incompat_flags = incompat_flags };
			size_t pos = 0;
			unsigned left = n;
			int k;
			while (pos < len && (k = fr_record_decode(&st, rows, len, &pos, &r)) >= 0)
				left -= k == 0 && left > 0;
			if (left != 0 || pos != len)
				__builtin_trap(); /* the rows are not what was read */
			decode_all(rows, len, incompat_flags);
		}
	}
	free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode_all(data, size, 0);
	decode_all(data, size, FR_CHUNK_INCOMPAT_KNOWN);
	columns_all(data, size, 0);
	columns_all(data, size, FR_CHUNK_INCOMPAT_KNOWN);
	return 0;
}
