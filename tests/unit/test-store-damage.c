/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Damaged stores: a pristine store is copied 150 times; each copy gets 1-3
 * random bit flips or truncations; the reader must return exactly the
 * chunks the damage did not touch (never a damaged one, never lose an
 * intact one) and never crash.  Also built with ASan+UBSan.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "chunk.h"
#include "store-reader.h"
#include "store-writer.h"
#include "store.h"
#include "test.h"

#define NSEG 4
#define MAXCH 1024

struct chunk {
	uint32_t slot;
	uint64_t off, end; /* [off, end): header, payload, padding */
	uint64_t used;     /* off + header + payload: the checked bytes */
	uint64_t seqnum;
	bool damaged;
};
static struct chunk ch[MAXCH];
static size_t nch;
static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static void build(const char *dir)
{
	struct fr_store_params p = { .size = 2u << 20, .nsegments = NSEG, .max_chunk = 20u << 10 };
	struct fr_store_writer *w;
	struct fr_chunk_builder *b;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint8_t boot[16] = { 7 };

	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
	CHECK_EQ(fr_chunk_builder_new(0, 16u << 10, &b), 0);
	for (unsigned i = 0; i < 100000; i++) {
		struct fr_record r = { .type = FR_REC_SYSCALL, .ts = 1000000000ULL + i * 1000ULL, .pid = i + 1 };
		r.tid = r.pid;
		r.syscall.duration_ns = rnd(1u << 30);
		if (fr_chunk_builder_add(b, &r) == -ENOBUFS || i == 99999) {
			void *buf;
			size_t len;
			CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len), 0);
			CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
			fr_store_writer_process(w);
			(void)fr_chunk_builder_add(b, &r);
		}
	}
	fr_store_writer_close(w);
	fr_chunk_builder_free(b);
	ZSTD_freeCCtx(cctx);
}

/* The reader's view: refs of chunks whose header verifies. */
struct seen {
	uint64_t seq[MAXCH];
	size_t n;
	struct fr_store_reader *r;
	size_t loaded;
	uint64_t loaded_seq[MAXCH];
};

static int seen_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct seen *s = userdata;
	uint8_t *raw = malloc(ref->info.raw_size ? ref->info.raw_size : 1);

	CHECK(raw != NULL);
	if (s->n < MAXCH)
		s->seq[s->n++] = ref->info.seqnum;
	if (fr_store_reader_load(s->r, NULL, ref, raw) == 0) {
		/* decode every record: a chunk that verifies must decode */
		struct fr_codec_state st = { .incompat_flags = ref->info.incompat_flags };
		struct fr_record rec;
		size_t pos = 0;
		for (uint32_t i = 0; i < ref->info.nrecords; i++)
			CHECK_EQ(fr_record_decode(&st, raw, ref->info.raw_size, &pos, &rec), 0);
		if (s->loaded < MAXCH)
			s->loaded_seq[s->loaded++] = ref->info.seqnum;
	}
	free(raw);
	return 0;
}

/* Map reader segment index (sorted by seqnum) to slot file: the store was
 * written without wrapping, so slot i has segment seqnum i + 1. */
static int map_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	CHECK(nch < MAXCH);
	ch[nch++] = (struct chunk){
		.slot = ref->segment,
		.off = ref->offset,
		.end = ref->offset + fr_chunk_disk_size(&ref->info),
		.used = ref->offset + sizeof(struct fr_chunk_header) + ref->info.payload_size,
		.seqnum = ref->info.seqnum,
	};
	return 0;
}

static void seg_path(const char *dir, uint32_t slot, char *buf, size_t len)
{
	char name[32];
	fr_store_segment_name(slot, name, sizeof(name));
	snprintf(buf, len, "%s/segments/%s", dir, name);
}

