/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Redaction (lib/redact.c): what each class cuts from records, from
 * chunks made again (every other field as it was, the header's seqnum,
 * boot and clock offsets kept), and from metadata. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "chunk.h"
#include "macro.h"
#include "record-fields.h"
#include "redact.h"
#include "test.h"

/* Redacts a copy of @r with @classes; returns what fr_redact_record
 * said, the copy in *out (its strings in @rd). */
static int redact(struct fr_redactor *rd, const struct fr_record *r, struct fr_record *out)
{
	*out = *r;
	return fr_redact_record(rd, out);
}

static void check_str(const char *p, uint32_t n, const char *want, size_t want_len)
{
	CHECK_EQ(n, want_len);
	CHECK(n == want_len && memcmp(p, want, n) == 0);
	if (n != want_len || memcmp(p, want, n) != 0)
		fprintf(stderr, "  got \"%.*s\"\n", (int)n, p);
}
#define CHECK_FIELD(p, n, lit) check_str(p, n, lit, sizeof(lit) - 1)

static void check_parse(void)
{
	const char *bad = NULL;
	unsigned c = 99;

	CHECK_EQ(fr_redact_parse("args,tcp", &c, &bad), 0);
	CHECK_EQ(c, FR_REDACT_ARGS | FR_REDACT_TCP);
	CHECK_EQ(fr_redact_parse("marks,home,args,tcp,urls", &c, &bad), 0);
	CHECK_EQ(c, FR_REDACT_ALL);
	CHECK_EQ(fr_redact_parse("args,passwords", &c, &bad), -EINVAL);
	CHECK_STR(bad, "passwords");
	CHECK_EQ(fr_redact_parse("arg", &c, &bad), -EINVAL);
	CHECK_STR(fr_redact_class_name(FR_REDACT_HOME), "home");
}

static void check_paths(void)
{
	static const struct {
		const char *in, *out; /* out NULL: not cut */
	} cases[] = {
		{ "/home/alice/src/x/run.sh", "/home/[redacted]/run.sh" },
		{ "/home/alice", "/home/[redacted]" },
		{ "/home/alice/", "/home/[redacted]/" },
		{ "/home/", NULL },
		{ "/homeless/x", NULL },
		{ "/root/x", NULL },
		{ "/root/a/b/c", "/root/[redacted]/c" },
		{ "/usr/bin/true", NULL },
		{ "/home/[redacted]/run.sh", NULL }, /* cut before */
	};
	struct fr_redactor *rd;
	struct fr_record r = { .type = FR_REC_PROCESS, .pid = 7, .tid = 7 }, o;

	CHECK_EQ(fr_redactor_new(FR_REDACT_HOME, &rd), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r.process.exe = cases[i].in;
		r.process.exe_len = (uint32_t)strlen(cases[i].in);
		r.process.args = cases[i].in;
		r.process.args_len = r.process.exe_len;
		CHECK_EQ(redact(rd, &r, &o), cases[i].out != NULL);
		const char *want = cases[i].out ? cases[i].out : cases[i].in;
		check_str(o.process.exe, o.process.exe_len, want, strlen(want));
		check_str(o.process.args, o.process.args_len, want, strlen(want));
	}
	fr_redactor_free(rd);
}

