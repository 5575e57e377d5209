/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An incident carries the kernel names its chunks leave to the store's
 * snapshot (lib/kernel-names.h): a store is written through the real
 * writer with a snapshot of its boot, one CPU's chunks naming none of
 * their samples' kernel frames (as the daemon writes them now) and
 * another's describing theirs.  Each way of writing an incident (whole,
 * to an fd through a filter, built in memory from refs and from chunks
 * as the daemon's tap gives them) makes a file with a names chunk, whose
 * samples read on their own (whole and streamed) name every frame as the
 * store does; the chunks that describe their frames get none; an
 * incident of an incident keeps them; a store without a snapshot, and a
 * filter that leaves out the chunks that needed them, make none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "chunk.h"
#include "incident.h"
#include "kernel-names.h"
#include "ksyms.h"
#include "macro.h"
#include "redact.h"
#include "record-fields.h"
#include "store-format.h"
#include "store-reader.h"
#include "store-writer.h"
#include "window.h"
#include "test.h"

#define CHUNK (4u << 10)
#define MS 1000000ULL
#define T0 1000000000ULL
#define OFFSET 1700000000000000000LL /* wall = ts + OFFSET */

static const uint8_t boot[16] = { 7, 7, 7 };

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81001000 T do_syscall_64\n"
			       "ffffffff81002000 t schedule\n"
			       "ffffffff81003000 T vfs_read\n"
			       "ffffffff81005000 T snap_fn\n"
			       "ffffffff81005100 T after_snap_fn\n"
			       "ffffffff81006000 D some_data\n"
			       "ffffffffc0001000 t ext4_read\t[ext4]\n"
			       "ffffffffc0002000 t ext4_end\t[ext4]\n";

/* CPU 0's samples' kernel frames, named by nothing in their chunks: a
 * leaf, return addresses (one at the start of the next function: it
 * belongs to the one before), a module's function, one the snapshot does
 * not know. */
static const uint64_t kf0[][4] = {
	{ 0xffffffff81002010ULL, 0xffffffff81003000ULL, 0xffffffffc0001010ULL, 0xffffffff81001005ULL },
	{ 0xffffffff81003020ULL, 0xffffffff81001010ULL, 0xffffffff90000000ULL, 0xffffffff81001011ULL },
};
/* CPU 1's, in a function its chunks describe themselves */
#define DESCRIBED 0xffffffff81005000ULL

