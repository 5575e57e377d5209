/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test tool: fills a store through the real writer with synthetic records
 * (exec records with 120 random bytes of argv, and syscall records) whose
 * wall times are spread evenly over [now - ago - span, now - ago], under a
 * given boot id, until @bytes have been written.  Lets tests build a full
 * 1 GiB store covering a week, or two boots, in seconds.  Options after
 * the boot id: "text": the argv is printable words (compressible, like
 * real command lines) instead of random bytes; "keyframes": a keyframe
 * chunk (process records of the pids the records use) every 30 s of
 * record time, as flightrecd writes by default.
 *   fr-store-fill DIR BOUND SEGMENTS BYTES SPAN_S AGO_S BOOT_ID_HEX [text] [keyframes]
 */
#include <endian.h>
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zstd.h>

#include "chunk.h"
#include "store-writer.h"

#define CHUNK (256u << 10)

#define KEYFRAME_INTERVAL (30 * 1000000000ULL)
#define KEYFRAME_PIDS 64

/* Incompressible argv bytes, as random as zstd can tell, without a
 * getrandom() call per record (that was half the fill's time): xorshift64*
 * seeded once from getrandom(). */
static uint64_t rng_state;

static void fill_random(void *p, size_t n)
{
	uint8_t *o = p;

	while (n > 0) {
		uint64_t v;
		size_t k = n < sizeof(v) ? n : sizeof(v);

		rng_state ^= rng_state >> 12;
		rng_state ^= rng_state << 25;
		rng_state ^= rng_state >> 27;
		v = rng_state * 0x2545F4914F6CDD1DULL;
		memcpy(o, &v, k);
		o += k;
		n -= k;
	}
}

