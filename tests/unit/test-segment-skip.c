/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Segment skipping: a window's walk leaves out the segments whose
 * successors' headers say all their records end before the keyframe the
 * window starts from (fr_store_reader_foreach_since).  Through the real
 * writer, a store is written with what could fool it: per-CPU chunks whose
 * times interleave, keyframes every few seconds, the wall clock stepped
 * back and forth (wall times out of order across chunks and segments),
 * and writers closed and reopened, some after a torn tail was cut, so that
 * a segment's summary comes from crash recovery.  For windows starting
 * at every kind of edge, the chunks chosen must be exactly those of the
 * full walk: the same query restricted to the store's only boot, which
 * never skips.  And on a store without clock steps a late window must
 * skip segments, or the test proves nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "chunk.h"
#include "macro.h"
#include "store-format.h"
#include "store-reader.h"
#include "store-writer.h"
#include "window.h"
#include "test.h"
#include "test-segments.h"

#define CHUNK (4u << 10)
#define NSEG 8
#define MS 1000000ULL
#define SEC 1000000000ULL

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static const uint8_t boot[16] = { 4, 2 };
static const struct fr_store_params params = { .size = 1u << 20, .nsegments = NSEG, .max_chunk = CHUNK + 4096 };

static uint64_t rnd(uint64_t n)
{
	return test_xorshift(&rng) % n;
}

struct gen {
	struct fr_store_writer *w;
	ZSTD_CCtx *cctx;
	struct fr_chunk_builder *cpu[2];
	uint64_t ts;        /* boottime of the next record */
	int64_t offset;     /* wall = ts + offset, as the chunk closes */
	uint64_t next_kf;
	bool steps;         /* step the wall clock now and then */
};

static void append(struct gen *g, struct fr_chunk_builder *b)
{
	void *buf;
	size_t len;

	if (fr_chunk_builder_count(b) == 0)
		return;
	CHECK_EQ(fr_chunk_builder_close(b, g->cctx, 0, boot, &buf, &len), 0);
	((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64((uint64_t)g->offset);
	CHECK_EQ(fr_store_writer_append(g->w, buf, len), 0);
	fr_store_writer_submit(g->w);
	fr_store_writer_process(g->w);
}

static void keyframe(struct gen *g)
{
	struct fr_chunk_builder *b;

	CHECK_EQ(fr_chunk_builder_new(FR_CPU_META, CHUNK, &b), 0);
	for (uint32_t pid = 100; pid < 108; pid++) {
		struct fr_record r = { .type = FR_REC_PROCESS, .ts = g->ts, .pid = pid, .tid = pid };

		r.comm_len = (uint8_t)snprintf(r.comm, sizeof(r.comm), "k%u", pid);
		r.process.exe = "/bin/k";
		r.process.exe_len = 6;
		CHECK_EQ(fr_chunk_builder_add(b, &r), 0);
	}
	append(g, b);
	fr_chunk_builder_free(b);
}

/* @n records on two CPUs, a keyframe every 2 s of record time. */
static void write_records(struct gen *g, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned c = (unsigned)rnd(2);
		struct fr_record r = { .type = FR_REC_SYSCALL, .ts = g->ts, .pid = 100 + (uint32_t)rnd(8) };

		r.tid = r.pid;
		r.comm_len = (uint8_t)snprintf(r.comm, sizeof(r.comm), "p%u", r.pid);
		r.syscall.nr = (uint32_t)rnd(300);
		r.syscall.duration_ns = rnd(1000000);
		if (g->ts >= g->next_kf) {
			keyframe(g);
			g->next_kf = g->ts + 2 * SEC;
		}
		/* chunks close at different times: their spans interleave */
		if (fr_chunk_builder_add(g->cpu[c], &r) == -ENOBUFS || rnd(40) == 0) {
			append(g, g->cpu[c]);
			(void)fr_chunk_builder_add(g->cpu[c], &r);
		}
		g->ts += 1 + rnd(4 * MS);
		/* NTP steps, or an administrator's date: up to 20 s either way */
		if (g->steps && rnd(3000) == 0)
			g->offset += (int64_t)rnd(40 * SEC) - (int64_t)(20 * SEC);
	}
}

static void open_gen(struct gen *g, const char *dir)
{
	CHECK_EQ(fr_store_writer_open(dir, &params, NULL, NULL, &g->w), 0);
	for (unsigned c = 0; c < 2; c++)
		CHECK_EQ(fr_chunk_builder_new(c, CHUNK, &g->cpu[c]), 0);
}

static void close_gen(struct gen *g)
{
	for (unsigned c = 0; c < 2; c++) {
		append(g, g->cpu[c]);
		fr_chunk_builder_free(g->cpu[c]);
	}
	fr_store_writer_close(g->w);
}

static int cmp_seq(const void *a, const void *b)
{
	const struct fr_chunk_ref *x = a, *y = b;
	return x->info.seqnum < y->info.seqnum ? -1 : x->info.seqnum > y->info.seqnum;
}

#define SEQ_MAX 4096

struct walls {
	uint64_t *v;
	size_t n, cap;
	/* per segment seqnum, of its chunks: the latest last record, the
	 * latest keyframe */
	uint64_t last[SEQ_MAX], kf[SEQ_MAX];
};

static int walls_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct walls *w = userdata;
	uint64_t seg = ref->info.seqnum >> 32, off = (uint64_t)ref->info.realtime_offset;

	CHECK(seg < SEQ_MAX);
	if (seg < SEQ_MAX) {
		w->last[seg] = MAX(w->last[seg], ref->info.last_ts + off);
		if (ref->info.cpu == FR_CPU_META)
			w->kf[seg] = MAX(w->kf[seg], ref->info.first_ts + off);
	}

	if (w->n + 2 > w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->v = realloc(w->v, w->cap * sizeof(*w->v));
		CHECK(w->v != NULL);
	}
	w->v[w->n++] = ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
	w->v[w->n++] = ref->info.last_ts + (uint64_t)ref->info.realtime_offset;
	return 0;
}

