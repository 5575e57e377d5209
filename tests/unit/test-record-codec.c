/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record codec: every type round-trips, in the chunk format of today
 * and in the one before FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL (stores and
 * incidents written before must read as they did); truncated or corrupted
 * input is refused without reading outside the buffer.  Records written in
 * columns (FR_CHUNK_INCOMPAT_STREAMS) come back as the very rows the row
 * encoder makes, and damaged streams are refused.  Through a real store:
 * chunks of every format read back, and a chunk with an incompatible flag
 * this reader does not know is refused, not misread.  Inline records
 * (FR_REC_INLINE): bounded names, and the chunk flag that keeps older
 * readers from misreading chunks that hold them.  Full mode's batches of
 * switch events encode as their records one by one would. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>

#include "../bpf/event.h"
#include "chunk.h"
#include "macro.h"
#include "record.h"
#include "store-format.h"
#include "store-reader.h"
#include "store-writer.h"
#include "window.h"
#include "test.h"

/* The chunk flags of the formats: before syscall numbers, with them, and
 * with offcpu stacks besides */
#define NEW FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL
#define OLD 0u
#define STACKS (NEW | FR_CHUNK_INCOMPAT_OFFCPU_STACK)
static const uint32_t formats[] = { OLD, NEW, STACKS };

static const char args[] = "ls\0-l\0/tmp";
static const uint16_t types[] = { FR_REC_EXEC, FR_REC_EXIT, FR_REC_FORK, FR_REC_SYSCALL, FR_REC_GAP,
				  FR_REC_CGROUP, FR_REC_PROCESS, FR_REC_OFFCPU, FR_REC_RUNQ, FR_REC_BLOCK,
				  FR_REC_OOM, FR_REC_SIGNAL, FR_REC_TCP, FR_REC_MARK, FR_REC_METRICS,
				  FR_REC_SWITCH, FR_REC_TRIGGER, FR_REC_SAMPLE, FR_REC_MAPPING, FR_REC_SYMBOL,
				  FR_REC_INLINE };
static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint64_t kstack[] = { 0xffffffff81000010ULL, 0xffffffff81234567ULL, 0xffffffff81000000ULL };
static const uint64_t ustack[] = { 0x55d0c0de1234ULL, 0x55d0c0de0100ULL, 0x7f0011223344ULL, 0x1ULL };
#define NTYPES (sizeof(types) / sizeof(types[0]))

static void fill(struct fr_record *r, unsigned i)
{
	memset(r, 0, sizeof(*r));
	r->type = types[i % NTYPES];
	/* non-monotonic timestamps: syscall records are stamped at their start */
	r->ts = 1000000000ULL + (i % 3 == 1 ? 0 : i * 7919ULL);
	r->pid = 1000 + i;
	r->tid = i % 2 ? r->pid : r->pid + 3;
	r->cgroup_id = i * 13;
	snprintf(r->comm, sizeof(r->comm), "comm%u", i);
	r->comm_len = (uint8_t)strlen(r->comm);
	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC:
		r->exec.ppid = 1;
		r->exec.filename = "/usr/bin/ls";
		r->exec.filename_len = 11;
		r->exec.args = args;
		r->exec.args_len = sizeof(args) - 1;
		r->flags = FR_REC_F_ARGS_CUT;
		break;
	case FR_REC_EXIT: r->exit.status = 0x8b; break;
	case FR_REC_FORK: r->fork.child_pid = 4242; break;
	case FR_REC_SYSCALL:
		r->syscall.nr = 0;
		r->syscall.duration_ns = 1500000000ULL + i;
		r->syscall.ret = -4;
		break;
	case FR_REC_GAP: r->gap.lost = 77; break;
	case FR_REC_CGROUP:
		r->cgroup.path = "/system.slice/x.service";
		r->cgroup.path_len = 23;
		break;
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ: {
		/* none, read, clock_nanosleep, the largest; runq records never
		 * carry one */
		static const int32_t nr[] = { -1, 0, 230, INT32_MAX };
		r->sched.duration_ns = 123456789 + i;
		r->sched.syscall_nr = nr[(i / NTYPES) % 4];
		if (r->type == FR_REC_OFFCPU && i % 3) { /* some have no stack */
			r->stack.kernel_frames = i % 2 ? 3 : 0;
			r->stack.user_frames = 4;
			r->stack.kframes = kstack;
			r->stack.uframes = ustack;
		}
		/* some have a waker: a thread with its stacks, or an
		 * interrupt with a kernel stack only, or none taken */
		if (r->type == FR_REC_OFFCPU && i % 4) {
			struct fr_record_waker *k = &r->sched.waker;
			k->context = (uint8_t)(1 + i % (FR_WAKER_KINDS - 1));
			k->no_stack = i % 5 == 0;
			k->pid = 4000000 + i;
			k->tid = 40 + i;
			k->comm = "waker";
			k->comm_len = 5;
			k->delay_ns = 1500000000ULL + i;
			k->stack.kernel_frames = k->no_stack ? 0 : 3;
			k->stack.user_frames = k->context == FR_WAKER_IS_TASK && !k->no_stack ? 4 : 0;
			k->stack.kframes = kstack;
			k->stack.uframes = ustack;
		}
		break;
	}
	case FR_REC_BLOCK:
		r->block.dev = (8u << 20) | 16;
		r->block.op = 1;
		r->block.sector = 1ULL << 40;
		r->block.bytes = 1 << 20;
		r->block.error = -5;
		r->block.duration_ns = 2000000;
		break;
	case FR_REC_OOM:
		r->oom.rss_kb = 65536;
		r->oom.memcg_id = 4242;
		r->oom.memcg = "/fr-oom";
		r->oom.memcg_len = 7;
		break;
	case FR_REC_SIGNAL:
		r->signal.sig = 11;
		r->signal.sender_pid = 99;
		r->signal.code = -6;
		r->signal.result = 0;
		r->signal.sender_comm = "kernel";
		r->signal.sender_comm_len = 6;
		break;
	case FR_REC_TCP:
		r->tcp.event = 1;
		r->tcp.state = 1;
		r->tcp.family = i % 2 ? 2 : 10;
		r->tcp.sport = 443;
		r->tcp.dport = 51234;
		for (int k = 0; k < (r->tcp.family == 10 ? 16 : 4); k++) {
			r->tcp.saddr[k] = (uint8_t)(k + 1);
			r->tcp.daddr[k] = (uint8_t)(200 - k);
		}
		break;
	case FR_REC_SAMPLE:
		r->stack.kernel_frames = i % 2 ? 3 : 0;
		r->stack.user_frames = 4;
		r->stack.kframes = kstack;
		r->stack.uframes = ustack;
		break;
	case FR_REC_TRIGGER:
		r->trigger.rule = "slow-fsync";
		r->trigger.rule_len = 10;
		r->trigger.incident = "20261121T120000Z-slow-fsync";
		r->trigger.incident_len = 27;
		r->trigger.cause_type = FR_REC_OFFCPU;
		r->trigger.cause_ago_ns = 2500000000LL;
		break;
	case FR_REC_SWITCH:
		r->sw.prev_state = 1;
		r->sw.next_pid = 300;
		r->sw.next_tid = 301;
		r->sw.next_comm = "kworker/0:1";
		r->sw.next_comm_len = 11;
		break;
	case FR_REC_MARK:
		r->mark.text = "deploy v1.2.3 started";
		r->mark.text_len = 21;
		break;
	case FR_REC_METRICS:
		r->metrics.json = "{\"load\":[0.1,0.2,0.3]}";
		r->metrics.json_len = 22;
		break;
	case FR_REC_PROCESS:
		r->process.ppid = 77;
		r->process.exe = "/usr/sbin/sshd";
		r->process.exe_len = 14;
		r->process.args = args;
		r->process.args_len = sizeof(args) - 1;
		break;
	case FR_REC_MAPPING:
		r->mapping.start = 0x7f0011200000ULL + i * 4096;
		r->mapping.end = r->mapping.start + 0x180000;
		r->mapping.offset = 0x26000;
		r->mapping.vaddr = 0x26000 + i;
		r->mapping.path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
		r->mapping.path_len = 35;
		r->mapping.build_id = build_id;
		r->mapping.build_id_len = i % 2 ? 20 : 0;
		break;
	case FR_REC_SYMBOL:
		r->symbol.start = i % 2 ? 0xffffffff81234560ULL : 0x55d0c0de1200ULL;
		r->symbol.size = 0x1f0;
		r->symbol.name = "do_syscall_64";
		r->symbol.name_len = 13;
		r->symbol.module = i % 3 ? "" : "ext4";
		r->symbol.module_len = i % 3 ? 0 : 4;
		break;
	case FR_REC_INLINE: {
		/* one name, and three (the innermost first) */
		static const char names[] = "std::vector<int>::size\0inner\0middle";
		r->inl.addr = 0x55d0c0de1233ULL + i;
		r->inl.names = i % 2 ? names : names + 23;
		r->inl.names_len = i % 2 ? sizeof(names) - 1 : 5;
		break;
	}
	case FR_REC_PYCODE: /* not in types[]: all extension, check_pycode() */
		break;
	}
}