static void check_records(void)
{
	static const char args[] = "/home/alice/bin/tool\0--password=pw\0--config=/home/bob/.x";
	struct fr_record exec = { .type = FR_REC_EXEC, .pid = 9, .tid = 9, .comm = "tool", .comm_len = 4,
				  .exec = { .ppid = 1, .filename = "/home/alice/bin/tool", .filename_len = 20,
					    .args = args, .args_len = sizeof(args) - 1 } };
	struct fr_record mark = { .type = FR_REC_MARK, .pid = 9, .tid = 9,
				  .mark = { .text = "key /home/alice/k", .text_len = 17 } };
	struct fr_record started = { .type = FR_REC_MARK, .mark = { .text = FR_MARK_STARTED "(pid 3)",
								    .text_len = sizeof(FR_MARK_STARTED "(pid 3)") - 1 } };
	struct fr_record tcp = { .type = FR_REC_TCP, .pid = 9, .tid = 9,
				 .tcp = { .event = 2, .family = 2, .sport = 5000, .dport = 443,
					  .saddr = { 10, 0, 0, 1 }, .daddr = { 192, 0, 2, 7 } } };
	struct fr_record metrics = { .type = FR_REC_METRICS,
				     .metrics = { .json = "{\"mount\":\"/home/alice/data\"}", .json_len = 28 } };
	struct fr_redactor *all, *args_only, *home_only;
	struct fr_record o, o2;
	char buf[64];

	CHECK_EQ(fr_redactor_new(FR_REDACT_ALL, &all), 0);
	CHECK_EQ(fr_redactor_new(FR_REDACT_ARGS, &args_only), 0);
	CHECK_EQ(fr_redactor_new(FR_REDACT_HOME, &home_only), 0);

	CHECK_EQ(redact(all, &exec, &o), 1);
	CHECK_FIELD(o.exec.filename, o.exec.filename_len, "/home/[redacted]/tool");
	CHECK_FIELD(o.exec.args, o.exec.args_len, "/home/[redacted]/tool\0[redacted]");
	CHECK_EQ(o.exec.ppid, 1);
	CHECK_STR(o.comm, "tool");
	/* cut again: as it was */
	o2 = o;
	CHECK_EQ(fr_redact_record(all, &o2), 0);
	CHECK_FIELD(o2.exec.args, o2.exec.args_len, "/home/[redacted]/tool\0[redacted]");
	CHECK_EQ(redact(args_only, &exec, &o), 1);
	CHECK_FIELD(o.exec.filename, o.exec.filename_len, "/home/alice/bin/tool");
	CHECK_FIELD(o.exec.args, o.exec.args_len, "/home/alice/bin/tool\0[redacted]");
	CHECK_EQ(redact(home_only, &exec, &o), 1);
	CHECK_FIELD(o.exec.args, o.exec.args_len,
		    "/home/[redacted]/tool\0--password=pw\0--config=/home/[redacted]/.x");
	/* nothing past argv[0]: nothing cut */
	exec.exec.args_len = 20;
	CHECK_EQ(redact(args_only, &exec, &o), 0);

	CHECK_EQ(redact(all, &mark, &o), 1);
	CHECK_FIELD(o.mark.text, o.mark.text_len, "[redacted]");
	CHECK_EQ(redact(home_only, &mark, &o), 1);
	CHECK_FIELD(o.mark.text, o.mark.text_len, "key /home/[redacted]/k");
	CHECK_EQ(redact(all, &started, &o), 0);

	CHECK_EQ(redact(all, &tcp, &o), 1);
	CHECK(o.flags & FR_REC_F_ADDR_REDACTED);
	CHECK(o.tcp.saddr[0] == 0 && o.tcp.daddr[0] == 0 && o.tcp.sport == 5000 && o.tcp.dport == 443);
	CHECK_STR(fr_format_tcp_addr(&o, o.tcp.daddr, buf, sizeof(buf)), "[redacted]");
	CHECK_STR(fr_format_tcp_addr(&tcp, tcp.tcp.daddr, buf, sizeof(buf)), "192.0.2.7");
	CHECK_EQ(redact(args_only, &tcp, &o), 0);

	CHECK_EQ(redact(all, &metrics, &o), 1);
	CHECK_FIELD(o.metrics.json, o.metrics.json_len, "{\"mount\":\"/home/[redacted]/data\"}");

	CHECK_EQ(fr_redactor_counts(all)->args, 1);
	CHECK_EQ(fr_redactor_counts(all)->tcp, 1);
	CHECK_EQ(fr_redactor_counts(all)->marks, 1);
	fr_redactor_free(all);
	fr_redactor_free(args_only);
	fr_redactor_free(home_only);
}

