/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test tool: writes the same store every time, through the real writer,
 * for tests that compare frctl's outputs with outputs kept in the tree
 * (tests/integration/test-window-golden.sh).  Fixed boot id, fixed wall
 * times (2026-01-01), no randomness.  It holds what makes reading a window
 * hard: two CPUs whose records tie in time, a CPU whose records are out of
 * order inside its chunks, a nearly idle CPU whose chunks span many
 * slices, keyframes every second, execs, forks and exits that rename
 * pids, samples and off-CPU waits with stacks named by each chunk's code
 * records, cgroups, marks, gaps, block I/O; small chunks, so that a window
 * is hundreds of them and several of the reader's slices.
 *   fr-store-golden DIR
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "boot-host.h"
#include "chunk.h"
#include "store-format.h"
#include "store-writer.h"

#define CHUNK (4u << 10)
#define MS 1000000ULL
#define T0 5000000000ULL /* boottime of the first record */
#define WALL_T0 1767225600000000000ULL /* 2026-01-01T00:00:00Z */
#define ITERATIONS 6000

enum { CPU_TIE_A, CPU_TIE_B, CPU_SAMPLES, CPU_JITTER, CPU_SPARSE, NCPUS };

static const uint8_t boot[16] = { 0x60, 0x1d, 0xe5, 0x70, 0x4e, 0x00, 0x11, 0x22,
				  0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa };
static struct fr_store_writer *writer;
static ZSTD_CCtx *cctx;
static struct fr_chunk_builder *b[NCPUS + 1]; /* and the keyframes' */
static uint64_t seqnum;

static void die(const char *what, int k)
{
	fprintf(stderr, "fr-store-golden: %s: %s\n", what, strerror(k < 0 ? -k : k));
	exit(1);
}