static void flush(struct fr_store_writer *w, ZSTD_CCtx *cctx, struct fr_chunk_builder *b)
{
	void *buf;
	size_t len;

	if (fr_chunk_builder_count(b) == 0)
		return;
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len), 0);
	((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64((uint64_t)OFFSET);
	CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	fr_store_writer_submit(w);
	fr_store_writer_process(w);
}

static struct fr_record sample(uint64_t ts, uint32_t pid, const uint64_t *kf, uint16_t n)
{
	struct fr_record r = { .type = FR_REC_SAMPLE, .ts = ts, .pid = pid, .tid = pid };

	r.comm_len = (uint8_t)snprintf(r.comm, sizeof(r.comm), "p%u", pid);
	r.stack.kernel_frames = n;
	r.stack.kframes = kf;
	return r;
}

/* A store at @dir of four CPU 0 chunks and a CPU 1 chunk, and a keyframe;
 * with @snapshot, the snapshot of its boot. */
static void write_store(const char *dir, bool snapshot)
{
	struct fr_store_params p = { .size = 64u << 20, .nsegments = 2, .max_chunk = CHUNK + 4096 };
	struct fr_chunk_builder *b0, *b1, *meta;
	struct fr_store_writer *w;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint64_t kf1[2] = { DESCRIBED + 0x10, DESCRIBED + 0x20 };

	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
	CHECK_EQ(fr_chunk_builder_new(0, CHUNK, &b0), 0);
	CHECK_EQ(fr_chunk_builder_new(1, CHUNK, &b1), 0);
	CHECK_EQ(fr_chunk_builder_new(FR_CPU_META, CHUNK, &meta), 0);
	struct fr_record kr = { .type = FR_REC_PROCESS, .ts = T0, .pid = 5 };
	kr.process.exe = "/bin/x";
	kr.process.exe_len = 6;
	CHECK_EQ(fr_chunk_builder_add(meta, &kr), 0);
	flush(w, cctx, meta);
	for (unsigned c = 0; c < 4; c++) {
		for (unsigned i = 0; i < 20; i++) {
			struct fr_record r = sample(T0 + (c * 20 + i) * MS, 5, kf0[i % 2], 4);
			CHECK_EQ(fr_chunk_builder_add(b0, &r), 0);
		}
		flush(w, cctx, b0);
	}
	struct fr_record s = { .type = FR_REC_SYMBOL, .ts = T0 + 5 * MS };
	s.symbol.start = DESCRIBED;
	s.symbol.size = 0x100;
	s.symbol.name = "described_fn";
	s.symbol.name_len = 12;
	s.symbol.module = "";
	CHECK_EQ(fr_chunk_builder_add(b1, &s), 0);
	for (unsigned i = 0; i < 10; i++) {
		struct fr_record r = sample(T0 + 5 * MS + i * MS, 6, kf1, 2);
		CHECK_EQ(fr_chunk_builder_add(b1, &r), 0);
	}
	flush(w, cctx, b1);
	CHECK_EQ(fr_store_writer_sync(w), 0);
	CHECK_EQ(fr_store_writer_drain(w), 0);
	fr_store_writer_close(w);
	fr_chunk_builder_free(b0);
	fr_chunk_builder_free(b1);
	fr_chunk_builder_free(meta);
	ZSTD_freeCCtx(cctx);

	if (snapshot) {
		struct fr_ksyms *k = NULL;
		char id[33];
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK_EQ(fr_ksyms_parse(strdup(kallsyms), sizeof(kallsyms) - 1, &k), 0);
		CHECK_EQ(fr_ksyms_save(k, dfd, fr_format_boot_id(boot, id, sizeof(id))), 1);
		fr_ksyms_free(k);
		close(dfd);
	}
}

static const struct fr_window_query all = { .since_ns = 0, .until_ns = UINT64_MAX };

/* Every sample's frames as a reader prints them, one line each, in
 * window order; read whole or streamed in small slices (chunks dropped
 * before the names chunk's last use). */
static char *frames_of(struct fr_store_reader *r, bool streamed, unsigned *ret_ncpu)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct fr_window_query q = all;
	struct fr_window *w = NULL;
	int k;

	q.slice_bytes = 1; /* a chunk a slice */
	CHECK_EQ(streamed ? fr_window_stream_open(r, &q, &w) : fr_window_load(r, &q, &w), 0);
	if (!w) {
		fclose(f);
		return out;
	}
	*ret_ncpu = fr_window_ncpu(w);
	do {
		for (size_t i = 0; i < w->n; i++) {
			struct fr_window_entry e;
			struct fr_frame fr[FR_FRAMES_EXPANDED_MAX];
			char name[256], mod[256];

			CHECK_EQ(fr_window_get(w, i, &e), 0);
			if (e.r.type != FR_REC_SAMPLE)
				continue;
			int n = fr_window_frames(w, &e, fr, FR_FRAMES_EXPANDED_MAX);
			CHECK(n > 0);
			for (int j = 0; j < n; j++) {
				const char *m = fr_frame_module(&fr[j], mod, sizeof(mod));
				fprintf(f, "%s %s|", fr_frame_name(&fr[j], true, name, sizeof(name)), m ? m : "-");
			}
			fputc('\n', f);
		}
		k = streamed ? fr_window_stream_next(w) : 0;
		CHECK(k >= 0);
	} while (k > 0);
	fr_window_free(w);
	fclose(f);
	return out;
}

struct file_names {
	size_t chunks, names_chunks;
	bool has_described; /* a names chunk names DESCRIBED */
	uint64_t symbols;
};

static int count_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct file_names *fn = userdata;

	fn->chunks++;
	fn->names_chunks += ref->info.cpu == FR_CPU_NAMES;
	return 0;
}

