/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Store round trip through the real io_uring writer, no privileges needed:
 * chunks written are read back in time order; writing five times the bound
 * keeps the segments within it and the newest records intact; a torn tail is
 * cut on reopen without losing good chunks; a second writer is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "chunk.h"
#include "store-reader.h"
#include "store-writer.h"
#include "store.h"
#include "window.h"
#include "test.h"
#include "test-segments.h"

#define BOUND (1u << 20)
#define NSEG 4
#define CHUNK (16u << 10)

static uint64_t boottime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t seq; /* record id, carried in pid */
static unsigned long long rng = 88172645463325252ULL;

static uint64_t xorshift(void)
{
	return test_xorshift(&rng);
}

/* Writes @n records across two CPUs' builders. */
static void write_records(struct fr_store_writer *w, ZSTD_CCtx *cctx, unsigned n)
{
	struct fr_chunk_builder *b[2];
	uint8_t boot[16] = { 1, 2, 3 };

	for (unsigned c = 0; c < 2; c++)
		CHECK_EQ(fr_chunk_builder_new(c, CHUNK, &b[c]), 0);
	for (unsigned i = 0; i < n; i++) {
		struct fr_record r = { .type = FR_REC_SYSCALL, .ts = boottime() };
		unsigned c = i % 2;
		r.pid = (uint32_t)++seq;
		r.tid = r.pid;
		snprintf(r.comm, sizeof(r.comm), "t%u", (unsigned)(xorshift() % 1000));
		r.comm_len = (uint8_t)strlen(r.comm);
		r.syscall.nr = (uint32_t)(xorshift() % 300);
		r.syscall.duration_ns = xorshift() % 5000000000ULL; /* barely compressible */
		r.syscall.ret = (int64_t)(xorshift() % 100000);
		if (fr_chunk_builder_add(b[c], &r) == -ENOBUFS) {
			void *buf;
			size_t len;
			CHECK_EQ(fr_chunk_builder_close(b[c], cctx, 0, boot, &buf, &len), 0);
			CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
			fr_store_writer_submit(w);
			fr_store_writer_process(w);
			CHECK_EQ(fr_chunk_builder_add(b[c], &r), 0);
		}
	}
	for (unsigned c = 0; c < 2; c++) {
		void *buf;
		size_t len;
		if (fr_chunk_builder_count(b[c]) > 0) {
			CHECK_EQ(fr_chunk_builder_close(b[c], cctx, 0, boot, &buf, &len), 0);
			CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
		}
		fr_chunk_builder_free(b[c]);
	}
	CHECK_EQ(fr_store_writer_sync(w), 0);
	CHECK_EQ(fr_store_writer_drain(w), 0);
}

static uint64_t segments_bytes_max(const char *dir, uint64_t seg_max)
{
	char path[512];
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/segments", dir);
	d = opendir(path);
	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		struct stat st;
		char p[1024];
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (stat(p, &st) == 0) {
			sum += (uint64_t)st.st_blocks * 512; /* what du counts */
			CHECK((uint64_t)st.st_size <= seg_max);
		}
	}
	if (d)
		closedir(d);
	return sum;
}

static uint64_t segments_bytes(const char *dir)
{
	return segments_bytes_max(dir, BOUND / NSEG);
}

/* Reads everything; checks order, and that ids form one contiguous run
 * ending at the last id written.  Returns the number of records. */
static size_t check_contents(const char *dir, uint64_t *ret_first)
{
	struct fr_store_reader *r;
	struct fr_window *w;
	size_t n;

	CHECK_EQ(fr_store_reader_open(dir, &r), 0);
	CHECK_EQ(fr_window_load(r, &(struct fr_window_query){ .until_ns = UINT64_MAX }, &w), 0);
	n = w->n;
	CHECK(n > 0);
	CHECK_EQ(w->chunks_damaged, 0);
	/* the two CPUs interleave; sorted by time, ids must be increasing */
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		struct fr_window_entry e;
		CHECK_EQ(fr_window_get(w, i, &e), 0);
		uint64_t id = e.r.pid;
		CHECK_EQ(e.wall_ns, w->items[i].wall_ns);
		if (i)
			CHECK(w->items[i].wall_ns >= w->items[i - 1].wall_ns);
		lo = id < lo ? id : lo;
		hi = id > hi ? id : hi;
	}
	CHECK_EQ(hi, seq);
	/* retention drops whole segments, so the survivors are a run per CPU;
	 * with alternating CPUs the run overall may be ragged by a chunk */
	CHECK(hi - lo + 1 >= n);
	CHECK(hi - lo + 1 <= n + CHUNK); /* no more missing than one chunk's worth */
	*ret_first = lo;
	fr_window_free(w);
	fr_store_reader_free(r);
	return n;
}