/* Checks windows from @since against the full walk; returns how many
 * segments the last walk skipped. */
static uint64_t check_since(struct fr_store_reader *r, uint64_t since)
{
	struct fr_window_query q = { .since_ns = since, .until_ns = since + 3 * SEC };
	struct fr_chunk_ref *a = NULL, *b = NULL;
	struct fr_store_reader_stats st;
	size_t na = 0, nb = 0;

	CHECK_EQ(fr_window_select(r, &q, &a, &na), 0);
	fr_store_reader_get_stats(r, &st);
	q.one_boot = true;
	memcpy(q.boot_id, boot, sizeof(boot));
	CHECK_EQ(fr_window_select(r, &q, &b, &nb), 0);
	if (na) /* an empty window's list is NULL, which qsort may not take */
		qsort(a, na, sizeof(*a), cmp_seq);
	if (nb)
		qsort(b, nb, sizeof(*b), cmp_seq);
	CHECK_EQ(na, nb);
	for (size_t i = 0; i < na && i < nb; i++)
		if (a[i].info.seqnum != b[i].info.seqnum) {
			fprintf(stderr, "since %llu: chunk %zu is %llx, the full walk's %llx\n",
				(unsigned long long)since, i, (unsigned long long)a[i].info.seqnum,
				(unsigned long long)b[i].info.seqnum);
			CHECK(false);
			break;
		}
	free(a);
	free(b);
	return st.segments_skipped;
}

/* What each segment's header says of the one before it is true of the
 * chunks a reader finds there; returns how many headers said it. */