static void flush(struct fr_chunk_builder *c)
{
	void *buf;
	size_t len;
	int k;

	if (fr_chunk_builder_count(c) == 0)
		return;
	if ((k = fr_chunk_builder_close(c, cctx, seqnum++, boot, &buf, &len)) < 0)
		die("close chunk", k);
	((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64(WALL_T0 - T0);
	if ((k = fr_store_writer_append(writer, buf, len)) < 0)
		die("append", k);
	fr_store_writer_submit(writer);
	fr_store_writer_process(writer);
}

static struct fr_record rec(uint16_t type, uint64_t ts, uint32_t pid)
{
	struct fr_record r = { .type = type, .ts = ts, .pid = pid, .tid = pid, .cgroup_id = 100 + pid % 3 };

	r.comm_len = (uint8_t)snprintf(r.comm, sizeof(r.comm), "p%u", pid);
	return r;
}

/* What a chunk says first, at the time of its first record @ts: the code
 * its stacks run and the cgroups its records name. */
static void describe(struct fr_chunk_builder *c, uint64_t ts)
{
	static const char *cgroups[] = { "/system.slice/a.service", "/system.slice/b.service", "/user.slice" };
	struct fr_record r;

	for (uint32_t pid = 1; pid <= 20; pid++) {
		r = rec(FR_REC_MAPPING, ts, pid);
		r.mapping.start = 0x555500001000ULL;
		r.mapping.end = 0x555500003000ULL;
		r.mapping.offset = r.mapping.vaddr = 0x1000;
		r.mapping.path = "/usr/bin/app";
		r.mapping.path_len = 12;
		fr_chunk_builder_add(c, &r);
		for (unsigned f = 0; f < 4; f++) {
			static const char *names[] = { "main", "serve", "parse", "compute" };
			r = rec(FR_REC_SYMBOL, ts, pid);
			r.symbol.start = 0x555500001000ULL + f * 0x100;
			r.symbol.size = 0x100;
			r.symbol.name = names[f];
			r.symbol.name_len = (uint32_t)strlen(names[f]);
			r.symbol.module = "";
			fr_chunk_builder_add(c, &r);
		}
	}
	r = rec(FR_REC_SYMBOL, ts, 0);
	r.symbol.start = 0xffffffff81001000ULL;
	r.symbol.size = 0x200;
	r.symbol.name = "do_syscall_64";
	r.symbol.name_len = 13;
	r.symbol.module = "";
	fr_chunk_builder_add(c, &r);
	for (unsigned i = 0; i < 3; i++) {
		r = rec(FR_REC_CGROUP, ts, 0);
		r.cgroup_id = 100 + i;
		r.cgroup.path = cgroups[i];
		r.cgroup.path_len = (uint32_t)strlen(cgroups[i]);
		fr_chunk_builder_add(c, &r);
	}
}

static void add(unsigned cpu, const struct fr_record *r)
{
	struct fr_chunk_builder *c = b[cpu];

	if (fr_chunk_builder_count(c) == 0)
		describe(c, r->ts);
	if (fr_chunk_builder_add(c, r) == -ENOBUFS) {
		flush(c);
		describe(c, r->ts);
		if (fr_chunk_builder_add(c, r) < 0)
			die("add", -ENOBUFS);
	}
}

static void keyframe(uint64_t ts)
{
	char exe[32];

	for (uint32_t pid = 1; pid <= 40; pid++) {
		struct fr_record r = rec(FR_REC_PROCESS, ts, pid);

		r.process.exe_len = (uint32_t)snprintf(exe, sizeof(exe), "/usr/bin/kf%u", pid);
		r.process.exe = exe;
		if (pid % 10 == 0) /* a kernel thread */
			r.process.exe_len = 0;
		if (fr_chunk_builder_add(b[NCPUS], &r) < 0)
			die("keyframe", -ENOBUFS);
	}
	flush(b[NCPUS]);
}

int main(int argc, char **argv)
{
	static const uint64_t kf[] = { 0xffffffff81001010ULL, 0xffffffff81001100ULL };
	static const uint64_t uf[][3] = { { 0x555500001310ULL, 0x555500001120ULL, 0x555500001010ULL },
					  { 0x555500001210ULL, 0x555500001120ULL, 0x555500001010ULL },
					  { 0x555500001320ULL, 0x555500001220ULL, 0x555500001010ULL } };
	struct fr_store_params p = { .size = 64u << 20, .nsegments = 4, .max_chunk = CHUNK + 4096 };
	static const char args[] = "app\0--serve\0--port=80";
	char file[32], text[48];
	int k;

	if (argc != 2) {
		fprintf(stderr, "usage: fr-store-golden DIR\n");
		return 2;
	}
	cctx = ZSTD_createCCtx();
	if (!cctx)
		die("zstd", -ENOMEM);
	if ((k = fr_store_writer_open(argv[1], &p, NULL, NULL, &writer)) < 0)
		die(argv[1], k);
	for (unsigned c = 0; c < NCPUS; c++)
		if ((k = fr_chunk_builder_new(c, CHUNK, &b[c])) < 0)
			die("builder", k);
	if ((k = fr_chunk_builder_new(FR_CPU_META, 64u << 10, &b[NCPUS])) < 0)
		die("builder", k);

	for (uint32_t i = 0; i < ITERATIONS; i++) {
		uint64_t ts = T0 + 10 * MS + i * MS;
		uint32_t pid = 1 + i % 40;
		struct fr_record r;

		if (i % 1000 == 0)
			keyframe(ts - MS / 2);
		/* two CPUs with records at the very same times */
		for (unsigned c = CPU_TIE_A; c <= CPU_TIE_B; c++) {
			if (i % 97 == 0) {
				r = rec(FR_REC_EXEC, ts, pid);
				r.exec.ppid = 1;
				r.exec.filename_len = (uint32_t)snprintf(file, sizeof(file), "/usr/bin/x%u-%u", c, i);
				r.exec.filename = file;
				r.exec.args = args;
				r.exec.args_len = sizeof(args);
			} else if (i % 61 == 0) {
				r = rec(FR_REC_FORK, ts, pid);
				r.fork.child_pid = 1 + (i + 7) % 40;
			} else if (i % 89 == 0) {
				r = rec(FR_REC_EXIT, ts, 1 + (i + 13) % 40);
				r.exit.status = (i % 3) << 8;
			} else if (i % 500 == 0 && c == CPU_TIE_A) {
				r = rec(FR_REC_MARK, ts, pid);
				r.mark.text_len = (uint32_t)snprintf(text, sizeof(text), "mark %u", i);
				r.mark.text = text;
			} else {
				r = rec(FR_REC_SYSCALL, ts, c == CPU_TIE_A ? pid : 1 + (i + 20) % 40);
				r.syscall.nr = i % 300;
				r.syscall.duration_ns = (uint64_t)i * 1000 + c;
				r.syscall.ret = (int64_t)(i % 5) - 2;
			}
			add(c, &r);
		}
		/* samples, and now and then a wait, with stacks */
		if (i % 3 == 0) {
			r = rec(i % 50 == 0 ? FR_REC_OFFCPU : FR_REC_SAMPLE, ts, pid);
			r.stack.kernel_frames = i % 2 ? 2 : 0;
			r.stack.user_frames = 3;
			r.stack.kframes = kf;
			r.stack.uframes = uf[i % 3];
			if (r.type == FR_REC_OFFCPU) {
				r.sched.duration_ns = 5 * MS + i;
				r.sched.syscall_nr = 7;
			}
			add(CPU_SAMPLES, &r);
		}
		/* records out of order inside a chunk */
		r = rec(FR_REC_SYSCALL, ts + (i % 7) * MS - 2 * MS, 1 + (i + 5) % 40);
		r.syscall.nr = 1;
		r.syscall.duration_ns = 2000;
		add(CPU_JITTER, &r);
		/* a CPU that is nearly idle: its chunks span many slices */
		if (i % 150 == 0) {
			r = rec(FR_REC_BLOCK, ts, pid);
			r.block.dev = 8u << 20;
			r.block.op = 1;
			r.block.sector = i * 8ULL;
			r.block.bytes = 4096;
			r.block.duration_ns = 3 * MS;
			add(CPU_SPARSE, &r);
		}
		/* and waits at the times of the CPUs that tie: its chunks,
		 * long and written late, hold records that tie with where
		 * other chunks begin (where a slice of the reader ends) */
		if (i % 7 == 0) {
			r = rec(FR_REC_RUNQ, ts, 1 + (i + 3) % 40);
			r.sched.duration_ns = 100000 + i;
			r.sched.syscall_nr = -1;
			add(CPU_SPARSE, &r);
		}
		if (i % 1000 == 999) {
			r = rec(FR_REC_GAP, ts, 0);
			r.gap.lost = i;
			add(CPU_SPARSE, &r);
		}
	}
	for (unsigned c = 0; c <= NCPUS; c++) {
		flush(b[c]);
		fr_chunk_builder_free(b[c]);
	}
	if ((k = fr_store_writer_sync(writer)) < 0 || (k = fr_store_writer_drain(writer)) < 0)
		die("sync", k);
	/* recorded on a machine that is not the one reading it: outputs
	 * that name the host must name this one, whatever runs the test */
	{
		const struct fr_boot_host h = { .host = "golden-recorder", .kernel = "6.1.0-golden-amd64",
						.version = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0-golden",
						.machine = "x86_64", .machine_id = "0123456789abcdef0123456789abcdef" };
		if ((k = fr_boot_host_save(fr_store_writer_dir_fd(writer), boot, &h)) < 0)
			die("host", k);
	}
	fr_store_writer_close(writer);
	ZSTD_freeCCtx(cctx);
	return 0;
}
