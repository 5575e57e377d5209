/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes the seed corpora committed under tests/fuzz/corpus/: small valid
 * segment files (every record type, two CPUs, a keyframe chunk; the CPUs'
 * chunks hold an inline record, so they have FR_CHUNK_INCOMPAT_INLINE) and the
 * records inside them, as rows (seed-*) and as the columns a chunk holds
 * (columns-seed-*), in the format of today.  Regenerate with
 *   build-fuzz/tests/fuzz/gen-seeds tests/fuzz/corpus
 * (the files named old-format-* are seeds written before the chunk flag
 * FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL, rows-format-* before
 * FR_CHUNK_INCOMPAT_STREAMS, kept as they were).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "chunk.h"
#include "store-format.h"
#include "store-writer.h"

/* Records go into the chunk and, encoded the same way, into rows and
 * columns (the seeds for fuzz-records). */
struct raw {
	uint8_t buf[8192];
	size_t len;
	struct fr_codec_state st, cst;
	struct fr_record_streams cols;
	uint8_t col_buf[FR_REC_STREAMS][2048];
};

static void add(struct fr_chunk_builder *b, struct raw *raw, const struct fr_record *r)
{
	int n = fr_record_encode(&raw->st, r, raw->buf, sizeof(raw->buf), raw->len);

	if (n > 0)
		raw->len = (size_t)n;
	if (!raw->cols.buf[0])
		for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
			raw->cols.buf[i] = raw->col_buf[i];
			raw->cols.cap[i] = sizeof(raw->col_buf[i]);
		}
	(void)fr_record_encode_streams(&raw->cst, r, &raw->cols, SIZE_MAX);
	fr_chunk_builder_add(b, r);
}

/* The columns as a chunk's content: the stream table, then the streams. */
static int write_columns(const char *path, const struct raw *raw)
{
	uint8_t table[FR_REC_STREAM_TABLE];
	FILE *f = fopen(path, "we");
	int bad;

	if (!f)
		return -1;
	fr_record_streams_table(&raw->cols, table);
	fwrite(table, 1, sizeof(table), f);
	for (unsigned i = 0; i < FR_REC_STREAMS; i++)
		fwrite(raw->cols.buf[i], 1, raw->cols.len[i], f);
	bad = ferror(f);
	return fclose(f) == 0 && !bad ? 0 : -1;
}

static void add_all(struct fr_chunk_builder *b, struct raw *raw, uint64_t ts, unsigned variant)
{
	static const char args[] = "nginx\0-g\0daemon off;";
	struct fr_record r = { .ts = ts, .pid = 100 + variant, .tid = 101 + variant, .cgroup_id = 5 };
	memcpy(r.comm, "nginx", 6);
	r.comm_len = 5;

	r.type = FR_REC_CGROUP;
	r.cgroup.path = "/system.slice/nginx.service";
	r.cgroup.path_len = 27;
	add(b, raw, &r);
	r.type = FR_REC_EXEC;
	r.exec.ppid = 1;
	r.exec.filename = "/usr/sbin/nginx";
	r.exec.filename_len = 15;
	r.exec.args = args;
	r.exec.args_len = sizeof(args) - 1;
	add(b, raw, &r);
	r.type = FR_REC_FORK;
	r.fork.child_pid = 200;
	add(b, raw, &r);
	r.type = FR_REC_SYSCALL;
	r.ts -= 1500000000;
	r.syscall.nr = 0;
	r.syscall.duration_ns = 1500000000;
	r.syscall.ret = -4;
	add(b, raw, &r);
	r.type = FR_REC_EXIT;
	r.ts += 1600000000;
	r.exit.status = variant ? 0x8b : 0x100;
	add(b, raw, &r);
	r.type = FR_REC_GAP;
	r.gap.lost = 42;
	add(b, raw, &r);
	r.type = FR_REC_OFFCPU;
	r.sched.duration_ns = 300000000;
	r.sched.syscall_nr = variant ? 230 : -1;
	/* who woke it (in its extension): a thread, with its stacks */
	static const uint64_t wkf[] = { 0xffffffff81002020ULL, 0xffffffff81000080ULL }, wuf[] = { 0x555500002208ULL };
	if (variant)
		r.sched.waker = (struct fr_record_waker){
			.context = FR_WAKER_IS_TASK, .pid = 300, .tid = 301, .comm = "waker", .comm_len = 5,
			.delay_ns = 250000000,
			.stack = { .kernel_frames = 2, .user_frames = 1, .kframes = wkf, .uframes = wuf },
		};
	add(b, raw, &r);
	r.sched.waker = (struct fr_record_waker){};

	static const uint64_t kf[] = { 0xffffffff81001010ULL, 0xffffffff81000040ULL };
	/* the user stack ends in a marker, as the unwinder ends one it cannot
	 * follow further */
	static const uint64_t uf[] = { 0x555500001104ULL, 0x555500001180ULL, 0x7f0000001000ULL, FR_FRAME_TRUNCATED };
	static const char inlined[] = "ngx_event_expire_timers\0ngx_event_find_timer";
	static const uint8_t bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	r.type = FR_REC_MAPPING;
	r.mapping.start = 0x555500001000ULL;
	r.mapping.end = 0x555500002000ULL;
	r.mapping.offset = r.mapping.vaddr = 0x1000;
	r.mapping.path = "/usr/sbin/nginx";
	r.mapping.path_len = 15;
	r.mapping.build_id = bid;
	r.mapping.build_id_len = sizeof(bid);
	add(b, raw, &r);
	r.type = FR_REC_SYMBOL;
	r.symbol.start = 0x555500001100ULL;
	r.symbol.size = 0x80;
	r.symbol.name = "ngx_process_events";
	r.symbol.name_len = 18;
	r.symbol.module = "";
	r.symbol.module_len = 0;
	add(b, raw, &r);
	r.pid = 0;
	r.symbol.start = 0xffffffff81001000ULL;
	r.symbol.size = 0x200;
	r.symbol.name = "do_syscall_64";
	r.symbol.name_len = 13;
	add(b, raw, &r);
	/* the functions inlined at the first user frame (a return address:
	 * looked up one byte back) */
	r.pid = 100 + variant;
	r.type = FR_REC_INLINE;
	r.inl.addr = uf[0] - 1;
	r.inl.names = inlined;
	r.inl.names_len = sizeof(inlined) - 1;
	add(b, raw, &r);
	r.type = FR_REC_SAMPLE;
	r.stack.kernel_frames = 2;
	r.stack.user_frames = 4;
	r.stack.kframes = kf;
	r.stack.uframes = uf;
	add(b, raw, &r);
	/* a Python code object, and a sample with Python frames (issue 47):
	 * one named by it, one not */
	{
		struct fr_record c = { .type = FR_REC_PYCODE, .ts = r.ts, .pid = r.pid };
		static uint64_t pf[3];
		pf[0] = uf[0];
		pf[1] = fr_frame_python(0x7f0000001230ULL, 42);
		pf[2] = fr_frame_python(0x7f0000002000ULL, 0);
		c.pycode.code = 0x7f0000001230ULL;
		c.pycode.firstlineno = 40;
		c.pycode.name = "Handler.get";
		c.pycode.name_len = 11;
		c.pycode.file = "app/views.py";
		c.pycode.file_len = 12;
		add(b, raw, &c);
		r.stack.user_frames = 3;
		r.stack.uframes = pf;
		add(b, raw, &r);
	}
}