/* The records of a chunk as stored; 0 or -EBADMSG. */
static int read_chunk(const uint8_t *chunk, struct fr_chunk_info *ci, struct fr_record *out, size_t max,
		      uint8_t **rows, uint8_t **content)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	struct fr_record_iter it;
	int k;

	k = fr_chunk_header_parse((const struct fr_chunk_header *)chunk, ci);
	if (k == 0 && ci->nrecords <= max) {
		*rows = malloc(ci->raw_size);
		*content = malloc(fr_chunk_content_size(ci));
		k = fr_chunk_payload_decode(d, ci, chunk + sizeof(struct fr_chunk_header), *rows, *content, &it);
		for (uint32_t i = 0; k == 0 && i < ci->nrecords; i++)
			k = fr_record_iter_next(&it, &out[i], &(size_t){ 0 });
		if (k == 0 && !fr_record_iter_done(&it))
			k = -EBADMSG;
	}
	ZSTD_freeDCtx(d);
	return k;
}

static void check_chunk(void)
{
	static const char args[] = "/usr/bin/app\0--token=t0ps3cret";
	static const uint64_t kf[] = { 0xffffffff81000010ULL, 0xffffffff81000200ULL }, uf[] = { 0x401000, 0x402000, 1 };
	static const uint8_t bid[20] = { 0xab, 0xcd };
	struct fr_record recs[] = {
		{ .type = FR_REC_EXEC, .ts = 1000, .pid = 5, .tid = 5, .cgroup_id = 3, .comm = "app", .comm_len = 3,
		  .exec = { .ppid = 1, .filename = "/usr/bin/app", .filename_len = 12, .args = args,
			    .args_len = sizeof(args) - 1 } },
		{ .type = FR_REC_MAPPING, .ts = 1001, .pid = 5, .tid = 5,
		  .mapping = { .start = 0x400000, .end = 0x500000, .offset = 0, .vaddr = 0x400000,
			       .path = "/home/alice/lib/libx.so", .path_len = 23, .build_id = bid, .build_id_len = 20 } },
		{ .type = FR_REC_SAMPLE, .ts = 1002, .pid = 5, .tid = 6, .comm = "app", .comm_len = 3,
		  .stack = { .kernel_frames = 2, .user_frames = 3, .kframes = kf, .uframes = uf } },
		{ .type = FR_REC_OFFCPU, .ts = 1003, .pid = 5, .tid = 6, .comm = "app", .comm_len = 3,
		  .stack = { .kernel_frames = 2, .user_frames = 3, .kframes = kf, .uframes = uf },
		  .sched = { .duration_ns = 5000000, .syscall_nr = 0 } },
		{ .type = FR_REC_TRIGGER, .ts = 1004, .pid = 5, .tid = 5, .comm = "app", .comm_len = 3,
		  .trigger = { .rule = "crash", .rule_len = 5, .incident = "X-crash", .incident_len = 7,
			       .cause_type = FR_REC_SIGNAL, .cause_ago_ns = 3 } },
		{ .type = FR_REC_INLINE, .ts = 1005, .pid = 5, .tid = 5, .inl = { .addr = 0x401000, .names = "f\0g",
										     .names_len = 3 } },
		{ .type = FR_REC_MARK, .ts = 1006, .pid = 5, .tid = 5, .mark = { .text = "t0ps3cret", .text_len = 9 } },
		{ .type = FR_REC_TCP, .ts = 999, .pid = 5, .tid = 5, .flags = 0,
		  .tcp = { .event = 1, .family = 10, .sport = 1, .dport = 2, .saddr = { 0x20, 1 }, .daddr = { 0x20, 2 } } },
		{ .type = FR_REC_SWITCH, .ts = 1007, .pid = 5, .tid = 6, .comm = "app", .comm_len = 3,
		  .sw = { .prev_state = 1, .next_pid = 8, .next_tid = 8, .next_comm = "b", .next_comm_len = 1 } },
	};
	enum { N = sizeof(recs) / sizeof(recs[0]) };
	struct fr_record got[2 * N];
	uint8_t boot[16] = { 9, 8, 7 }, *rows = NULL, *content = NULL, *made = NULL;
	struct fr_chunk_info ci, ci2;
	struct fr_chunk_builder *b;
	struct fr_redactor *rd;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	void *chunk;
	size_t len, made_len;

	CHECK_EQ(fr_chunk_builder_new(2, 1 << 16, &b), 0);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(fr_chunk_builder_add(b, &recs[i]), 0);
	CHECK_EQ(fr_chunk_builder_close(b, cctx, 77, boot, &chunk, &len), 0);
	CHECK_EQ(fr_chunk_header_parse(chunk, &ci), 0);

	CHECK_EQ(fr_redactor_new(FR_REDACT_ALL, &rd), 0);
	CHECK_EQ(fr_redact_chunk(rd, chunk, len, &made, &made_len), 0);
	CHECK(made != NULL && made_len > 0 && made_len % 8 == 0);
	if (!made)
		goto out;
	CHECK_EQ(read_chunk(made, &ci2, got, 2 * N, &rows, &content), 0);
	CHECK_EQ(made_len, fr_chunk_disk_size(&ci2));
	CHECK_EQ(ci2.seqnum, 77);
	CHECK_EQ(ci2.cpu, 2);
	CHECK(memcmp(ci2.boot_id, boot, 16) == 0);
	CHECK_EQ(ci2.realtime_offset, ci.realtime_offset);
	CHECK_EQ(ci2.monotonic_offset, ci.monotonic_offset);
	CHECK_EQ(ci2.first_ts, 999);
	CHECK_EQ(ci2.last_ts, 1007);
	CHECK_EQ(ci2.nrecords, N);
	CHECK_EQ(ci2.nevents, ci.nevents);
	CHECK(memmem(made, made_len, "t0ps3cret", 9) == NULL);
	for (unsigned i = 0; i < N && i < ci2.nrecords; i++) {
		uint64_t f[16];
		CHECK_EQ(got[i].type, recs[i].type);
		CHECK_EQ(got[i].ts, recs[i].ts);
		CHECK_EQ(got[i].pid, recs[i].pid);
		CHECK_EQ(got[i].tid, recs[i].tid);
		CHECK_EQ(got[i].cgroup_id, recs[i].cgroup_id);
		CHECK_STR(got[i].comm, recs[i].comm);
		if (fr_record_type_has_stack(recs[i].type)) {
			CHECK_EQ(fr_record_frames(&got[i], f, 16), 5);
			CHECK(memcmp(f, kf, sizeof(kf)) == 0 && memcmp(f + 2, uf, sizeof(uf)) == 0);
		}
	}
	CHECK_FIELD(got[0].exec.args, got[0].exec.args_len, "/usr/bin/app\0[redacted]");
	CHECK_FIELD(got[1].mapping.path, got[1].mapping.path_len, "/home/[redacted]/libx.so");
	CHECK(got[1].mapping.end == 0x500000 && got[1].mapping.build_id_len == 20 &&
	      memcmp(got[1].mapping.build_id, bid, 20) == 0);
	CHECK_EQ(got[3].sched.duration_ns, 5000000);
	CHECK_EQ(got[3].sched.syscall_nr, 0);
	CHECK_FIELD(got[4].trigger.incident, got[4].trigger.incident_len, "X-crash");
	CHECK_EQ(got[4].trigger.cause_type, FR_REC_SIGNAL);
	CHECK_EQ(got[4].trigger.cause_ago_ns, 3);
	CHECK_FIELD(got[5].inl.names, got[5].inl.names_len, "f\0g");
	CHECK_FIELD(got[6].mark.text, got[6].mark.text_len, "[redacted]");
	CHECK(got[7].flags & FR_REC_F_ADDR_REDACTED);
	CHECK(got[7].tcp.family == 10 && got[7].tcp.saddr[0] == 0 && got[7].tcp.dport == 2);
	CHECK_EQ(got[8].sw.next_pid, 8);

	/* made again, nothing more is cut: copied as it is */
	{
		uint8_t *again = NULL;
		size_t again_len = 0;
		CHECK_EQ(fr_redact_chunk(rd, made, made_len, &again, &again_len), 0);
		CHECK(again == NULL);
		free(again);
	}
	/* damaged: left out, not copied */
	((uint8_t *)chunk)[sizeof(struct fr_chunk_header) + 3] ^= 0x55;
	free(made);
	made = NULL;
	CHECK_EQ(fr_redact_chunk(rd, chunk, len, &made, &made_len), 0);
	CHECK(made != NULL && made_len == 0);
	CHECK_EQ(fr_redactor_counts(rd)->chunks_left_out, 1);
out:
	free(made);
	free(rows);
	free(content);
	free(chunk);
	fr_redactor_free(rd);
	fr_chunk_builder_free(b);
	ZSTD_freeCCtx(cctx);
}