/* @b decoded from @a encoded in a chunk with @flags */
/* @b, decoded, has the stack of @a (fill()'s frames) */
static void check_frames(const struct fr_record *a, const struct fr_record *b)
{
	uint64_t f[FR_SAMPLE_FRAMES_MAX];

	CHECK_EQ(a->stack.kernel_frames, b->stack.kernel_frames);
	CHECK_EQ(a->stack.user_frames, b->stack.user_frames);
	CHECK_EQ(fr_record_frames(b, f, FR_SAMPLE_FRAMES_MAX), a->stack.kernel_frames + a->stack.user_frames);
	for (unsigned k = 0; k < a->stack.kernel_frames; k++)
		CHECK(f[k] == kstack[k]);
	for (unsigned k = 0; k < a->stack.user_frames; k++)
		CHECK(f[a->stack.kernel_frames + k] == ustack[k]);
}

/* Offcpu record @b's waker is @a's, its frames too. */
static void check_waker(const struct fr_record *a, const struct fr_record *b)
{
	const struct fr_record_waker *x = &a->sched.waker, *y = &b->sched.waker;
	struct fr_record va, vb;

	CHECK_EQ(x->context, y->context);
	if (!x->context)
		return;
	CHECK_EQ(x->no_stack, y->no_stack);
	CHECK_EQ(x->pid, y->pid);
	CHECK_EQ(x->tid, y->tid);
	CHECK_EQ(x->comm_len, y->comm_len);
	CHECK(memcmp(x->comm, y->comm, x->comm_len) == 0);
	CHECK_EQ(x->delay_ns, y->delay_ns);
	fr_record_waker_view(a, &va);
	fr_record_waker_view(b, &vb);
	CHECK_EQ(vb.pid, x->pid);
	CHECK_EQ(vb.ts, b->ts + x->delay_ns);
	check_frames(&va, &vb);
}

static void check_same(const struct fr_record *a, const struct fr_record *b, uint32_t flags)
{
	CHECK_EQ(a->type, b->type);
	CHECK_EQ(a->flags, b->flags);
	CHECK_EQ(a->ts, b->ts);
	CHECK_EQ(a->pid, b->pid);
	CHECK_EQ(a->tid, b->tid);
	CHECK_EQ(a->cgroup_id, b->cgroup_id);
	CHECK_STR(a->comm, b->comm);
	switch ((enum fr_record_type)a->type) {
	case FR_REC_EXEC:
		CHECK_EQ(a->exec.ppid, b->exec.ppid);
		CHECK_EQ(a->exec.filename_len, b->exec.filename_len);
		CHECK(memcmp(a->exec.filename, b->exec.filename, a->exec.filename_len) == 0);
		CHECK_EQ(a->exec.args_len, b->exec.args_len);
		CHECK(memcmp(a->exec.args, b->exec.args, a->exec.args_len) == 0);
		break;
	case FR_REC_EXIT: CHECK_EQ(a->exit.status, b->exit.status); break;
	case FR_REC_FORK: CHECK_EQ(a->fork.child_pid, b->fork.child_pid); break;
	case FR_REC_SYSCALL:
		CHECK_EQ(a->syscall.nr, b->syscall.nr);
		CHECK_EQ(a->syscall.duration_ns, b->syscall.duration_ns);
		CHECK_EQ(a->syscall.ret, b->syscall.ret);
		break;
	case FR_REC_GAP: CHECK_EQ(a->gap.lost, b->gap.lost); break;
	case FR_REC_CGROUP:
		CHECK_EQ(a->cgroup.path_len, b->cgroup.path_len);
		CHECK(memcmp(a->cgroup.path, b->cgroup.path, a->cgroup.path_len) == 0);
		break;
	case FR_REC_OFFCPU:
		CHECK_EQ(a->sched.duration_ns, b->sched.duration_ns);
		CHECK_EQ(b->sched.syscall_nr, flags & NEW ? a->sched.syscall_nr : -1);
		/* the task state: an extension, in chunks that have them */
		CHECK_EQ(b->sched.state, flags & FR_CHUNK_INCOMPAT_RECORD_EXT ? a->sched.state : 0u);
		CHECK_EQ(b->sched.kthread, flags & FR_CHUNK_INCOMPAT_RECORD_EXT ? a->sched.kthread : false);
		/* and who woke it */
		if (flags & FR_CHUNK_INCOMPAT_RECORD_EXT)
			check_waker(a, b);
		else
			CHECK_EQ(b->sched.waker.context, 0);
		if (flags & FR_CHUNK_INCOMPAT_OFFCPU_STACK)
			check_frames(a, b);
		else
			CHECK(b->stack.kernel_frames == 0 && b->stack.user_frames == 0);
		break;
	case FR_REC_RUNQ:
		CHECK_EQ(a->sched.duration_ns, b->sched.duration_ns);
		CHECK_EQ(b->sched.syscall_nr, -1);
		break;
	case FR_REC_BLOCK:
		CHECK(memcmp(&a->block, &b->block, sizeof(a->block)) == 0);
		break;
	case FR_REC_OOM:
		CHECK_EQ(a->oom.rss_kb, b->oom.rss_kb);
		CHECK_EQ(a->oom.memcg_id, b->oom.memcg_id);
		CHECK(a->oom.memcg_len == b->oom.memcg_len && !memcmp(a->oom.memcg, b->oom.memcg, a->oom.memcg_len));
		break;
	case FR_REC_SIGNAL:
		CHECK_EQ(a->signal.sig, b->signal.sig);
		CHECK_EQ(a->signal.sender_pid, b->signal.sender_pid);
		CHECK_EQ(a->signal.code, b->signal.code);
		CHECK(a->signal.sender_comm_len == b->signal.sender_comm_len &&
		      !memcmp(a->signal.sender_comm, b->signal.sender_comm, a->signal.sender_comm_len));
		break;
	case FR_REC_TCP:
		CHECK(memcmp(&a->tcp, &b->tcp, sizeof(a->tcp)) == 0);
		break;
	case FR_REC_SAMPLE:
		check_frames(a, b);
		break;
	case FR_REC_TRIGGER:
		CHECK(a->trigger.rule_len == b->trigger.rule_len && !memcmp(a->trigger.rule, b->trigger.rule, a->trigger.rule_len));
		CHECK(a->trigger.incident_len == b->trigger.incident_len &&
		      !memcmp(a->trigger.incident, b->trigger.incident, a->trigger.incident_len));
		/* the cause where the chunk has it, else nothing */
		if (flags & FR_CHUNK_INCOMPAT_TRIGGER_CAUSE) {
			CHECK_EQ(a->trigger.cause_type, b->trigger.cause_type);
			CHECK_EQ(a->trigger.cause_ago_ns, b->trigger.cause_ago_ns);
		} else
			CHECK(b->trigger.cause_type == 0 && b->trigger.cause_ago_ns == 0);
		break;
	case FR_REC_SWITCH:
		CHECK_EQ(a->sw.prev_state, b->sw.prev_state);
		CHECK_EQ(a->sw.next_pid, b->sw.next_pid);
		CHECK_EQ(a->sw.next_tid, b->sw.next_tid);
		CHECK(a->sw.next_comm_len == b->sw.next_comm_len && !memcmp(a->sw.next_comm, b->sw.next_comm, a->sw.next_comm_len));
		break;
	case FR_REC_MARK:
		CHECK(a->mark.text_len == b->mark.text_len && !memcmp(a->mark.text, b->mark.text, a->mark.text_len));
		break;
	case FR_REC_METRICS:
		CHECK(a->metrics.json_len == b->metrics.json_len &&
		      !memcmp(a->metrics.json, b->metrics.json, a->metrics.json_len));
		break;
	case FR_REC_MAPPING:
		CHECK_EQ(a->mapping.start, b->mapping.start);
		CHECK_EQ(a->mapping.end, b->mapping.end);
		CHECK_EQ(a->mapping.offset, b->mapping.offset);
		CHECK_EQ(a->mapping.vaddr, b->mapping.vaddr);
		CHECK(a->mapping.path_len == b->mapping.path_len && !memcmp(a->mapping.path, b->mapping.path, a->mapping.path_len));
		CHECK(a->mapping.build_id_len == b->mapping.build_id_len &&
		      !memcmp(a->mapping.build_id, b->mapping.build_id, a->mapping.build_id_len));
		break;
	case FR_REC_SYMBOL:
		CHECK_EQ(a->symbol.start, b->symbol.start);
		CHECK_EQ(a->symbol.size, b->symbol.size);
		CHECK(a->symbol.name_len == b->symbol.name_len && !memcmp(a->symbol.name, b->symbol.name, a->symbol.name_len));
		CHECK(a->symbol.module_len == b->symbol.module_len &&
		      !memcmp(a->symbol.module, b->symbol.module, a->symbol.module_len));
		break;
	case FR_REC_INLINE:
		CHECK_EQ(a->inl.addr, b->inl.addr);
		CHECK(a->inl.names_len == b->inl.names_len && !memcmp(a->inl.names, b->inl.names, a->inl.names_len));
		break;
	case FR_REC_PROCESS:
		CHECK_EQ(a->process.ppid, b->process.ppid);
		CHECK_EQ(a->process.exe_len, b->process.exe_len);
		CHECK(memcmp(a->process.exe, b->process.exe, a->process.exe_len) == 0);
		CHECK_EQ(a->process.args_len, b->process.args_len);
		CHECK(memcmp(a->process.args, b->process.args, a->process.args_len) == 0);
		break;
	case FR_REC_PYCODE: /* check_pycode() */
		break;
	}
}