int main(int argc, char **argv)
{
	char store[512], cmd[1200];
	uint8_t boot[16] = { 0xb0, 0x07 };
	ZSTD_CCtx *cctx = ZSTD_createCCtx();

	if (argc != 2) {
		fprintf(stderr, "usage: gen-seeds CORPUS_DIR\n");
		return 2;
	}
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/records' '%s/segment'", argv[1], argv[1]);
	if (system(cmd) != 0)
		return 1;
	for (unsigned seed = 0; seed < 3; seed++) {
		struct fr_store_params p = { .size = 4u << 20, .nsegments = 2, .max_chunk = 8192 };
		struct fr_store_writer *w;
		snprintf(store, sizeof(store), "%s/tmp-store", argv[1]);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store);
		if (system(cmd) != 0 || fr_store_writer_open(store, &p, NULL, NULL, &w) < 0)
			return 1;
		for (unsigned c = 0; c <= seed; c++) {
			struct fr_chunk_builder *b;
			/* encoded as the builder encodes the chunk */
			static struct raw raw;
			raw = (struct raw){ .st.incompat_flags = FR_CHUNK_INCOMPAT_WRITE,
					    .cst.incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
			FILE *f;
			void *buf;
			size_t len;
			uint32_t cpu = c == 2 ? FR_CPU_META : c;
			fr_chunk_builder_new(cpu, 4096, &b);
			if (cpu == FR_CPU_META) {
				struct fr_record r = { .type = FR_REC_PROCESS, .ts = 5000000000ULL, .pid = 1 };
				r.process.exe = "/sbin/init";
				r.process.exe_len = 10;
				r.process.args = "init";
				r.process.args_len = 4;
				add(b, &raw, &r);
			} else
				add_all(b, &raw, 3000000000ULL + c * 1000, seed + c);
			snprintf(cmd, sizeof(cmd), "%s/records/seed-%u-%u", argv[1], seed, c);
			f = fopen(cmd, "we");
			if (!f || fwrite(raw.buf, 1, raw.len, f) != raw.len || fclose(f) != 0)
				return 1;
			snprintf(cmd, sizeof(cmd), "%s/records/columns-seed-%u-%u", argv[1], seed, c);
			if (write_columns(cmd, &raw) < 0)
				return 1;
			fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len);
			fr_store_writer_append(w, buf, len);
			fr_chunk_builder_free(b);
		}
		fr_store_writer_close(w);
		snprintf(cmd, sizeof(cmd), "cp '%s/segments/0000.frs' '%s/segment/seed-%u' && rm -rf '%s'",
			 store, argv[1], seed, store);
		if (system(cmd) != 0)
			return 1;
	}
	ZSTD_freeCCtx(cctx);
	return 0;
}