/* What incident @path holds; its reader into *ret when not NULL. */
static void inspect(const char *path, struct file_names *fn, struct fr_store_reader **ret)
{
	struct fr_store_reader *r = NULL;
	char *meta = NULL;

	*fn = (struct file_names){};
	CHECK_EQ(fr_store_reader_open_incident(path, &r, &meta), 0);
	free(meta);
	if (!r)
		return;
	CHECK_EQ(fr_store_reader_foreach(r, count_cb, fn), 0);
	/* the names chunks as the window reader loads them */
	struct fr_chunk_ref *refs = NULL;
	size_t n = 0;
	struct fr_kernel_names *kn = NULL;
	uint64_t damaged = 0;
	CHECK_EQ(fr_window_select(r, &all, &refs, &n), 0);
	CHECK_EQ(fr_kernel_names_load(r, refs, n, &kn, &damaged), 0);
	CHECK_EQ(damaged, 0);
	const struct fr_symtab *t = fr_kernel_names_find(kn, boot);
	CHECK_EQ(!!t, fn->names_chunks > 0);
	for (size_t i = 0; t && i < t->nsyms; i++) {
		fn->symbols++;
		fn->has_described |= t->syms[i].symbol.start == DESCRIBED;
	}
	/* the names chunk is in the window of every other chunk: it spans
	 * them (here, a window of the last chunk's time alone) */
	for (size_t i = 0; i < n; i++)
		if (refs[i].info.cpu == FR_CPU_NAMES) {
			uint64_t last = 0, seq = 0;
			for (size_t j = 0; j < n; j++)
				if (refs[j].info.cpu != FR_CPU_NAMES) {
					last = MAX(last, refs[j].info.last_ts + (uint64_t)refs[j].info.realtime_offset);
					seq = MAX(seq, refs[j].info.seqnum);
				}
			CHECK(refs[i].info.last_ts + (uint64_t)refs[i].info.realtime_offset >= last);
			/* and comes after them (built ahead or not) */
			CHECK(refs[i].info.seqnum > seq);
			CHECK_EQ(refs[i].info.nevents, 0);
		}
	free(refs);
	fr_kernel_names_free(kn);
	if (ret)
		*ret = r;
	else
		fr_store_reader_free(r);
}

/* Incident @path reads as store @want_*: the same frames, whole and
 * streamed, and the same CPUs. */
static void check_reads_as(const char *path, const char *want_whole, const char *want_streamed, unsigned want_ncpu)
{
	struct file_names fn;
	struct fr_store_reader *r = NULL;
	unsigned ncpu = 0;

	inspect(path, &fn, &r);
	char *whole = frames_of(r, false, &ncpu);
	CHECK_EQ(ncpu, want_ncpu);
	char *streamed = frames_of(r, true, &ncpu);
	CHECK_STR(whole, want_whole);
	CHECK_STR(streamed, want_streamed);
	free(whole);
	free(streamed);
	fr_store_reader_free(r);
}

/* A filter that leaves out CPU 0's chunks: what it gives needs no names. */
static int drop_cpu0(void *userdata, const uint8_t *chunk, size_t len, uint8_t **ret, size_t *ret_len)
{
	const struct fr_chunk_header *h = (const void *)chunk;

	(void)userdata;
	(void)len;
	*ret = NULL;
	*ret_len = 0;
	if (le32toh(h->cpu) == 0 && !(*ret = malloc(1)))
		return -ENOMEM;
	return 0;
}