/* The bytes of an offcpu record (pid 7, "ab", ts 1000, 300 ms), then
 * a gap record (lost 5, ts 1001): as the writer of the format before the
 * flag wrote them, and as it writes them now in a chunk with the flag. */
static const uint8_t old_bytes[] = {
	FR_REC_OFFCPU, 0, 0xd0, 0x0f, 7, 0, 0, 2, 'a', 'b', 0x80, 0xc6, 0x86, 0x8f, 0x01,
	FR_REC_GAP, 0, 0x02, 0, 0, 0, 0, 5,
};
static const uint8_t new_bytes[] = {
	FR_REC_OFFCPU, 0, 0xd0, 0x0f, 7, 0, 0, 2, 'a', 'b', 0x80, 0xc6, 0x86, 0x8f, 0x01, 0xcc, 0x03,
	FR_REC_GAP, 0, 0x02, 0, 0, 0, 0, 5,
};

static void check_golden(const uint8_t *bytes, size_t len, uint32_t flags, int32_t nr)
{
	struct fr_codec_state d = { .incompat_flags = flags };
	struct fr_record out;
	size_t p = 0;

	CHECK_EQ(fr_record_decode(&d, bytes, len, &p, &out), 0);
	CHECK_EQ(out.type, FR_REC_OFFCPU);
	CHECK_EQ(out.ts, 1000);
	CHECK_EQ(out.pid, 7);
	CHECK_STR(out.comm, "ab");
	CHECK_EQ(out.sched.duration_ns, 300000000);
	CHECK_EQ(out.sched.syscall_nr, nr);
	/* the next record starts where this one ended */
	CHECK_EQ(fr_record_decode(&d, bytes, len, &p, &out), 0);
	CHECK_EQ(out.type, FR_REC_GAP);
	CHECK_EQ(out.ts, 1001);
	CHECK_EQ(out.gap.lost, 5);
	CHECK_EQ(p, len);
}

/* A chunk as fr_chunk_builder_close() makes one, of @raw encoded by hand
 * with @incompat (the builder encodes today's format only). */
static void *make_chunk(const uint8_t *raw, size_t raw_len, uint32_t nrecords, uint64_t first_ts,
			uint64_t last_ts, uint32_t incompat, size_t *ret_len)
{
	size_t bound = ZSTD_compressBound(raw_len), z;
	uint8_t *buf = calloc(1, sizeof(struct fr_chunk_header) + bound + 8);
	struct fr_chunk_header h = {};

	CHECK(buf != NULL);
	z = ZSTD_compress(buf + sizeof(h), bound, raw, raw_len, 1);
	CHECK(!ZSTD_isError(z));
	memcpy(h.magic, FR_CHUNK_MAGIC, FR_MAGIC_LEN);
	h.header_size = htole32(sizeof(h));
	h.version = htole16(FR_STORE_VERSION);
	h.incompat_flags = htole32(incompat);
	h.nrecords = htole32(nrecords);
	h.nevents = htole32(nrecords);
	h.boot_id[0] = 9;
	h.first_ts = htole64(first_ts);
	h.last_ts = htole64(last_ts);
	h.raw_size = htole32((uint32_t)raw_len);
	h.payload_size = htole32((uint32_t)z);
	h.payload_crc = htole32(fr_crc32(buf + sizeof(h), z));
	h.header_crc = htole32(fr_crc32(&h, offsetof(struct fr_chunk_header, header_crc)));
	memcpy(buf, &h, sizeof(h));
	*ret_len = (sizeof(h) + z + 7) & ~(size_t)7;
	return buf;
}

static struct fr_record offcpu(uint64_t ts, uint32_t pid, int32_t nr)
{
	struct fr_record r = { .type = FR_REC_OFFCPU, .ts = ts, .pid = pid, .tid = pid };

	r.comm_len = (uint8_t)snprintf(r.comm, sizeof(r.comm), "p%u", pid);
	r.sched.duration_ns = 1000000ULL * pid;
	r.sched.syscall_nr = nr;
	return r;
}

/* A store holding a chunk of today's format (made by the builder), one of
 * the format before the flag, and one with an incompatible flag after the
 * known ones: what a reader makes of them, loaded whole and streamed. */
static void check_store(void)
{
	struct fr_store_params p = { .size = 4u << 20, .nsegments = 4, .max_chunk = 64u << 10 };
	char dir[] = "/tmp/fr-test-codec-XXXXXX";
	const uint32_t unknown = ~FR_CHUNK_INCOMPAT_KNOWN & (FR_CHUNK_INCOMPAT_KNOWN + 1);
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct fr_store_writer *w;
	struct fr_chunk_builder *b;
	uint8_t boot[16] = { 9 }, raw[256];
	void *buf;
	size_t len, rl;

	CHECK(unknown != 0 && !(unknown & FR_CHUNK_INCOMPAT_KNOWN));
	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);

	/* pids 1-3: today's format, through the builder */
	CHECK_EQ(fr_chunk_builder_new(0, 4096, &b), 0);
	struct fr_record now[] = { offcpu(1000, 1, 0), offcpu(1001, 2, -1), offcpu(1002, 3, 230) };
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(fr_chunk_builder_add(b, &now[i]), 0);
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len), 0);
	CHECK_EQ(le32toh(((struct fr_chunk_header *)buf)->incompat_flags), FR_CHUNK_INCOMPAT_WRITE);
	CHECK(FR_CHUNK_INCOMPAT_WRITE & FR_CHUNK_INCOMPAT_STREAMS);
	CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	fr_chunk_builder_free(b);

	/* pid 6: rows with syscall numbers, as stores before columns hold them */
	{
		struct fr_codec_state e = { .incompat_flags = NEW };
		struct fr_record r = offcpu(2500, 6, 7);
		rl = (size_t)fr_record_encode(&e, &r, raw, sizeof(raw), 0);
		buf = make_chunk(raw, rl, 1, 2500, 2500, NEW, &len);
		CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	}

	/* pid 4, then a gap: the format before, as stores hold it */
	{
		struct fr_codec_state e = { .incompat_flags = OLD };
		struct fr_record r = offcpu(2000, 4, 0), g = { .type = FR_REC_GAP, .ts = 2001, .gap.lost = 9 };
		int n = fr_record_encode(&e, &r, raw, sizeof(raw), 0);
		CHECK(n > 0);
		rl = (size_t)fr_record_encode(&e, &g, raw, sizeof(raw), (size_t)n);
		buf = make_chunk(raw, rl, 2, 2000, 2001, OLD, &len);
		CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	}
	/* pid 5: a flag from the future, with a record it would misread */
	{
		struct fr_codec_state e = { .incompat_flags = NEW };
		struct fr_record r = offcpu(3000, 5, 1);
		rl = (size_t)fr_record_encode(&e, &r, raw, sizeof(raw), 0);
		buf = make_chunk(raw, rl, 1, 3000, 3000, NEW | unknown, &len);
		CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	}
	CHECK_EQ(fr_store_writer_sync(w), 0);
	CHECK_EQ(fr_store_writer_drain(w), 0);
	fr_store_writer_close(w);
	ZSTD_freeCCtx(cctx);

	for (int streamed = 0; streamed < 2; streamed++) {
		struct fr_window_query q = { .since_ns = 0, .until_ns = UINT64_MAX, .skip_exe = true };
		struct fr_store_reader_stats rs;
		struct fr_store_reader *r;
		struct fr_window *win;
		int32_t nr[7] = { 99, 99, 99, 99, 99, 99, 99 };
		unsigned seen = 0, gaps = 0;

		CHECK_EQ(fr_store_reader_open(dir, &r), 0);
		CHECK_EQ(streamed ? fr_window_stream_open(r, &q, &win) : fr_window_load(r, &q, &win), 0);
		while (win && (!streamed || fr_window_stream_next(win) > 0)) {
			for (size_t i = 0; i < win->n; i++) {
				struct fr_window_entry e;
				CHECK_EQ(fr_window_get(win, i, &e), 0);
				if (e.r.type == FR_REC_GAP && e.r.gap.lost == 9)
					gaps++;
				if (e.r.type != FR_REC_OFFCPU || e.r.pid < 1 || e.r.pid > 6)
					continue;
				seen++;
				nr[e.r.pid] = e.r.sched.syscall_nr;
				CHECK_EQ(e.r.sched.duration_ns, 1000000ULL * e.r.pid);
			}
			if (!streamed)
				break;
		}
		CHECK_EQ(seen, 5);
		CHECK_EQ(gaps, 1);
		CHECK_EQ(nr[1], 0);
		CHECK_EQ(nr[2], -1);
		CHECK_EQ(nr[3], 230);
		CHECK_EQ(nr[4], -1); /* the old format does not say */
		CHECK_EQ(nr[5], 99); /* never read */
		CHECK_EQ(nr[6], 7);
		CHECK_EQ(win ? win->records_bad : 1, 0);
		fr_store_reader_get_stats(r, &rs);
		CHECK_EQ(rs.chunks_unsupported, 1);
		CHECK_EQ(rs.chunks_damaged, 0);
		fr_window_free(win);
		fr_store_reader_free(r);
	}

	char cmd[100];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ(system(cmd), 0);
}

