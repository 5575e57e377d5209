/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A window read in slices (fr_window_stream_next) hands out exactly what
 * the whole window (fr_window_load) holds, in the same order: records,
 * their exes and whether they are context.  The store is written through
 * the real writer with what makes slicing hard: CPUs whose records tie in
 * time, a sparse CPU whose chunks span many slices, a CPU whose chunks are
 * out of order inside, a keyframe chunk before the window, execs and forks
 * before it that name its processes.  Compared with one chunk per slice
 * and with the default slice size.  And the frames of a window's samples
 * (fr_window_frames()), with the functions inlined at them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "chunk.h"
#include "out-buf.h"
#include "store-format.h"
#include "store-reader.h"
#include "store-writer.h"
#include "window.h"
#include "test.h"

#define CHUNK (4u << 10)
#define MS 1000000ULL
#define T0 1000000000ULL /* fake boottime of the first record */

enum { CPU_TIE_A, CPU_TIE_B, CPU_SPARSE, CPU_JITTER, NBUILDERS = 5 };

static int64_t offset; /* wall = ts + offset, the same for every chunk */

static void flush(struct fr_store_writer *w, ZSTD_CCtx *cctx, struct fr_chunk_builder *b)
{
	uint8_t boot[16] = { 7, 7, 7 };
	void *buf;
	size_t len;

	if (fr_chunk_builder_count(b) == 0)
		return;
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len), 0);
	((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64((uint64_t)offset);
	CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	fr_store_writer_submit(w);
	fr_store_writer_process(w);
}

static void add(struct fr_store_writer *w, ZSTD_CCtx *cctx, struct fr_chunk_builder *b, const struct fr_record *r)
{
	if (fr_chunk_builder_add(b, r) == -ENOBUFS) {
		flush(w, cctx, b);
		CHECK_EQ(fr_chunk_builder_add(b, r), 0);
	}
}

static struct fr_record rec(uint16_t type, uint64_t ts, uint32_t pid)
{
	struct fr_record r = { .type = type, .ts = ts, .pid = pid, .tid = pid };

	r.comm_len = (uint8_t)snprintf(r.comm, sizeof(r.comm), "p%u", pid);
	return r;
}

static void write_store(const char *dir)
{
	struct fr_store_params p = { .size = 64u << 20, .nsegments = 4, .max_chunk = CHUNK + 4096 };
	struct fr_chunk_builder *b[NBUILDERS];
	struct fr_store_writer *w;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	char exe[32];

	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
	for (unsigned c = 0; c < NBUILDERS - 1; c++)
		CHECK_EQ(fr_chunk_builder_new(c, CHUNK, &b[c]), 0);
	CHECK_EQ(fr_chunk_builder_new(FR_CPU_META, CHUNK, &b[NBUILDERS - 1]), 0);

	/* a keyframe: what pids 1..40 run */
	for (uint32_t pid = 1; pid <= 40; pid++) {
		struct fr_record r = rec(FR_REC_PROCESS, T0, pid);
		r.process.exe_len = (uint32_t)snprintf(exe, sizeof(exe), "/bin/kf%u", pid);
		r.process.exe = pid % 10 ? exe : ""; /* some kernel threads */
		if (pid % 10 == 0)
			r.process.exe_len = 0;
		add(w, cctx, b[NBUILDERS - 1], &r);
	}
	flush(w, cctx, b[NBUILDERS - 1]);

	for (uint32_t i = 0; i < 3000; i++) {
		uint64_t ts = T0 + 10 * MS + i * 3 * MS;
		uint32_t pid = 1 + i % 60;
		struct fr_record r;

		/* two CPUs with records at the very same times */
		for (unsigned c = CPU_TIE_A; c <= CPU_TIE_B; c++) {
			if (i % 97 == 0) {
				r = rec(FR_REC_EXEC, ts, pid);
				r.exec.filename_len = (uint32_t)snprintf(exe, sizeof(exe), "/bin/x%u-%u", c, i);
				r.exec.filename = exe;
			} else if (i % 61 == 0) {
				r = rec(FR_REC_FORK, ts, pid);
				r.fork.child_pid = 100 + i % 40;
			} else {
				r = rec(FR_REC_SYSCALL, ts, c == CPU_TIE_A ? pid : 100 + i % 40);
				r.syscall.nr = i % 300;
				r.syscall.duration_ns = i * 1000;
			}
			add(w, cctx, b[c], &r);
		}
		/* a CPU that is nearly idle: its chunks span many slices */
		if (i % 150 == 0) {
			r = rec(FR_REC_OFFCPU, ts, pid);
			r.sched.duration_ns = i;
			add(w, cctx, b[CPU_SPARSE], &r);
		}
		/* and one whose records are out of order inside a chunk */
		r = rec(FR_REC_SYSCALL, ts + (i % 7) * MS - 2 * MS, 200 + i % 30);
		r.syscall.nr = 1;
		add(w, cctx, b[CPU_JITTER], &r);
	}
	for (unsigned c = 0; c < NBUILDERS; c++) {
		flush(w, cctx, b[c]);
		fr_chunk_builder_free(b[c]);
	}
	CHECK_EQ(fr_store_writer_sync(w), 0);
	CHECK_EQ(fr_store_writer_drain(w), 0);
	fr_store_writer_close(w);
	ZSTD_freeCCtx(cctx);
}

/* What a reader sees of entry @i. */
static void describe(const struct fr_window *w, size_t i, char *out, size_t n)
{
	struct fr_window_entry e;

	CHECK_EQ(fr_window_get(w, i, &e), 0);
	snprintf(out, n, "%llu cpu%u %s %u/%u %s exe=%.*s kt=%d hidden=%d",
		 (unsigned long long)e.wall_ns, e.r.cpu, fr_record_type_name(e.r.type), e.r.pid, e.r.tid, e.r.comm,
		 (int)e.exe_len, e.exe ? e.exe : "(none)", e.kernel_thread, e.hidden);
}

static int line_userdata;

/* The line a query.line callback writes for @e: none for a pid that is
 * a multiple of 3 (left out). */
static size_t line_of(const struct fr_window_entry *e, char *out, size_t n)
{
	if (e->r.pid % 3 == 0)
		return 0;
	return (size_t)snprintf(out, n, "%llu cpu%u %s %u/%u %s\n", (unsigned long long)e->wall_ns, e->r.cpu,
				fr_record_type_name(e->r.type), e->r.pid, e->r.tid, e->r.comm);
}

static void on_line(struct fr_window *w, const struct fr_window_item *it, const struct fr_window_entry *e,
		    unsigned slot, struct fr_out *o, void *userdata)
{
	char buf[256];
	size_t n = line_of(e, buf, sizeof(buf));

	CHECK(slot <= fr_window_threads());
	CHECK(!it->hidden);
	CHECK(userdata == &line_userdata);
	CHECK(w != NULL);
	fr_out_write(o, buf, n);
}

/* Streamed with query.line: every shown entry's line, as the thread that
 * loaded it wrote it, comes out with it. */
static void check_line(const struct fr_window *whole, size_t i, const struct fr_window *st, size_t j,
		       size_t *mismatches)
{
	struct fr_window_entry e;
	char want[256];
	size_t n = 0, len;
	const char *got = fr_window_line(st, j, &len);

	CHECK_EQ(fr_window_get(whole, i, &e), 0);
	if (!e.hidden)
		n = line_of(&e, want, sizeof(want));
	if ((len != n || memcmp(got, want, n) != 0) && (*mismatches)++ < 5)
		fprintf(stderr, "entry %zu: line \"%.*s\", want \"%.*s\"\n", i, (int)len, got, (int)n, want);
}

/* How compare() streams: no lines; lines beside the records; lines only
 * (query.lines_only: the records are not kept). */
enum lines { NO_LINES, LINES, LINES_ONLY };

/* Item @i of @w, as far as it is kept with query.lines_only. */
static void describe_item(const struct fr_window *w, size_t i, char *out, size_t n)
{
	const struct fr_window_item *it = &w->items[i];

	snprintf(out, n, "%llu %s %u hidden=%d", (unsigned long long)it->wall_ns, fr_record_type_name(it->type), it->pid,
		 it->hidden);
}

static void compare(const char *dir, const struct fr_window_query *q, size_t slice_bytes, enum lines lines)
{
	struct fr_store_reader *r;
	struct fr_window *whole, *st;
	struct fr_window_query sq = *q;
	size_t i = 0, slices = 0, mismatches = 0;
	char a[256], b[256];
	int k;

	CHECK_EQ(fr_store_reader_open(dir, &r), 0);
	CHECK_EQ(fr_window_load(r, q, &whole), 0);
	sq.slice_bytes = slice_bytes;
	if (lines != NO_LINES) {
		sq.line = on_line;
		sq.line_userdata = &line_userdata;
		sq.lines_only = lines == LINES_ONLY;
	}
	CHECK_EQ(fr_window_stream_open(r, &sq, &st), 0);
	while ((k = fr_window_stream_next(st)) > 0) {
		slices++;
		for (size_t j = 0; j < st->n; j++, i++) {
			if (i >= whole->n) {
				mismatches++;
				continue;
			}
			if (lines == LINES_ONLY) {
				struct fr_window_entry e;
				/* the records are gone: only their items and lines */
				CHECK_EQ(fr_window_get(st, j, &e), -ENODATA);
				describe_item(whole, i, a, sizeof(a));
				describe_item(st, j, b, sizeof(b));
			} else {
				describe(whole, i, a, sizeof(a));
				describe(st, j, b, sizeof(b));
			}
			if (strcmp(a, b) != 0 && mismatches++ < 5)
				fprintf(stderr, "slice %zu entry %zu:\n  whole:  %s\n  stream: %s\n", slices, i, a, b);
			if (lines != NO_LINES)
				check_line(whole, i, st, j, &mismatches);
		}
	}
	CHECK_EQ(k, 0);
	CHECK_EQ(i, whole->n);
	CHECK_EQ(mismatches, 0);
	CHECK_EQ(st->chunks_damaged, 0);
	if (slice_bytes == 1)
		CHECK(slices > 20); /* one chunk a slice: many */
	fprintf(stderr, "slice_bytes %zu%s: %zu entries in %zu slices, same as the whole window\n", slice_bytes,
		lines == LINES ? ", with lines" : lines == LINES_ONLY ? ", lines only" : "", i, slices);
	fr_window_free(st);
	fr_window_free(whole);
	fr_store_reader_free(r);
}

static struct fr_record code(uint16_t type, uint32_t pid, uint64_t start, uint64_t size, const char *name)
{
	struct fr_record r = rec(type, T0, pid);

	r.tid = r.pid = pid;
	r.comm_len = 0;
	r.comm[0] = 0;
	if (type == FR_REC_MAPPING) {
		r.mapping.start = start;
		r.mapping.end = start + size;
		r.mapping.offset = r.mapping.vaddr = 0x1000;
		r.mapping.path = name;
		r.mapping.path_len = (uint32_t)strlen(name);
	} else if (type == FR_REC_SYMBOL) {
		r.symbol.start = start;
		r.symbol.size = size;
		r.symbol.name = name;
		r.symbol.name_len = (uint32_t)strlen(name);
		r.symbol.module = "";
	} else {
		r.inl.addr = start;
		r.inl.names = name;
		r.inl.names_len = (uint32_t)size;
	}
	return r;
}

/* The frames of @e as "name|name (inlined)|..." */
static void frames_of(struct fr_window *w, const struct fr_window_entry *e, size_t max, char *out, size_t n)
{
	struct fr_frame f[FR_FRAMES_EXPANDED_MAX];
	int k = fr_window_frames(w, e, f, max);
	size_t len = 0;
	char name[128];

	out[0] = 0;
	CHECK(k >= 0 && (size_t)k <= max);
	for (int i = 0; i < k && len < n; i++) {
		CHECK_EQ(f[i].kernel, i < e->r.stack.kernel_frames);
		len += (size_t)snprintf(out + len, n - len, "%s%s%s", i ? "|" : "",
					fr_frame_name(&f[i], true, name, sizeof(name)), f[i].inlined ? " (inlined)" : "");
	}
}

/* A sample's frames through a window: a user frame with an FR_REC_INLINE
 * record at its lookup address (a return address one byte back, the
 * leaf at itself) comes after a frame for each function inlined there,
 * innermost first; kernel frames first and never expanded; another
 * pid's record never applies; a marker ends the stack by name; the
 * outermost are left out when there is no room.  Loaded whole and
 * streamed. */
static void test_frames(void)
{
	static const char names[] = "inner\0middle";
	static const uint64_t kf[] = { 0xffffffff81001010ULL };
	static const uint64_t uf1[] = { 0x555500001111ULL, 0x555500001250ULL, FR_FRAME_TRUNCATED };
	static const uint64_t uf2[] = { 0x555500001110ULL, 0x555500001250ULL };
	struct fr_store_params p = { .size = 8u << 20, .nsegments = 2, .max_chunk = CHUNK + 4096 };
	char dir[] = "/tmp/fr-test-frames-XXXXXX", cmd[64];
	struct fr_record code_recs[] = {
		code(FR_REC_MAPPING, 7, 0x555500001000ULL, 0x1000, "/usr/bin/app"),
		code(FR_REC_SYMBOL, 7, 0x555500001100ULL, 0x80, "outer"),
		code(FR_REC_SYMBOL, 7, 0x555500001200ULL, 0x80, "main"),
		code(FR_REC_SYMBOL, 0, 0xffffffff81001000ULL, 0x200, "do_syscall_64"),
		code(FR_REC_INLINE, 8, 0x555500001110ULL, 5, "wrong"),
		code(FR_REC_INLINE, 7, 0x555500001110ULL, sizeof(names) - 1, names),
	};
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct fr_chunk_builder *b;
	struct fr_store_writer *w;
	struct fr_record s;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
	CHECK_EQ(fr_chunk_builder_new(0, CHUNK, &b), 0);
	for (unsigned i = 0; i < sizeof(code_recs) / sizeof(code_recs[0]); i++)
		add(w, cctx, b, &code_recs[i]);
	s = rec(FR_REC_SAMPLE, T0 + MS, 7);
	s.stack.kernel_frames = 1;
	s.stack.user_frames = 3;
	s.stack.kframes = kf;
	s.stack.uframes = uf1;
	add(w, cctx, b, &s);
	s = rec(FR_REC_SAMPLE, T0 + 2 * MS, 7);
	s.stack.kernel_frames = 0;
	s.stack.user_frames = 2;
	s.stack.uframes = uf2;
	add(w, cctx, b, &s);
	flush(w, cctx, b);
	fr_chunk_builder_free(b);
	CHECK_EQ(fr_store_writer_sync(w), 0);
	CHECK_EQ(fr_store_writer_drain(w), 0);
	fr_store_writer_close(w);
	ZSTD_freeCCtx(cctx);

	for (int streamed = 0; streamed < 2; streamed++) {
		struct fr_window_query q = { .since_ns = 0, .until_ns = UINT64_MAX, .skip_exe = true };
		struct fr_store_reader *r;
		struct fr_window *win;
		unsigned samples = 0;
		char got[512];

		CHECK_EQ(fr_store_reader_open(dir, &r), 0);
		CHECK_EQ(streamed ? fr_window_stream_open(r, &q, &win) : fr_window_load(r, &q, &win), 0);
		while (!streamed || fr_window_stream_next(win) > 0) {
			for (size_t i = 0; i < win->n; i++) {
				struct fr_window_entry e;
				CHECK_EQ(fr_window_get(win, i, &e), 0);
				if (e.r.type != FR_REC_SAMPLE)
					continue;
				CHECK(win->chunks[e.chunk].incompat_flags & FR_CHUNK_INCOMPAT_INLINE);
				frames_of(win, &e, FR_FRAMES_EXPANDED_MAX, got, sizeof(got));
				if (samples++ == 0) {
					CHECK_STR(got, "do_syscall_64+0x10|inner (inlined)|middle (inlined)|outer+0x11|"
						       "main+0x50|[truncated]");
					/* no room: the outermost are left out */
					frames_of(win, &e, 3, got, sizeof(got));
					CHECK_STR(got, "do_syscall_64+0x10|inner (inlined)|middle (inlined)");
					frames_of(win, &e, 1, got, sizeof(got));
					CHECK_STR(got, "do_syscall_64+0x10");
				} else
					CHECK_STR(got, "inner (inlined)|middle (inlined)|outer+0x10|main+0x50");
			}
			if (!streamed)
				break;
		}
		CHECK_EQ(samples, 2);
		CHECK_EQ(win->chunks_damaged, 0);
		CHECK_EQ(win->records_bad, 0);
		fr_window_free(win);
		fr_store_reader_free(r);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

int main(void)
{
	char dir[] = "/tmp/fr-test-stream-XXXXXX";
	struct timespec now;
	struct fr_window_query q = {};
	char cmd[64];

	CHECK(mkdtemp(dir) != NULL);
	clock_gettime(CLOCK_REALTIME, &now);
	offset = (int64_t)now.tv_sec * 1000000000LL - 3600LL * 1000000000LL - (int64_t)T0;
	write_store(dir);

	/* the window starts after the keyframe and some execs and forks */
	q.since_ns = T0 + (uint64_t)offset + 1500 * MS;
	q.until_ns = T0 + (uint64_t)offset + 7000 * MS;
	compare(dir, &q, 1, NO_LINES);
	compare(dir, &q, 0, NO_LINES);
	/* and the whole store */
	q.since_ns = 0;
	q.until_ns = UINT64_MAX;
	compare(dir, &q, 1, NO_LINES);
	q.skip_exe = true;
	compare(dir, &q, 3 * CHUNK, NO_LINES);
	/* lines written by the loading threads, in slices of one chunk and
	 * of several */
	compare(dir, &q, 1, LINES);
	compare(dir, &q, 3 * CHUNK, LINES);
	compare(dir, &q, 1, LINES_ONLY);
	compare(dir, &q, 3 * CHUNK, LINES_ONLY);
	q.since_ns = T0 + (uint64_t)offset + 1500 * MS;
	q.until_ns = T0 + (uint64_t)offset + 7000 * MS;
	compare(dir, &q, 0, LINES);
	compare(dir, &q, 0, LINES_ONLY);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
	test_frames();
	return TEST_DONE();
}