static void damage(const char *dir)
{
	uint32_t slot = ch[rnd(nch)].slot; /* a segment that exists */
	char path[1024];
	struct stat st;
	int fd;

	seg_path(dir, slot, path, sizeof(path));
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0);
	if (st.st_size < 2) {
		close(fd);
		return;
	}
	uint64_t x = rnd((uint64_t)st.st_size);
	if (rnd(4) == 0) {
		/* truncate: every chunk not wholly before x is gone */
		CHECK(ftruncate(fd, (off_t)x) == 0);
		for (size_t i = 0; i < nch; i++)
			if (ch[i].slot == slot && (ch[i].end > x || x < sizeof(struct fr_segment_header)))
				ch[i].damaged = true;
	} else {
		uint8_t byte;
		CHECK(pread(fd, &byte, 1, (off_t)x) == 1);
		byte ^= (uint8_t)(1u << rnd(8));
		CHECK(pwrite(fd, &byte, 1, (off_t)x) == 1);
		for (size_t i = 0; i < nch; i++) {
			if (ch[i].slot != slot)
				continue;
			/* the segment header makes the whole segment unreadable; a
			 * chunk's header and payload are checked, its zero padding
			 * is not (and is not data) */
			if (x < sizeof(struct fr_segment_header) || (x >= ch[i].off && x < ch[i].used))
				ch[i].damaged = true;
		}
	}
	close(fd);
}

int main(void)
{
	char pristine[] = "/tmp/fr-test-damage-XXXXXX";
	char cmd[2048], copy[600];
	struct fr_store_reader *r;
	size_t total_damaged = 0;

	CHECK(mkdtemp(pristine) != NULL);
	build(pristine);
	CHECK_EQ(fr_store_reader_open(pristine, &r), 0);
	CHECK_EQ(fr_store_reader_foreach(r, map_cb, NULL), 0);
	fr_store_reader_free(r);
	CHECK(nch > 40);
	/* slots are 0..NSEG-1 in seqnum order (no wrap): check the mapping */
	for (size_t i = 1; i < nch; i++)
		CHECK(ch[i].seqnum > ch[i - 1].seqnum);

	snprintf(copy, sizeof(copy), "%s.copy", pristine);
	for (int iter = 0; iter < 150; iter++) {
		struct seen s = {};
		size_t want = 0;

		for (size_t i = 0; i < nch; i++)
			ch[i].damaged = false;
		snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", copy, pristine, copy);
		CHECK_EQ(system(cmd), 0);
		for (uint64_t d = 0, nd = 1 + rnd(3); d < nd; d++)
			damage(copy);

		if (fr_store_reader_open(copy, &r) < 0) {
			CHECK(0);
			continue;
		}
		s.r = r;
		CHECK_EQ(fr_store_reader_foreach(r, seen_cb, &s), 0);
		fr_store_reader_free(r);

		/* exactly the intact chunks load, in order */
		for (size_t i = 0; i < nch; i++) {
			if (ch[i].damaged) {
				total_damaged++;
				for (size_t k = 0; k < s.loaded; k++)
					if (s.loaded_seq[k] == ch[i].seqnum) {
						fprintf(stderr, "iteration %d: damaged chunk %llu was returned\n", iter,
							(unsigned long long)ch[i].seqnum);
						CHECK(0);
					}
				continue;
			}
			if (want >= s.loaded || s.loaded_seq[want] != ch[i].seqnum) {
				fprintf(stderr, "iteration %d: intact chunk %llu (slot %u, offset %llu) was not returned\n",
					iter, (unsigned long long)ch[i].seqnum, ch[i].slot,
					(unsigned long long)ch[i].off);
				CHECK(0);
				break;
			}
			want++;
		}
		CHECK_EQ(s.loaded, want);
		if (test_failures)
			break;
	}
	printf("ok: 150 damaged copies of a %zu-chunk store, %zu chunk damages, reader exact\n", nch,
	       total_damaged);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", pristine, copy);
	CHECK_EQ(system(cmd), 0);
	return TEST_DONE();
}