/* A keyframe at @ts: what the first KEYFRAME_PIDS of the pids run. */
static int write_keyframe(struct fr_store_writer *w, ZSTD_CCtx *cctx, const uint8_t *boot, uint64_t ts,
			  int64_t offset, uint64_t *written)
{
	static const char args[] = "fill\0--keyframe";
	struct fr_chunk_builder *b;
	void *buf;
	size_t len;
	int k;

	k = fr_chunk_builder_new(FR_CPU_META, CHUNK, &b);
	if (k < 0)
		return k;
	for (uint32_t pid = 1000; pid < 1000 + KEYFRAME_PIDS; pid++) {
		struct fr_record r = { .type = FR_REC_PROCESS, .ts = ts, .pid = pid, .tid = pid, .cgroup_id = 1 };

		memcpy(r.comm, "fill", 5);
		r.comm_len = 4;
		r.process.ppid = 1;
		r.process.exe = "/usr/bin/fill";
		r.process.exe_len = 13;
		r.process.args = args;
		r.process.args_len = sizeof(args) - 1;
		if ((k = fr_chunk_builder_add(b, &r)) < 0)
			break;
	}
	if (k == 0)
		k = fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len);
	fr_chunk_builder_free(b);
	if (k < 0)
		return k;
	((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64((uint64_t)offset);
	k = fr_store_writer_append(w, buf, len);
	fr_store_writer_submit(w);
	fr_store_writer_process(w);
	*written += len;
	return k;
}

int main(int argc, char **argv)
{
	struct fr_store_params p;
	struct fr_store_writer *w;
	struct fr_chunk_builder *b;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint8_t boot[16];
	char args[120];
	struct timespec now;
	int k;

	bool text = false, keyframes = false;
	for (int i = 8; i < argc; i++) {
		if (strcmp(argv[i], "text") == 0)
			text = true;
		else if (strcmp(argv[i], "keyframes") == 0)
			keyframes = true;
		else
			argc = 0;
	}
	if (argc < 8 || strlen(argv[7]) != 32) {
		fprintf(stderr, "usage: fr-store-fill DIR BOUND SEGMENTS BYTES SPAN_S AGO_S BOOT_ID_HEX [text] [keyframes]\n");
		return 2;
	}
	static const char *const words[] = { "--config", "/etc/app.conf", "-v", "worker", "--port=8080",
					     "/var/lib/data", "--threads", "4", "run", "--json" };
	uint64_t bound = strtoull(argv[2], NULL, 10), bytes = strtoull(argv[4], NULL, 10);
	double span = strtod(argv[5], NULL), ago = strtod(argv[6], NULL);
	for (int i = 0; i < 16; i++) {
		unsigned v;
		sscanf(argv[7] + 2 * i, "%2x", &v);
		boot[i] = (uint8_t)v;
	}
	p = (struct fr_store_params){ .size = bound, .nsegments = (uint32_t)atoi(argv[3]), .max_chunk = CHUNK + 4096 };
	k = fr_store_writer_open(argv[1], &p, NULL, NULL, &w);
	if (k < 0) {
		fprintf(stderr, "fr-store-fill: cannot open store %s: %s\n", argv[1], strerror(-k));
		return 1;
	}
	/* a chunk's buffers come and go thousands of times a second: keep
	 * glibc from giving them back to the kernel (brk, page faults) each time */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	if (getrandom(&rng_state, sizeof(rng_state), 0) != (ssize_t)sizeof(rng_state) || rng_state == 0)
		rng_state = 0x9E3779B97F4A7C15ULL;
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	if (fr_chunk_builder_new(0, CHUNK, &b) < 0)
		return 1;
	clock_gettime(CLOCK_REALTIME, &now);
	/* fake boottime starts at 1 s; wall = ts + offset */
	int64_t start_wall = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - (int64_t)((ago + span) * 1e9);
	int64_t offset = start_wall - 1000000000LL;

	/* a record's time is its position in the byte budget: the store
	 * ends at now - ago however well the records compress */
	uint64_t ts = 1000000000ULL, written = 0, next_kf = ts;
	double ratio = 0.6; /* disk bytes per encoded byte, from the last chunk */
	for (uint64_t i = 0;; i++) {
		if (keyframes && ts >= next_kf) {
			if (write_keyframe(w, cctx, boot, ts, offset, &written) < 0)
				return 1;
			next_kf = ts + KEYFRAME_INTERVAL;
		}
		struct fr_record r = { .ts = ts, .pid = 1000 + (uint32_t)(i % 5000), .cgroup_id = 1 };
		r.tid = r.pid;
		memcpy(r.comm, "fill", 5);
		r.comm_len = 4;
		if (i % 2 == 0) {
			if (text) {
				size_t l = 0;
				for (unsigned w_ = 0; l < sizeof(args) - 20; w_++) {
					const char *wd = words[(i / 2 + w_ * 7) % 10];
					memcpy(args + l, wd, strlen(wd) + 1);
					l += strlen(wd) + 1;
				}
				memset(args + l, 0, sizeof(args) - l);
			} else
				fill_random(args, sizeof(args));
			r.type = FR_REC_EXEC;
			r.exec.filename = "/usr/bin/fill";
			r.exec.filename_len = 13;
			r.exec.args = args;
			r.exec.args_len = sizeof(args);
		} else {
			r.type = FR_REC_SYSCALL;
			r.syscall.nr = (uint32_t)(i % 300);
			r.syscall.duration_ns = 100000000ULL + i % 999983;
		}
		if (fr_chunk_builder_add(b, &r) == -ENOBUFS) {
			void *buf;
			size_t len;
			size_t raw = fr_chunk_builder_raw_size(b);
			if (fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len) < 0)
				return 1;
			ratio = (double)len / (double)raw;
			((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64((uint64_t)offset);
			if (fr_store_writer_append(w, buf, len) < 0)
				return 1;
			fr_store_writer_submit(w);
			fr_store_writer_process(w);
			written += len;
			if (written >= bytes)
				break;
			(void)fr_chunk_builder_add(b, &r);
		}
		double pos = ((double)written + ratio * (double)fr_chunk_builder_raw_size(b)) / (double)bytes;
		ts = 1000000000ULL + (uint64_t)(span * 1e9 * (pos < 1 ? pos : 1));
	}
	fr_store_writer_close(w);
	printf("fr-store-fill: %llu bytes over %.0f s\n", (unsigned long long)written,
	       (double)(ts - 1000000000ULL) / 1e9);
	fr_chunk_builder_free(b);
	ZSTD_freeCCtx(cctx);
	return 0;
}