static int count_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/fr-test-store-XXXXXX";
	struct fr_store_params p = { .size = BOUND, .nsegments = NSEG, .max_chunk = CHUNK + 4096 };
	struct fr_store_writer *w, *w2;
	struct fr_store_writer_stats st;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint64_t first;
	size_t n1;

	CHECK(mkdtemp(dir) != NULL);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);

	/* 1. a small round trip */
	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w2), -EBUSY);
	write_records(w, cctx, 1000);
	n1 = check_contents(dir, &first); /* readable while the writer is open */
	CHECK_EQ(n1, 1000);
	CHECK_EQ(first, 1);

	/* 2. five times the bound */
	while (1) {
		fr_store_writer_get_stats(w, &st);
		if (st.bytes_written >= 5ULL * BOUND)
			break;
		write_records(w, cctx, 5000);
	}
	CHECK_EQ(st.chunks_failed, 0);
	CHECK(segments_bytes(dir) <= BOUND);
	check_contents(dir, &first);
	CHECK(first > 1); /* the oldest went */
	fr_store_writer_close(w);

	/* 3. a torn tail: garbage after the last chunk of the newest segment */
	{
		struct fr_store_reader *r;
		struct fr_store_reader_stats rs;
		char path[600];
		test_newest_segment(dir, NSEG, path, sizeof(path));
		int fd = open(path, O_WRONLY | O_APPEND);
		struct fr_chunk_header junk;
		memset(&junk, 0xab, sizeof(junk));
		memcpy(junk.magic, FR_CHUNK_MAGIC, FR_MAGIC_LEN);
		CHECK(write(fd, &junk, sizeof(junk)) == (ssize_t)sizeof(junk));
		close(fd);

		CHECK_EQ(fr_store_reader_open(dir, &r), 0);
		CHECK_EQ(fr_store_reader_foreach(r, count_cb, NULL), 0);
		fr_store_reader_get_stats(r, &rs);
		CHECK(rs.chunks_damaged >= 1); /* the torn tail is seen, and skipped */
		fr_store_reader_free(r);

		CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
		write_records(w, cctx, 3000);
		fr_store_writer_close(w);
		check_contents(dir, &first);
		CHECK(segments_bytes(dir) <= BOUND);
	}

	/* 4. a version from the future is refused, not misread */
	{
		struct fr_chunk_header h = {};
		struct fr_chunk_info ci;
		memcpy(h.magic, FR_CHUNK_MAGIC, FR_MAGIC_LEN);
		h.header_size = sizeof(h);
		h.version = FR_STORE_VERSION + 1;
		h.header_crc = fr_crc32(&h, offsetof(struct fr_chunk_header, header_crc));
		CHECK_EQ(fr_chunk_header_parse(&h, &ci), -EPROTONOSUPPORT);
		h.version = FR_STORE_VERSION;
		h.incompat_flags = 1u << 31;
		h.header_crc = fr_crc32(&h, offsetof(struct fr_chunk_header, header_crc));
		CHECK_EQ(fr_chunk_header_parse(&h, &ci), -EPROTONOSUPPORT);

		/* such a chunk at the end of the newest segment: the writer
		 * refuses the store rather than cut it as a torn tail (a
		 * daemon rolled back after a newer one wrote there) */
		char path[600];
		struct stat before, after;
		test_newest_segment(dir, NSEG, path, sizeof(path));
		int fd = open(path, O_WRONLY | O_APPEND);
		CHECK(fd >= 0 && write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h));
		CHECK(fstat(fd, &before) == 0);
		close(fd);
		CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), -EPROTONOSUPPORT);
		CHECK(stat(path, &after) == 0 && after.st_size == before.st_size);
		CHECK(truncate(path, before.st_size - (off_t)sizeof(h)) == 0);
		CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
		fr_store_writer_close(w);
	}

	/* 5. a smaller store.size, then fewer segments: the bound holds at once,
	 * what is left reads back */
	{
		struct fr_store_params small = { .size = BOUND / 2, .nsegments = NSEG, .max_chunk = CHUNK + 4096 };
		struct fr_store_writer_stats ws;
		CHECK_EQ(fr_store_writer_open(dir, &small, NULL, NULL, &w), 0);
		fr_store_writer_get_stats(w, &ws);
		CHECK(ws.segments_trimmed > 0);
		/* old segments keep their size until reused; the sum is bounded */
		CHECK(segments_bytes_max(dir, UINT64_MAX) <= BOUND / 2);
		for (int round = 0; round < 8; round++) {
			write_records(w, cctx, 1500);
			uint64_t used = segments_bytes_max(dir, UINT64_MAX);
			CHECK(used <= BOUND / 2);
			if (used > BOUND / 2)
				fprintf(stderr, "round %d: %" PRIu64 " bytes in the segments, %" PRIu64 " over the bound\n", round,
					used, used - BOUND / 2);
		}
		fr_store_writer_close(w);
		check_contents(dir, &first); /* the newest survive, oldest first out */

		small.nsegments = 2;
		small.size = BOUND / 4;
		CHECK_EQ(fr_store_writer_open(dir, &small, NULL, NULL, &w), 0);
		fr_store_writer_get_stats(w, &ws);
		CHECK_EQ(ws.segments_removed, NSEG - 2);
		CHECK(segments_bytes_max(dir, UINT64_MAX) <= BOUND / 4);
		write_records(w, cctx, 3000);
		fr_store_writer_close(w);
		CHECK(segments_bytes_max(dir, UINT64_MAX) <= BOUND / 4);
		check_contents(dir, &first);
	}

	/* 6. an unknown compatible flag is ignored */
	{
		struct fr_chunk_header h = {};
		struct fr_chunk_info ci;
		memcpy(h.magic, FR_CHUNK_MAGIC, FR_MAGIC_LEN);
		h.header_size = sizeof(h);
		h.version = FR_STORE_VERSION;
		h.compat_flags = 1u << 30;
		h.nrecords = 1;
		h.payload_size = 1;
		h.header_crc = fr_crc32(&h, offsetof(struct fr_chunk_header, header_crc));
		CHECK_EQ(fr_chunk_header_parse(&h, &ci), 0);
	}

	ZSTD_freeCCtx(cctx);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ(system(cmd), 0);
	return TEST_DONE();
}