static void check_json(void)
{
	struct json_object *meta = json_tokener_parse(
		"{\"reason\":\"rotate key s3cr3t\",\"config\":\"exec = \\\"/home/alice/bin/notify --x\\\";\","
		"\"triggers\":[{\"type\":\"exec\",\"exe\":\"/home/alice/bin/app\",\"argv\":[\"app\",\"--pw=s3cr3t\",\"x\"]},"
		"{\"type\":\"tcp\",\"saddr\":\"10.0.0.1\",\"daddr\":\"192.0.2.7\",\"dport\":443},"
		"{\"type\":\"mark\",\"text\":\"s3cr3t\"}],\"host\":\"h\"}");
	struct fr_redactor *rd;
	const char *s;

	CHECK(meta != NULL);
	CHECK_EQ(fr_redactor_new(FR_REDACT_ALL, &rd), 0);
	fr_redact_json(rd, meta);
	s = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	CHECK(strstr(s, "s3cr3t") == NULL && strstr(s, "alice") == NULL && strstr(s, "192.0.2.7") == NULL);
	CHECK(strstr(s, "\"argv\":[\"app\",\"[redacted]\"]") != NULL);
	CHECK(strstr(s, "/home/[redacted]/notify --x") != NULL);
	CHECK(strstr(s, "\"reason\":\"[redacted]\"") != NULL && strstr(s, "\"dport\":443") != NULL);
	/* cut again: the counts stay */
	uint64_t args = fr_redactor_counts(rd)->args, marks = fr_redactor_counts(rd)->marks;
	fr_redact_json(rd, meta);
	CHECK_EQ(fr_redactor_counts(rd)->args, args);
	CHECK_EQ(fr_redactor_counts(rd)->marks, marks);
	struct json_object *sum = fr_redact_summary(rd);
	CHECK_STR(json_object_to_json_string_ext(json_object_object_get(sum, "classes"), JSON_C_TO_STRING_PLAIN),
		  "[\"args\",\"home\",\"tcp\",\"marks\",\"urls\"]");
	json_object_put(sum);
	json_object_put(meta);
	fr_redactor_free(rd);
}