/* Reads @n records of @content (columns with @flags) into @rows: 0 when
 * all decode, and use the content up exactly. */
static int columns_to_rows(uint32_t flags, uint32_t n, const uint8_t *content, size_t content_len, uint8_t *rows,
			   size_t rows_len)
{
	struct fr_record_iter it;
	struct fr_record r;
	size_t at;
	int k = fr_record_iter_init(&it, flags, content, content_len, rows, rows_len);

	for (uint32_t i = 0; i < n && k == 0; i++)
		k = fr_record_iter_next(&it, &r, &at);
	return k < 0 ? k : fr_record_iter_done(&it) ? 0 : -EBADMSG;
}

/* @lens as a stream table, then the bytes of @streams: a chunk's content */
static uint8_t *content_of(const uint32_t lens[FR_REC_STREAMS], const uint8_t *streams, size_t len, size_t *ret)
{
	uint8_t *c = malloc(FR_REC_STREAM_TABLE + len); /* exact: ASan sees over-reads */

	CHECK(c != NULL);
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		uint32_t le = htole32(lens[i]);
		memcpy(c + 4 * i, &le, 4);
	}
	memcpy(c + FR_REC_STREAM_TABLE, streams, len);
	*ret = FR_REC_STREAM_TABLE + len;
	return c;
}

/* Buffers chunk_read()'s records point into, freed by chunk_read_done(). */
static void *chunk_bufs[8];
static unsigned chunk_nbufs;

static void chunk_read_done(void)
{
	while (chunk_nbufs)
		free(chunk_bufs[--chunk_nbufs]);
}

/* A chunk's header flags, and its records read back (@n of them, into
 * @out, pointing into buffers kept until chunk_read_done()). */
static uint32_t chunk_read(const void *chunk, struct fr_record *out, unsigned n)
{
	struct fr_chunk_info ci;
	struct fr_record_iter it;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	uint8_t *rows, *scratch;
	size_t at;

	CHECK_EQ(fr_chunk_header_parse(chunk, &ci), 0);
	rows = malloc(ci.raw_size);
	scratch = malloc(fr_chunk_content_size(&ci));
	CHECK(rows && scratch && chunk_nbufs + 2 <= 8);
	chunk_bufs[chunk_nbufs++] = rows;
	chunk_bufs[chunk_nbufs++] = scratch;
	CHECK_EQ(fr_chunk_payload_decode(dctx, &ci, (const uint8_t *)chunk + sizeof(struct fr_chunk_header), rows,
					 scratch, &it), 0);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(fr_record_iter_next(&it, &out[i], &at), 0);
	CHECK(fr_record_iter_done(&it));
	ZSTD_freeDCtx(dctx);
	return ci.incompat_flags;
}

/* The stream named @name (fr_record_stream_name()). */
static unsigned stream_named(const char *name)
{
	for (unsigned i = 0; i < FR_REC_STREAMS; i++)
		if (!strcmp(fr_record_stream_name(i), name))
			return i;
	CHECK(!"no such stream");
	return 0;
}

static void put(struct fr_record_streams *st, const char *stream, const void *p, size_t n)
{
	unsigned i = stream_named(stream);

	CHECK(st->len[i] + n <= st->cap[i]);
	memcpy(st->buf[i] + st->len[i], p, n);
	st->len[i] += n;
}

/* Records that say what they add (FR_CHUNK_INCOMPAT_RECORD_EXT, on every
 * chunk written): what a newer writer would make, by hand, in columns
 * and in rows.  A record of a type this reader does not know (90, its
 * fields all in its extension) is skipped and counted, and an extension
 * after the fields of a known type is skipped: the records around come
 * back whole, and the iterator ends clean.  In a chunk of the format
 * before, the same bytes are damage. */
static void check_extensions(void)
{
	static uint8_t sbuf[FR_REC_STREAMS][256], rows[2048];
	struct fr_record_streams st = {};
	struct fr_codec_state e = { .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
	struct fr_record a = offcpu(4, 42, 0), b = offcpu(6, 42, 1), c = offcpu(7, 43, 2), out[4];
	const uint8_t unknown_head[] = { 90, FR_REC_F_EXT }, ts_delta[] = { 2 /* +1, zigzag */ }, pid[] = { 43 },
		      zero[] = { 0 }, comm[] = { 3, 'n', 'e', 'w' }, ext[] = { 5, 'h', 'e', 'l', 'l', 'o' },
		      ext2[] = { 3, 'a', 'b', 'c' };
	uint32_t lens[FR_REC_STREAMS];
	uint8_t streams[FR_REC_STREAMS * 256];
	size_t total = 0, content_len, at[4], p;
	struct fr_record_iter it;
	uint8_t *content;
	int k;

	CHECK(FR_CHUNK_INCOMPAT_WRITE & FR_CHUNK_INCOMPAT_RECORD_EXT);
	a.sched.kthread = true; /* a kernel thread's, state not known: [2, 0, 1] */
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		st.buf[i] = sbuf[i];
		st.cap[i] = sizeof(sbuf[i]);
	}
	CHECK(fr_record_encode_streams(&e, &a, &st, SIZE_MAX) > 0);
	/* type 90 at ts 5: its head, then its extension alone */
	put(&st, "head", unknown_head, 2);
	put(&st, "ts", ts_delta, 1);
	put(&st, "pid", pid, 1);
	put(&st, "tid", zero, 1);
	put(&st, "cgroup", zero, 1);
	put(&st, "comm", comm, sizeof(comm));
	put(&st, "other", ext, sizeof(ext));
	e.prev_ts = 5;
	/* b, blocked in D, with fields a newer writer added after the task
	 * state and flags: this writer's extension is [1, 2], the newer
	 * one's [5, 2, 0, 'a', 'b', 'c'] */
	b.sched.state = FR_TASK_UNINTERRUPTIBLE;
	CHECK(fr_record_encode_streams(&e, &b, &st, SIZE_MAX) > 0);
	CHECK_EQ(st.buf[stream_named("head")][st.len[stream_named("head")] - 1], FR_REC_F_EXT);
	CHECK_EQ(st.buf[stream_named("other")][st.len[stream_named("other")] - 2], 1);
	CHECK_EQ(st.buf[stream_named("other")][st.len[stream_named("other")] - 1], FR_TASK_UNINTERRUPTIBLE);
	st.len[stream_named("other")] -= 2;
	put(&st, "other", (const uint8_t[]){ 5, FR_TASK_UNINTERRUPTIBLE, 0 }, 3);
	put(&st, "other", ext2 + 1, sizeof(ext2) - 1);
	/* no state: no extension, whatever flag the record came with */
	c.flags = FR_REC_F_EXT;
	CHECK(fr_record_encode_streams(&e, &c, &st, SIZE_MAX) > 0);
	CHECK_EQ(st.buf[stream_named("head")][st.len[stream_named("head")] - 1], 0);
	c.flags = 0;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		lens[i] = (uint32_t)st.len[i];
		memcpy(streams + total, st.buf[i], st.len[i]);
		total += st.len[i];
	}
	content = content_of(lens, streams, total, &content_len);

	CHECK_EQ(fr_record_iter_init(&it, FR_CHUNK_INCOMPAT_WRITE, content, content_len, rows, total), 0);
	CHECK_EQ(fr_record_iter_read(&it, out, sizeof(out[0]), at, 4), 3);
	CHECK(fr_record_iter_done(&it));
	CHECK_EQ(it.st.unknown, 1);
	check_same(&a, &out[0], FR_CHUNK_INCOMPAT_WRITE);
	check_same(&b, &out[1], FR_CHUNK_INCOMPAT_WRITE); /* its flags without FR_REC_F_EXT */
	check_same(&c, &out[2], FR_CHUNK_INCOMPAT_WRITE);

	/* the rows the iterator made: the same, one record at a time */
	struct fr_codec_state d = { .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
	p = 0;
	CHECK_EQ(fr_record_decode(&d, rows, total, &p, &out[0]), 0);
	CHECK_EQ(fr_record_decode(&d, rows, total, &p, &out[1]), 1);
	CHECK_EQ(fr_record_decode(&d, rows, total, &p, &out[1]), 0);
	check_same(&b, &out[1], FR_CHUNK_INCOMPAT_WRITE);
	CHECK_EQ(fr_record_decode(&d, rows, total, &p, &out[2]), 0);
	check_same(&c, &out[2], FR_CHUNK_INCOMPAT_WRITE);
	CHECK_EQ(p, total);
	CHECK_EQ(d.unknown, 1);

	/* the format before: type 90 is damage, the record before it reads */
	CHECK_EQ(fr_record_iter_init(&it, FR_CHUNK_INCOMPAT_WRITE & ~FR_CHUNK_INCOMPAT_RECORD_EXT, content, content_len,
				     rows, total), 0);
	CHECK_EQ(fr_record_iter_read(&it, out, sizeof(out[0]), at, 4), 1);
	CHECK(!fr_record_iter_done(&it));
	/* an extension longer than what is left is damage too: the
	 * "other" stream, last, holds the two extensions alone */
	CHECK_EQ(lens[stream_named("other")], 3 + sizeof(ext) + sizeof(ext2) + 2); /* a's; b's: state, flags, abc */
	content[content_len - sizeof(ext) - sizeof(ext2) - 2] = 100;
	k = columns_to_rows(FR_CHUNK_INCOMPAT_WRITE, 3, content, content_len, rows, total);
	CHECK_EQ(k, -EBADMSG);
	free(content);
}