static unsigned check_summaries(const char *dir, const struct walls *w)
{
	unsigned n = 0;

	for (int i = 0; i < NSEG; i++) {
		char path[600];
		struct fr_segment_prev prev;
		uint64_t seq;
		int fd;

		snprintf(path, sizeof(path), "%s/segments/%04d.frs", dir, i);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		if (fr_store_segment_header_read(fd, &seq, &prev) == 0 && prev.known && seq > 0 && seq - 1 < SEQ_MAX) {
			n++;
			CHECK(w->last[seq - 1] <= prev.last_wall);
			if (prev.keyframe_wall && w->last[seq - 1]) {
				if (w->kf[seq - 1] < prev.keyframe_wall)
					fprintf(stderr, "segment %llu: keyframe at %llu said, latest found %llu\n",
						(unsigned long long)seq - 1, (unsigned long long)prev.keyframe_wall,
						(unsigned long long)w->kf[seq - 1]);
				CHECK(w->kf[seq - 1] >= prev.keyframe_wall);
			}
		}
		close(fd);
	}
	return n;
}

/* Every chunk edge (and 1 ns either side) as a window start, and random
 * ones; returns the most segments one walk skipped. */
static uint64_t check_store(const char *dir)
{
	struct fr_store_reader *r;
	struct walls *w = calloc(1, sizeof(*w));
	uint64_t most = 0;

	CHECK(w != NULL);
	CHECK_EQ(fr_store_reader_open(dir, &r), 0);
	CHECK_EQ(fr_store_reader_foreach(r, walls_cb, w), 0);
	CHECK(w->n > 0);
	CHECK(check_summaries(dir, w) >= NSEG - 1);
	for (size_t i = 0; i < w->n; i += 1 + (size_t)rnd(12))
		for (int d = -1; d <= 1; d++) {
			uint64_t s = check_since(r, w->v[i] + (uint64_t)d);
			most = MAX(most, s);
		}
	for (int i = 0; i < 200; i++)
		check_since(r, w->v[rnd(w->n)] + rnd(10 * SEC) - 5 * SEC);
	free(w->v);
	free(w);
	fr_store_reader_free(r);
	return most;
}

static void run(bool steps, bool crashes)
{
	char dir[] = "/tmp/fr-test-skip-XXXXXX";
	struct gen g = { .ts = 1000 * SEC, .offset = 1700000000LL * (int64_t)SEC, .steps = steps };
	uint64_t most;

	CHECK(mkdtemp(dir) != NULL);
	g.cctx = ZSTD_createCCtx();
	open_gen(&g, dir);
	for (int round = 0; round < 12; round++) {
		write_records(&g, 6000);
		if (round % 3 != 2)
			continue;
		if (!crashes) {
			close_gen(&g);
			open_gen(&g, dir);
			continue;
		}
		/* a crash right after a keyframe, which is torn: the next
		 * writer cuts it, and must not count it in the segment's
		 * summary (a later keyframe than any left would make windows
		 * skip the one they start from) */
		char path[600];
		struct stat sb;

		keyframe(&g);
		fr_store_writer_close(g.w);
		test_newest_segment(dir, NSEG, path, sizeof(path));
		CHECK(stat(path, &sb) == 0);
		if (round % 2) {
			/* cut short: its header is not taken */
			CHECK(truncate(path, sb.st_size - 1 - (off_t)rnd(100)) == 0);
		} else {
			/* its payload's page never written: the header verifies,
			 * the payload does not */
			static const uint8_t junk[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
			int fd = open(path, O_WRONLY);

			CHECK(fd >= 0 && pwrite(fd, junk, sizeof(junk), sb.st_size - 16) == (ssize_t)sizeof(junk));
			close(fd);
		}
		CHECK_EQ(fr_store_writer_open(dir, &params, NULL, NULL, &g.w), 0);
		/* and the clock came up earlier: the torn keyframe would be
		 * the segment's latest */
		g.offset -= (int64_t)(100 * SEC);
	}
	close_gen(&g);
	most = check_store(dir);
	fprintf(stderr, "steps %d crashes %d: at most %llu of %d segments skipped\n", steps, crashes,
		(unsigned long long)most, NSEG);
	if (!steps)
		CHECK(most >= NSEG / 2);
	ZSTD_freeCCtx(g.cctx);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	run(false, false);
	run(false, true);
	run(true, false);
	run(true, true);
	return TEST_DONE();
}