/* URLs in metadata strings: user and password, query; the rest kept;
 * cut once only. */
static void check_urls(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "url = \"https://u:pw@dav.example.com/x/?sig=S1\";",
		  "url = \"https://[redacted]@dav.example.com/x/?[redacted]\";" },
		{ "http://dav.example.com/x/", "http://dav.example.com/x/" },
		{ "a http://h/p?q=1 b https://t@h2:8443/ c", "a http://h/p?[redacted] b https://[redacted]@h2:8443/ c" },
		{ "mailto:x@y ://", "mailto:x@y ://" },
	};
	struct fr_redactor *rd;

	CHECK_EQ(fr_redactor_new(FR_REDACT_URLS, &rd), 0);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct json_object *o = json_object_new_string(cases[i].in);
		uint64_t n = fr_redactor_counts(rd)->urls;
		fr_redact_json(rd, o);
		CHECK_STR(json_object_get_string(o), cases[i].out);
		CHECK_EQ(fr_redactor_counts(rd)->urls, n + (strcmp(cases[i].in, cases[i].out) != 0));
		/* again: nothing more */
		n = fr_redactor_counts(rd)->urls;
		fr_redact_json(rd, o);
		CHECK_STR(json_object_get_string(o), cases[i].out);
		CHECK_EQ(fr_redactor_counts(rd)->urls, n);
		json_object_put(o);
	}
	fr_redactor_free(rd);
}

int main(void)
{
	check_parse();
	check_urls();
	check_paths();
	check_records();
	check_chunk();
	check_json();
	return TEST_DONE();
}