/* A hand-made inline record (pid 42, addr 0x10) whose names are @len
 * bytes of 'x', as a row into @row and as columns into @content (the
 * stream table and streams); returns the row's length. */
static size_t inline_bytes(uint32_t len, uint8_t *row, uint8_t *content, size_t *content_len)
{
	uint8_t head[] = { FR_REC_INLINE, 0, 0, 42, 0, 0, 0 }, other[16];
	size_t no = 0;
	uint32_t lens[FR_REC_STREAMS] = { 0 };

	other[no++] = 0x10;
	for (uint32_t v = len; ; v >>= 7) {
		other[no++] = (uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80);
		if (v < 0x80)
			break;
	}
	memcpy(row, head, sizeof(head));
	memcpy(row + sizeof(head), other, no);
	memset(row + sizeof(head) + no, 'x', len);
	/* type and flags; ts, pid, tid, cgroup, comm length a byte each; the
	 * rest in the last stream */
	lens[0] = 2;
	for (unsigned i = 1; i <= 5; i++)
		lens[i] = 1;
	lens[FR_REC_STREAMS - 1] = (uint32_t)no + len;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		uint32_t le = htole32(lens[i]);
		memcpy(content + 4 * i, &le, 4);
	}
	memcpy(content + FR_REC_STREAM_TABLE, row, sizeof(head) + no + len);
	*content_len = FR_REC_STREAM_TABLE + sizeof(head) + no + len;
	return sizeof(head) + no + len;
}

/* Inline records: names of one byte up to the bound round-trip; none or
 * more than the bound are refused by the encoder, and made by hand, by
 * the decoder in rows and in columns.  The builder marks a chunk that
 * holds one with FR_CHUNK_INCOMPAT_INLINE, and only such a chunk. */
static void check_inline(void)
{
	static char names[FR_INLINE_NAMES_MAX + 1];
	static uint8_t row[FR_INLINE_NAMES_MAX + 64], content[FR_INLINE_NAMES_MAX + 128], back[FR_INLINE_NAMES_MAX + 64];
	static const uint32_t good[] = { 1, 11, FR_INLINE_NAMES_MAX };
	struct fr_record r = { .type = FR_REC_INLINE, .ts = 5, .pid = 42, .tid = 42, .comm = "app", .comm_len = 3 };
	struct fr_record out, got[3];
	uint8_t buf[FR_INLINE_NAMES_MAX + 64];
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct fr_chunk_builder *b;
	uint8_t boot[16] = { 1 };
	size_t p, rl, cl;
	void *chunk;
	int k;

	memset(names, 'x', sizeof(names));
	memcpy(names, "inner\0outer", 11);
	r.inl.addr = 0x7f0000001233ULL;
	r.inl.names = names;
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct fr_codec_state e = {}, d = {};
		r.inl.names_len = good[i];
		k = fr_record_encode(&e, &r, buf, sizeof(buf), 0);
		CHECK(k > 0 && (size_t)k <= fr_record_max_encoded_size(&r));
		p = 0;
		CHECK_EQ(fr_record_decode(&d, buf, (size_t)k, &p, &out), 0);
		check_same(&r, &out, 0);
		CHECK_EQ(p, (size_t)k);
	}
	for (unsigned bad = 0; bad < 2; bad++) {
		struct fr_codec_state e = {};
		struct fr_record_streams st = {};
		uint8_t sbuf[FR_REC_STREAMS][64];
		for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
			st.buf[i] = sbuf[i];
			st.cap[i] = sizeof(sbuf[i]);
		}
		r.inl.names_len = bad ? FR_INLINE_NAMES_MAX + 1 : 0;
		CHECK_EQ(fr_record_encode(&e, &r, buf, sizeof(buf), 0), -EINVAL);
		CHECK_EQ(fr_record_encode_streams(&e, &r, &st, SIZE_MAX), -EINVAL);
	}

	/* by hand: the bound decodes, in rows and in columns; none and one
	 * byte more do not */
	for (uint32_t len = 0; len <= FR_INLINE_NAMES_MAX + 1; len += len == 1 ? FR_INLINE_NAMES_MAX - 1 : 1) {
		struct fr_codec_state d = {};
		int want = len >= 1 && len <= FR_INLINE_NAMES_MAX ? 0 : -EBADMSG;
		rl = inline_bytes(len, row, content, &cl);
		p = 0;
		CHECK_EQ(fr_record_decode(&d, row, rl, &p, &out), want);
		if (want == 0)
			CHECK(out.type == FR_REC_INLINE && out.pid == 42 && out.inl.addr == 0x10 && out.inl.names_len == len);
		CHECK_EQ(columns_to_rows(FR_CHUNK_INCOMPAT_STREAMS, 1, content, cl, back, rl), want);
	}

	/* a chunk with an inline record says so, and reads back */
	r.inl.names_len = 11;
	struct fr_record before = offcpu(4, 42, 0), after = offcpu(6, 42, 1);
	CHECK_EQ(fr_chunk_builder_new(0, 4096, &b), 0);
	CHECK_EQ(fr_chunk_builder_add(b, &before), 0);
	CHECK(!fr_chunk_builder_described(b, &r));
	CHECK_EQ(fr_chunk_builder_add(b, &r), 0);
	CHECK(fr_chunk_builder_described(b, &r));
	CHECK_EQ(fr_chunk_builder_add(b, &after), 0);
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &chunk, &cl), 0);
	CHECK_EQ(chunk_read(chunk, got, 3), FR_CHUNK_INCOMPAT_WRITE | FR_CHUNK_INCOMPAT_INLINE);
	check_same(&before, &got[0], FR_CHUNK_INCOMPAT_WRITE);
	check_same(&r, &got[1], FR_CHUNK_INCOMPAT_WRITE);
	check_same(&after, &got[2], FR_CHUNK_INCOMPAT_WRITE);
	free(chunk);
	/* the next chunk has none: not marked; nor is one whose inline
	 * record was refused */
	CHECK(!fr_chunk_builder_described(b, &r));
	CHECK_EQ(fr_chunk_builder_add(b, &before), 0);
	r.inl.names_len = 0;
	CHECK_EQ(fr_chunk_builder_add(b, &r), -EINVAL);
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &chunk, &cl), 0);
	CHECK_EQ(chunk_read(chunk, got, 1), FR_CHUNK_INCOMPAT_WRITE);
	free(chunk);
	CHECK(!(FR_CHUNK_INCOMPAT_WRITE & FR_CHUNK_INCOMPAT_INLINE) && (FR_CHUNK_INCOMPAT_KNOWN & FR_CHUNK_INCOMPAT_INLINE));
	chunk_read_done();
	fr_chunk_builder_free(b);
	ZSTD_freeCCtx(cctx);
}

/* A trigger record says what it fired on only in a chunk flagged
 * FR_CHUNK_INCOMPAT_TRIGGER_CAUSE, which the builder sets on the chunks
 * that hold one, and only on those; a cause later than the trigger (a
 * negative difference) round-trips too. */
static void check_trigger_cause(void)
{
	struct fr_record r = { .type = FR_REC_TRIGGER, .ts = 5000000000ULL, .pid = 42, .tid = 43, .comm = "app",
			       .comm_len = 3, .trigger = { .rule = "crash", .rule_len = 5, .incident = "X-crash",
							   .incident_len = 7, .cause_type = FR_REC_SIGNAL,
							   .cause_ago_ns = 100000000 } };
	struct fr_record before = offcpu(4, 42, 0), got[2], out;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct fr_chunk_builder *b;
	uint8_t boot[16] = { 1 }, buf[256];
	void *chunk;
	size_t cl, p;
	int k;

	for (int later = 0; later < 2; later++) {
		struct fr_codec_state e = { .incompat_flags = FR_CHUNK_INCOMPAT_TRIGGER_CAUSE },
				      d = { .incompat_flags = FR_CHUNK_INCOMPAT_TRIGGER_CAUSE };
		r.trigger.cause_ago_ns = later ? -7 : 100000000;
		k = fr_record_encode(&e, &r, buf, sizeof(buf), 0);
		CHECK(k > 0 && (size_t)k <= fr_record_max_encoded_size(&r));
		p = 0;
		CHECK_EQ(fr_record_decode(&d, buf, (size_t)k, &p, &out), 0);
		check_same(&r, &out, FR_CHUNK_INCOMPAT_TRIGGER_CAUSE);
	}
	/* a cause type beyond 16 bits is malformed */
	{
		static const uint8_t bad[] = { FR_REC_TRIGGER, 0, 0, 7, 0, 0, 0, 1, 'a', 0, 0x80, 0x80, 0x04, 0 };
		struct fr_codec_state d = { .incompat_flags = FR_CHUNK_INCOMPAT_TRIGGER_CAUSE };
		p = 0;
		CHECK_EQ(fr_record_decode(&d, bad, sizeof(bad), &p, &out), -EBADMSG);
	}

	r.trigger.cause_ago_ns = 100000000;
	CHECK_EQ(fr_chunk_builder_new(0, 4096, &b), 0);
	CHECK_EQ(fr_chunk_builder_add(b, &before), 0);
	CHECK_EQ(fr_chunk_builder_add(b, &r), 0);
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &chunk, &cl), 0);
	CHECK_EQ(chunk_read(chunk, got, 2), FR_CHUNK_INCOMPAT_WRITE | FR_CHUNK_INCOMPAT_TRIGGER_CAUSE);
	check_same(&before, &got[0], FR_CHUNK_INCOMPAT_WRITE);
	check_same(&r, &got[1], FR_CHUNK_INCOMPAT_TRIGGER_CAUSE);
	free(chunk);
	CHECK_EQ(fr_chunk_builder_add(b, &before), 0);
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &chunk, &cl), 0);
	CHECK_EQ(chunk_read(chunk, got, 1), FR_CHUNK_INCOMPAT_WRITE);
	free(chunk);
	CHECK(!(FR_CHUNK_INCOMPAT_WRITE & FR_CHUNK_INCOMPAT_TRIGGER_CAUSE) &&
	      (FR_CHUNK_INCOMPAT_KNOWN & FR_CHUNK_INCOMPAT_TRIGGER_CAUSE));
	chunk_read_done();
	fr_chunk_builder_free(b);
	ZSTD_freeCCtx(cctx);
}