static void write_with(const char *path, const char *how, struct fr_store_reader *r)
{
	struct fr_chunk_ref *refs = NULL;
	size_t n = 0;

	CHECK_EQ(fr_window_select(r, &all, &refs, &n), 0);
	if (strcmp(how, "write") == 0) {
		CHECK(fr_incident_write(path, "{}", r, refs, n, NULL) > 0);
	} else if (strcmp(how, "redact") == 0 || strcmp(how, "drop-cpu0") == 0) {
		struct fr_redactor *rd = NULL;
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		CHECK_EQ(fr_redactor_new(FR_REDACT_ALL, &rd), 0);
		if (strcmp(how, "redact") == 0)
			CHECK(fr_incident_write_fd(fd, "{}", r, refs, n, fr_redact_chunk, rd, NULL) > 0);
		else
			CHECK(fr_incident_write_fd(fd, "{}", r, refs, n, drop_cpu0, NULL, NULL) > 0);
		fr_redactor_free(rd);
		close(fd);
	} else {
		/* built in memory as the daemon does: the first chunks from
		 * the store, the last ones as its tap gives them, raw */
		/* "prepared": its names built ahead, after the chunks from
		 * the store ("-early") or after each one too, as the daemon
		 * does: the seal takes them, or makes them again when
		 * addresses came since */
		struct fr_incident_builder *b = NULL;
		bool tap = strstr(how, "tap") != NULL, prepared = strstr(how, "prepared") != NULL;
		bool early = strstr(how, "early") != NULL;
		size_t half = tap ? n / 2 : n, len;
		CHECK_EQ(fr_incident_builder_new(64, &b), 0);
		CHECK_EQ(fr_incident_builder_add_refs(b, r, refs, half), 0);
		if (prepared)
			CHECK_EQ(fr_incident_builder_prepare_names(b), 0);
		for (size_t i = half; i < n; i++) {
			uint8_t *buf = NULL;
			size_t blen = 0;
			CHECK_EQ(fr_store_reader_read_chunk(r, &refs[i], &buf, &blen), 0);
			CHECK_EQ(fr_incident_builder_add(b, buf, blen), 0);
			if (prepared && !early)
				CHECK_EQ(fr_incident_builder_prepare_names(b), 0);
			free(buf);
		}
		CHECK_EQ(fr_incident_builder_seal(b, "{}"), 0);
		const uint8_t *data = fr_incident_builder_data(b, &len);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		CHECK_EQ(fr_incident_write_at(fd, data, len), 0);
		close(fd);
		fr_incident_builder_free(b);
	}
	free(refs);
}