/* Every record of @in (@n) in columns and as rows, with @flags: the
 * columns must turn back into the same rows, with the decoded records
 * pointing into them, and damaged columns must be refused without
 * reading outside them. */
static void check_streams(const struct fr_record *in, unsigned n, uint32_t flags)
{
	struct fr_codec_state es = { .incompat_flags = flags }, er = { .incompat_flags = flags };
	struct fr_record_streams st;
	uint8_t rows[16384], back[16384], flat[16384];
	uint32_t lens[FR_REC_STREAMS];
	size_t rl = 0, total = 0, cl;
	uint8_t *content;

	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		st.buf[i] = malloc(4096);
		st.cap[i] = 4096;
		st.len[i] = 0;
		CHECK(st.buf[i] != NULL);
	}
	for (unsigned i = 0; i < n; i++) {
		int k = fr_record_encode_streams(&es, &in[i], &st, SIZE_MAX);
		int r = fr_record_encode(&er, &in[i], rows, sizeof(rows), rl);
		CHECK(k > 0 && r > 0);
		CHECK_EQ((size_t)k, (size_t)r - rl); /* the same bytes, elsewhere */
		rl = (size_t)r;
		total += (size_t)k;
	}
	CHECK_EQ(total, rl);
	CHECK_EQ(es.prev_ts, er.prev_ts);

	/* no room: refused, nothing written, the time delta base kept */
	{
		size_t before[FR_REC_STREAMS];
		uint64_t prev = es.prev_ts;
		for (unsigned i = 0; i < FR_REC_STREAMS; i++)
			before[i] = st.len[i];
		CHECK_EQ(fr_record_encode_streams(&es, &in[0], &st, 3), -ENOBUFS);
		for (unsigned i = 0; i < FR_REC_STREAMS; i++)
			CHECK_EQ(st.len[i], before[i]);
		CHECK_EQ(es.prev_ts, prev);
	}

	total = 0;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		memcpy(flat + total, st.buf[i], st.len[i]);
		lens[i] = (uint32_t)st.len[i];
		total += lens[i];
		free(st.buf[i]);
	}
	content = content_of(lens, flat, total, &cl);

	/* one stream full, the others not: a record with a field for it is
	 * refused once the fields before have been written, and what they
	 * wrote is taken back; one without is added */
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		struct fr_codec_state s2 = { .incompat_flags = flags };
		struct fr_record_streams t;
		unsigned refused = 0;
		for (unsigned j = 0; j < FR_REC_STREAMS; j++) {
			t.buf[j] = malloc(4096);
			CHECK(t.buf[j] != NULL);
			t.cap[j] = j == i ? 0 : 4096;
			t.len[j] = 0;
		}
		for (unsigned j = 0; j < n; j++) {
			size_t before[FR_REC_STREAMS];
			uint64_t prev = s2.prev_ts;
			memcpy(before, t.len, sizeof(before));
			int k = fr_record_encode_streams(&s2, &in[j], &t, SIZE_MAX);
			if (k == -ENOBUFS) {
				CHECK(memcmp(before, t.len, sizeof(before)) == 0);
				CHECK_EQ(s2.prev_ts, prev);
				refused++;
			} else
				CHECK(k > 0);
		}
		CHECK_EQ(refused > 0, lens[i] > 0);
		for (unsigned j = 0; j < FR_REC_STREAMS; j++)
			free(t.buf[j]);
	}

	/* record by record: the rows of the row encoder, and each record
	 * what was encoded, pointing into the rows */
	{
		struct fr_record_iter it;
		struct fr_record out;
		size_t at;
		memset(back, 0xaa, sizeof(back));
		CHECK_EQ(fr_record_iter_init(&it, flags, content, cl, back, rl), 0);
		for (unsigned i = 0; i < n; i++) {
			CHECK_EQ(fr_record_iter_next(&it, &out, &at), 0);
			check_same(&in[i], &out, flags);
			if (out.type == FR_REC_EXEC)
				CHECK((const uint8_t *)out.exec.filename > back + at &&
				      (const uint8_t *)out.exec.filename < back + rl);
		}
		CHECK(fr_record_iter_done(&it));
		CHECK(memcmp(back, rows, rl) == 0);
	}
	CHECK_EQ(columns_to_rows(flags, n, content, cl, back, rl), 0);

	/* a record more or fewer than the streams hold, rows of another
	 * size, a table longer than the content */
	CHECK_EQ(columns_to_rows(flags, n + 1, content, cl, back, rl), -EBADMSG);
	CHECK_EQ(columns_to_rows(flags, n - 1, content, cl, back, rl), -EBADMSG);
	CHECK_EQ(columns_to_rows(flags, n, content, cl, back, rl - 1), -EBADMSG);
	CHECK_EQ(columns_to_rows(flags, n, content, cl, back, rl + 1), -EBADMSG);
	CHECK_EQ(columns_to_rows(flags, n, content, cl - 1, back, rl), -EBADMSG);
	CHECK_EQ(columns_to_rows(flags, n, content, FR_REC_STREAM_TABLE - 1, back, rl), -EBADMSG);
	free(content);

	/* each stream a byte short (its last byte cut out of the content,
	 * which is of its exact size: ASan sees over-reads); and a byte
	 * moved from one stream to the next */
	for (unsigned i = 0, off = 0; i < FR_REC_STREAMS; off += lens[i], i++) {
		uint8_t cut[16384];
		if (!lens[i])
			continue;
		memcpy(cut, flat, off + lens[i] - 1);
		memcpy(cut + off + lens[i] - 1, flat + off + lens[i], total - off - lens[i]);
		lens[i]--;
		content = content_of(lens, cut, total - 1, &cl);
		CHECK_EQ(columns_to_rows(flags, n, content, cl, back, rl - 1), -EBADMSG);
		free(content);
		lens[i]++;
		if (i + 1 < FR_REC_STREAMS) {
			lens[i]--;
			lens[i + 1]++;
			content = content_of(lens, flat, total, &cl);
			CHECK_EQ(columns_to_rows(flags, n, content, cl, back, rl), -EBADMSG);
			free(content);
			lens[i]++;
			lens[i + 1]--;
		}
	}
}

/* Pycode records (issue 47): in a chunk with extensions, as rows and as
 * columns, they round-trip (names of up to 4096 bytes, negative and
 * large first lines); without extensions the encoder refuses them, and a
 * pycode record without its extension does not decode.  A sample whose
 * user frames are Python frames keeps them, and the frame encoding keeps
 * the code object (16-byte aligned) and the line. */
static void check_pycode(void)
{
	static char name[4096];
	const int32_t lines[] = { 1, -3, 1 << 30 };
	struct fr_record r = { .type = FR_REC_PYCODE, .ts = 9, .pid = 77 }, out;
	uint64_t code = 0x7f91d0718620ULL, frames[3], got[8];
	uint8_t buf[16384];
	struct fr_codec_state e, d;
	size_t pos;
	int k;

	memset(name, 'n', sizeof(name));
	r.pycode.code = code;
	r.pycode.name = "Handler.parse";
	r.pycode.name_len = 13;
	r.pycode.file = ".../app/views.py";
	r.pycode.file_len = 16;
	for (unsigned i = 0; i < ELEMENTSOF(lines); i++) {
		r.pycode.firstlineno = lines[i];
		r.pycode.name = i == 2 ? name : "Handler.parse";
		r.pycode.name_len = i == 2 ? sizeof(name) : 13;
		e = (struct fr_codec_state){ .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
		d = e;
		k = fr_record_encode(&e, &r, buf, sizeof(buf), 0);
		CHECK(k > 0 && (size_t)k <= fr_record_max_encoded_size(&r));
		pos = 0;
		CHECK_EQ(fr_record_decode(&d, buf, (size_t)k, &pos, &out), 0);
		CHECK_EQ(pos, (size_t)k);
		CHECK(out.type == FR_REC_PYCODE && out.pid == 77 && out.pycode.code == code &&
		      out.pycode.firstlineno == lines[i]);
		CHECK(out.pycode.name_len == r.pycode.name_len && !memcmp(out.pycode.name, r.pycode.name, out.pycode.name_len));
		CHECK(out.pycode.file_len == 16 && !memcmp(out.pycode.file, ".../app/views.py", 16));
	}
	/* over the bound, and without extensions: refused */
	r.pycode.name_len = sizeof(name) + 1;
	e = (struct fr_codec_state){ .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
	CHECK(fr_record_encode(&e, &r, buf, sizeof(buf), 0) < 0);
	r.pycode.name_len = 13;
	e = (struct fr_codec_state){ .incompat_flags = STACKS };
	CHECK(fr_record_encode(&e, &r, buf, sizeof(buf), 0) < 0);
	/* a pycode record's head without its extension */
	{
		const uint8_t bare[] = { FR_REC_PYCODE, 0, 0, 77, 0, 0, 0 };
		d = (struct fr_codec_state){ .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
		pos = 0;
		CHECK_EQ(fr_record_decode(&d, bare, sizeof(bare), &pos, &out), -EBADMSG);
	}

	/* Python frames in a sample's user stack */
	CHECK(fr_frame_is_python(fr_frame_python(code, 42)));
	CHECK_EQ(fr_frame_python_code(fr_frame_python(code, 42)), code);
	CHECK_EQ(fr_frame_python_line(fr_frame_python(code, 42)), 42);
	CHECK_EQ(fr_frame_python_line(fr_frame_python(code, FR_FRAME_PYTHON_LINE_MAX + 1)), 0);
	CHECK(!fr_frame_is_python(0x7fffffffe000ULL));
	frames[0] = 0x55d0c0de1234ULL;
	frames[1] = fr_frame_python(code, 7);
	frames[2] = fr_frame_python(code + 0x40, 0);
	r = (struct fr_record){ .type = FR_REC_SAMPLE, .ts = 10, .pid = 77, .tid = 77 };
	r.stack.uframes = frames;
	r.stack.user_frames = 3;
	e = (struct fr_codec_state){ .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
	d = e;
	k = fr_record_encode(&e, &r, buf, sizeof(buf), 0);
	CHECK(k > 0 && (size_t)k <= fr_record_max_encoded_size(&r));
	pos = 0;
	CHECK_EQ(fr_record_decode(&d, buf, (size_t)k, &pos, &out), 0);
	CHECK_EQ(fr_record_frames(&out, got, ELEMENTSOF(got)), 3);
	CHECK(!memcmp(got, frames, sizeof(frames)));
}

/* A switch event as the sched program writes it (bpf/event.h). */
static struct fr_event_switch switch_event(unsigned i)
{
	static const char *const comms[] = { "switch-gen", "", "kworker/u4:2-events_unbound", "a", "sixteen-chars-xx" };
	struct fr_event_switch e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = FR_EV_SWITCH;
	/* mostly later, sometimes earlier (a negative delta) */
	e.hdr.ts = 1000000000ULL + i * 1500ULL - (i % 7 == 3 ? 4000 : 0);
	e.hdr.pid = 100 + i % 3;
	e.hdr.tid = e.hdr.pid + i % 2;
	e.hdr.cgroup_id = i % 4 == 0 ? 0 : 7000 + i % 2;
	/* the kernel's comm: NUL-padded, or all 16 bytes */
	memcpy(e.hdr.comm, comms[i % 5], MIN(strlen(comms[i % 5]), sizeof(e.hdr.comm)));
	e.prev_state = i % 3 == 0 ? 0 : 1u << (i % 11);
	e.next_pid = 200 + i;
	e.next_tid = i % 5 == 0 ? e.next_pid - 3 : e.next_pid;
	memcpy(e.next_comm, comms[(i + 2) % 5], MIN(strlen(comms[(i + 2) % 5]), sizeof(e.next_comm)));
	return e;
}

/* The record the daemon makes of @e one at a time (record_event()). */
static struct fr_record switch_record(const struct fr_event_switch *e)
{
	struct fr_record r;

	fr_record_clear(&r);
	r.type = FR_REC_SWITCH;
	r.ts = e->hdr.ts;
	r.pid = e->hdr.pid;
	r.tid = e->hdr.tid;
	r.cgroup_id = e->hdr.cgroup_id;
	memcpy(r.comm, e->hdr.comm, FR_COMM_LEN);
	r.comm[FR_COMM_LEN] = 0;
	r.comm_len = fr_comm_len(r.comm);
	r.sw.prev_state = e->prev_state;
	r.sw.next_pid = e->next_pid;
	r.sw.next_tid = e->next_tid;
	r.sw.next_comm = e->next_comm;
	r.sw.next_comm_len = fr_comm_len(e->next_comm);
	return r;
}

/* Full mode's batch path (fr_record_encode_switch_events()): a batch of
 * switch events encodes to the very bytes of their records encoded one by
 * one, in every stream, after other records and between them; all or
 * nothing when they do not fit.  Through the chunk builder, the chunk
 * reads back as the events, and it is the same size as the one built a
 * record at a time. */
static void check_switch_events(void)
{
	enum { N = FR_SWITCH_BATCH };
	struct fr_codec_state ea = { .incompat_flags = FR_CHUNK_INCOMPAT_WRITE },
			      eb = { .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
	struct fr_record_streams a, b;
	struct fr_event_switch ev[3 * N];
	struct fr_record other, rec[3 * N];
	struct fr_chunk_builder *ba, *bb;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	const uint8_t boot[16] = { 1 };
	void *ca, *cb;
	size_t la, lb;
	int ka = 0, kb = 0;

	for (unsigned i = 0; i < 3 * N; i++)
		ev[i] = switch_event(i);
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		a.buf[i] = malloc(8192);
		b.buf[i] = malloc(8192);
		CHECK(a.buf[i] && b.buf[i]);
		a.cap[i] = b.cap[i] = 8192;
		a.len[i] = b.len[i] = 0;
	}
	/* a record of another type first: the batch's first delta is from it */
	fill(&other, 3);
	CHECK(fr_record_encode_streams(&ea, &other, &a, SIZE_MAX) > 0);
	CHECK(fr_record_encode_streams(&eb, &other, &b, SIZE_MAX) > 0);
	/* a whole batch, a short one, then one of one */
	ka += fr_record_encode_switch_events(&ea, ev, N, &a, SIZE_MAX);
	ka += fr_record_encode_switch_events(&ea, ev + N, N - 5, &a, SIZE_MAX);
	CHECK(fr_record_encode_streams(&ea, &other, &a, SIZE_MAX) > 0);
	ka += fr_record_encode_switch_events(&ea, ev + 2 * N - 5, 1, &a, SIZE_MAX);
	for (unsigned i = 0; i < 2 * N - 4; i++) {
		struct fr_record r = switch_record(&ev[i]);
		if (i == 2 * N - 5)
			CHECK(fr_record_encode_streams(&eb, &other, &b, SIZE_MAX) > 0);
		kb += fr_record_encode_streams(&eb, &r, &b, SIZE_MAX);
	}
	CHECK(ka > 0);
	CHECK_EQ(ka, kb);
	CHECK_EQ(ea.prev_ts, eb.prev_ts);
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		CHECK_EQ(a.len[i], b.len[i]);
		CHECK(!memcmp(a.buf[i], b.buf[i], a.len[i]));
	}
	/* no room for all: none written, the time delta base kept */
	{
		size_t before[FR_REC_STREAMS];
		uint64_t prev = ea.prev_ts;
		for (unsigned i = 0; i < FR_REC_STREAMS; i++)
			before[i] = a.len[i];
		CHECK_EQ(fr_record_encode_switch_events(&ea, ev, N, &a, (size_t)kb / 4), -ENOBUFS);
		for (unsigned i = 0; i < FR_REC_STREAMS; i++)
			CHECK_EQ(a.len[i], before[i]);
		CHECK_EQ(ea.prev_ts, prev);
	}
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		free(a.buf[i]);
		free(b.buf[i]);
	}

	/* through the chunk builder */
	CHECK_EQ(fr_chunk_builder_new(1, 4096, &ba), 0);
	CHECK_EQ(fr_chunk_builder_new(1, 4096, &bb), 0);
	CHECK_EQ(fr_chunk_builder_add_switch_events(ba, ev, 3 * N), 0);
	for (unsigned i = 0; i < 3 * N; i++) {
		rec[i] = switch_record(&ev[i]);
		CHECK_EQ(fr_chunk_builder_add(bb, &rec[i]), 0);
	}
	CHECK_EQ(fr_chunk_builder_raw_size(ba), fr_chunk_builder_raw_size(bb));
	CHECK_EQ(fr_chunk_builder_count(ba), 3 * N);
	CHECK_EQ(fr_chunk_builder_first_ts(ba), fr_chunk_builder_first_ts(bb));
	/* more than a 4 KiB chunk holds: refused whole */
	{
		size_t raw = fr_chunk_builder_raw_size(ba);
		struct fr_event_switch many[256];
		for (unsigned i = 0; i < 256; i++)
			many[i] = ev[i % (3 * N)];
		CHECK_EQ(fr_chunk_builder_add_switch_events(ba, many, 256), -ENOBUFS);
		CHECK_EQ(fr_chunk_builder_raw_size(ba), raw);
		CHECK_EQ(fr_chunk_builder_count(ba), 3 * N);
	}
	CHECK_EQ(fr_chunk_builder_close(ba, cctx, 5, boot, &ca, &la), 0);
	CHECK_EQ(fr_chunk_builder_close(bb, cctx, 5, boot, &cb, &lb), 0);
	{
		const struct fr_chunk_header *ha = ca, *hb = cb;
		struct fr_record out[3 * N];
		CHECK_EQ(le32toh(ha->nevents), 3 * N);
		CHECK_EQ(le64toh(ha->first_ts), le64toh(hb->first_ts));
		CHECK_EQ(le64toh(ha->last_ts), le64toh(hb->last_ts));
		chunk_read(ca, out, 3 * N);
		for (unsigned i = 0; i < 3 * N; i++)
			check_same(&rec[i], &out[i], FR_CHUNK_INCOMPAT_WRITE);
		chunk_read_done();
	}
	free(ca);
	free(cb);
	fr_chunk_builder_free(ba);
	fr_chunk_builder_free(bb);
	ZSTD_freeCCtx(cctx);
}

int main(void)
{
	enum { N = 90 };
	struct fr_record in[N], out;
	uint8_t buf[16384];
	size_t len = 0, pos = 0;
	int k;

	for (unsigned i = 0; i < N; i++)
		fill(&in[i], i);
	/* every type, in every format */
	for (unsigned f = 0; f < ELEMENTSOF(formats); f++) {
		uint32_t flags = formats[f];
		struct fr_codec_state enc = { .incompat_flags = flags }, dec = { .incompat_flags = flags };

		len = pos = 0;
		for (unsigned i = 0; i < N; i++) {
			k = fr_record_encode(&enc, &in[i], buf, sizeof(buf), len);
			CHECK(k > (int)len);
			CHECK((size_t)(k - (int)len) <= fr_record_max_encoded_size(&in[i]));
			len = (size_t)k;
		}
		for (unsigned i = 0; i < N; i++) {
			CHECK_EQ(fr_record_decode(&dec, buf, len, &pos, &out), 0);
			check_same(&in[i], &out, flags);
		}
		CHECK_EQ(pos, len);
	}

	/* the exact bytes of both formats, each read with its chunk's flags */
	{
		struct fr_codec_state e = { .incompat_flags = NEW };
		struct fr_record r = { .type = FR_REC_OFFCPU, .ts = 1000, .pid = 7, .tid = 7, .comm = "ab", .comm_len = 2,
				       .sched = { .duration_ns = 300000000, .syscall_nr = 230 } };
		struct fr_record g = { .type = FR_REC_GAP, .ts = 1001, .gap.lost = 5 };
		k = fr_record_encode(&e, &r, buf, sizeof(buf), 0);
		k = fr_record_encode(&e, &g, buf, sizeof(buf), (size_t)k);
		CHECK_EQ(k, sizeof(new_bytes));
		CHECK(k == sizeof(new_bytes) && memcmp(buf, new_bytes, sizeof(new_bytes)) == 0);
		e = (struct fr_codec_state){ .incompat_flags = OLD };
		k = fr_record_encode(&e, &r, buf, sizeof(buf), 0);
		k = fr_record_encode(&e, &g, buf, sizeof(buf), (size_t)k);
		CHECK_EQ(k, sizeof(old_bytes));
		CHECK(k == sizeof(old_bytes) && memcmp(buf, old_bytes, sizeof(old_bytes)) == 0);
		check_golden(old_bytes, sizeof(old_bytes), OLD, -1);
		check_golden(new_bytes, sizeof(new_bytes), NEW, 230);
	}
	/* a syscall number outside [-1, INT32_MAX] is malformed */
	{
		static const uint8_t neg2[] = { FR_REC_OFFCPU, 0, 0, 7, 0, 0, 0, 1, 0x03 };
		static const uint8_t big[] = { FR_REC_OFFCPU, 0, 0, 7, 0, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x10 };
		static const uint8_t max[] = { FR_REC_OFFCPU, 0, 0, 7, 0, 0, 0, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f };
		struct fr_codec_state d = { .incompat_flags = NEW };
		size_t p = 0;
		CHECK_EQ(fr_record_decode(&d, neg2, sizeof(neg2), &p, &out), -EBADMSG);
		p = 0;
		CHECK_EQ(fr_record_decode(&d, big, sizeof(big), &p, &out), -EBADMSG);
		p = 0;
		CHECK_EQ(fr_record_decode(&d, max, sizeof(max), &p, &out), 0);
		CHECK_EQ(out.sched.syscall_nr, INT32_MAX);
	}

	/* a full buffer is refused and leaves the length alone */
	struct fr_codec_state s2 = {};
	CHECK_EQ(fr_record_encode(&s2, &in[0], buf, 10, 0), -ENOBUFS);
	CHECK_EQ(s2.prev_ts, 0);

	/* every truncation of a record is refused, never over-read, in both
	 * formats (offcpu records of every syscall number width among them) */
	for (unsigned f = 0; f < ELEMENTSOF(formats); f++)
		for (unsigned i = 0; i < N; i++) {
			struct fr_codec_state e = { .incompat_flags = formats[f] };
			uint8_t one[1024];
			int n;
			if (i >= NTYPES && in[i].type != FR_REC_OFFCPU)
				continue;
			n = fr_record_encode(&e, &in[i], one, sizeof(one), 0);
			CHECK(n > 0);
			for (int cut = 0; cut < n; cut++) {
				struct fr_codec_state d = { .incompat_flags = e.incompat_flags };
				uint8_t *copy = malloc((size_t)cut + 1); /* exact size: ASan sees over-reads */
				size_t p = 0;
				memcpy(copy, one, (size_t)cut);
				CHECK_EQ(fr_record_decode(&d, copy, (size_t)cut, &p, &out), -EBADMSG);
				free(copy);
			}
		}
	/* every width of varint (1 to 10 bytes, and each byte boundary
	 * either side), followed by enough bytes for the decoder's
	 * word-at-a-time path, and at the very end of the buffer */
	for (unsigned bits = 0; bits <= 64; bits++)
		for (int d = -1; d <= 1; d++) {
			uint64_t v = bits == 64 ? UINT64_MAX : (1ULL << bits) + (uint64_t)(int64_t)d;
			struct fr_record g = { .type = FR_REC_GAP, .ts = 5, .gap.lost = v };
			struct fr_codec_state e = {}, dd = {};
			uint8_t wide[64];
			size_t p = 0;
			int n = fr_record_encode(&e, &g, wide, sizeof(wide), 0);
			CHECK(n > 0);
			memset(wide + n, 0xff, sizeof(wide) - (size_t)n); /* padding with high bits set */
			CHECK_EQ(fr_record_decode(&dd, wide, sizeof(wide), &p, &out), 0);
			CHECK_EQ(out.gap.lost, v);
			CHECK_EQ(p, (size_t)n);
			uint8_t *exact = malloc((size_t)n); /* exact size: ASan sees over-reads */
			memcpy(exact, wide, (size_t)n);
			dd = (struct fr_codec_state){};
			p = 0;
			CHECK_EQ(fr_record_decode(&dd, exact, (size_t)n, &p, &out), 0);
			CHECK_EQ(out.gap.lost, v);
			free(exact);
		}
	/* fr_comm_len against strnlen: the first NUL at every position, with
	 * the bytes around it that fool a zero-byte test (0x01 borrows, 0x80
	 * and 0xff high bits), and no NUL at all */
	{
		static const uint8_t fill_bytes[] = { 0x01, 0x80, 0xff, 'a', 0x00 };
		for (unsigned at = 0; at <= FR_REC_COMM_MAX; at++)
			for (unsigned f = 0; f < sizeof(fill_bytes); f++)
				for (unsigned g = 0; g < sizeof(fill_bytes); g++) {
					char c[FR_REC_COMM_MAX];
					for (unsigned j = 0; j < sizeof(c); j++)
						c[j] = (char)(j < at ? fill_bytes[f] : fill_bytes[g]);
					if (at < sizeof(c))
						c[at] = 0;
					CHECK_EQ(fr_comm_len(c), strnlen(c, sizeof(c)));
				}
	}
	/* unknown type and overlong varint */
	{
		uint8_t bad1[] = { 200, 0, 0, 1, 0, 0, 0 };
		uint8_t bad2[] = { FR_REC_GAP, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
		struct fr_codec_state d = {};
		size_t p = 0;
		CHECK_EQ(fr_record_decode(&d, bad1, sizeof(bad1), &p, &out), -EBADMSG);
		p = 0;
		CHECK_EQ(fr_record_decode(&d, bad2, sizeof(bad2), &p, &out), -EBADMSG);
	}
	check_streams(in, N, STACKS | FR_CHUNK_INCOMPAT_STREAMS);
	check_streams(in, N, NEW | FR_CHUNK_INCOMPAT_STREAMS);
	check_streams(in, N, FR_CHUNK_INCOMPAT_STREAMS);
	check_inline();
	check_pycode();
	check_extensions();
	check_trigger_cause();
	check_switch_events();
	check_store();
	CHECK_STR(fr_record_type_name(FR_REC_SYSCALL), "syscall");
	CHECK_STR(fr_record_type_name(FR_REC_INLINE), "inline");
	CHECK_EQ(fr_record_type_from_name("inline"), FR_REC_INLINE);
	CHECK(fr_record_type_is_meta(FR_REC_INLINE));
	CHECK_EQ(fr_record_type_from_name("gap"), FR_REC_GAP);
	CHECK_EQ(fr_record_type_from_name("nope"), -EINVAL);
	return TEST_DONE();
}