int main(void)
{
	char tmpl[] = "/tmp/fr-test-kernel-names-XXXXXX";
	char *dir = mkdtemp(tmpl);
	char store[512], bare[512], path[512], path2[512], cmd[600];
	struct fr_store_reader *r = NULL;
	struct file_names fn;
	unsigned ncpu = 0, ncpu_want = 0;

	CHECK(dir != NULL);
	if (!dir)
		return 1;
	snprintf(store, sizeof(store), "%s/store", dir);
	snprintf(bare, sizeof(bare), "%s/bare", dir);
	write_store(store, true);
	write_store(bare, false);

	CHECK_EQ(fr_store_reader_open(store, &r), 0);
	char *want = frames_of(r, false, &ncpu_want);
	char *want_streamed = frames_of(r, true, &ncpu);
	CHECK_EQ(ncpu_want, 2);
	/* the store names them from its snapshot (the second sample's
	 * unknown address stays unnamed), CPU 1's from its chunk */
	CHECK(strstr(want, "schedule+0x10 [kernel.kallsyms]|schedule+0x1000 [kernel.kallsyms]|"
			   "ext4_read+0x10 [ext4]|do_syscall_64+0x5 [kernel.kallsyms]|\n") != NULL);
	CHECK(strstr(want, "vfs_read+0x20 [kernel.kallsyms]|do_syscall_64+0x10 [kernel.kallsyms]|"
			   "[kernel.kallsyms]@0xffffffff90000000 [kernel.kallsyms]|") != NULL);
	CHECK(strstr(want, "described_fn+0x10 [kernel.kallsyms]|described_fn+0x20 [kernel.kallsyms]|\n") != NULL);
	CHECK(strstr(want, "snap_fn") == NULL);

	static const char *const hows[] = { "write", "redact", "builder", "builder-tap", "builder-prepared",
					    "builder-tap-prepared", "builder-tap-prepared-early" };
	for (size_t i = 0; i < ELEMENTSOF(hows); i++) {
		snprintf(path, sizeof(path), "%s/%s.fri", dir, hows[i]);
		write_with(path, hows[i], r);
		inspect(path, &fn, NULL);
		CHECK_EQ(fn.names_chunks, 1);
		/* do_syscall_64, schedule, vfs_read, ext4_read: not the
		 * function CPU 1's chunk describes */
		CHECK_EQ(fn.symbols, 4);
		CHECK(!fn.has_described);
		check_reads_as(path, want, want_streamed, ncpu_want);
	}

	/* an incident of an incident: its names are carried, not made
	 * again (there is no snapshot to make them from) */
	struct fr_store_reader *ri = NULL;
	char *meta = NULL;
	snprintf(path, sizeof(path), "%s/write.fri", dir);
	snprintf(path2, sizeof(path2), "%s/again.fri", dir);
	CHECK_EQ(fr_store_reader_open_incident(path, &ri, &meta), 0);
	free(meta);
	write_with(path2, "write", ri);
	fr_store_reader_free(ri);
	inspect(path2, &fn, NULL);
	CHECK_EQ(fn.names_chunks, 1);
	check_reads_as(path2, want, want_streamed, ncpu_want);
	snprintf(path2, sizeof(path2), "%s/again-built.fri", dir);
	CHECK_EQ(fr_store_reader_open_incident(path, &ri, &meta), 0);
	free(meta);
	write_with(path2, "builder-tap", ri);
	fr_store_reader_free(ri);
	inspect(path2, &fn, NULL);
	CHECK_EQ(fn.names_chunks, 1);
	check_reads_as(path2, want, want_streamed, ncpu_want);

	/* what the filter gives is what is named: CPU 1's chunks need none */
	snprintf(path, sizeof(path), "%s/drop.fri", dir);
	write_with(path, "drop-cpu0", r);
	inspect(path, &fn, NULL);
	CHECK_EQ(fn.names_chunks, 0);
	fr_store_reader_free(r);

	/* no snapshot: no names, the frames unnamed as in the store */
	CHECK_EQ(fr_store_reader_open(bare, &r), 0);
	char *bare_want = frames_of(r, false, &ncpu);
	CHECK(strstr(bare_want, "schedule") == NULL);
	CHECK(strstr(bare_want, "described_fn+0x10") != NULL);
	snprintf(path, sizeof(path), "%s/bare.fri", dir);
	write_with(path, "write", r);
	inspect(path, &fn, NULL);
	CHECK_EQ(fn.names_chunks, 0);
	CHECK(fn.chunks > 0);
	check_reads_as(path, bare_want, bare_want, ncpu_want);

	/* a table lent for the boot (the daemon's) names them in place of
	 * the snapshot, here absent: the incident reads as the store with
	 * its snapshot does; lent for another boot, it is not used */
	for (int other = 0; other < 2; other++) {
		struct fr_ksyms *k = NULL;
		struct fr_incident_builder *b = NULL;
		struct fr_chunk_ref *refs = NULL;
		const uint8_t *data;
		uint8_t lb[16];
		size_t n = 0, len;
		memcpy(lb, boot, 16);
		lb[15] ^= (uint8_t)other;
		CHECK_EQ(fr_ksyms_parse(strdup(kallsyms), sizeof(kallsyms) - 1, &k), 0);
		CHECK_EQ(fr_window_select(r, &all, &refs, &n), 0);
		CHECK_EQ(fr_incident_builder_new(64, &b), 0);
		fr_incident_builder_lend_ksyms(b, lb, k);
		CHECK_EQ(fr_incident_builder_add_refs(b, r, refs, n), 0);
		CHECK_EQ(fr_incident_builder_seal(b, "{}"), 0);
		data = fr_incident_builder_data(b, &len);
		snprintf(path, sizeof(path), "%s/lent%d.fri", dir, other);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		CHECK_EQ(fr_incident_write_at(fd, data, len), 0);
		close(fd);
		fr_incident_builder_free(b);
		fr_ksyms_free(k);
		free(refs);
		inspect(path, &fn, NULL);
		CHECK_EQ(fn.names_chunks, other ? 0 : 1);
		check_reads_as(path, other ? bare_want : want, other ? bare_want : want_streamed, ncpu_want);
	}
	fr_store_reader_free(r);

	free(want);
	free(want_streamed);
	free(bare_want);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return TEST_DONE();
}
