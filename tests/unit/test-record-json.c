/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/record-json: the streaming writer prints what serializing a json-c
 * object tree printed before it (the reference below is that tree builder,
 * as lib/record-json.c had it, serialized the way frctl dump did), byte for
 * byte: every record type, hostile strings (control characters, quotes,
 * backslashes, '/', DEL, invalid UTF-8, long, empty) and extreme numbers;
 * metrics with doubles, huge integers, escaped keys; stacks with inlined
 * functions' frames and markers.  Also the claim the
 * writer's fast path rests on: json-c copies every byte of a string except
 * '"', '\\' and those below 0x20.  And fr_record_to_json(), the tree
 * parsed back, serializes to the same bytes under every flag set.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "out-buf.h"
#include "parse.h"
#include "record-fields.h"
#include "record-json.h"
#include "store-format.h"
#include "symtab.h"
#include "syscall-names.h"
#include "test.h"

/* ---- the reference: the json-c tree of a record, as dump built it ---- */


/* Length of the valid UTF-8 sequence at p (1-4), or 0 if invalid
 * (overlongs, surrogates and values past U+10FFFF are invalid). */
static size_t ref_utf8_seq(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Recorded strings are bytes (argv, file names, comm); JSON is UTF-8.
 * Invalid bytes become U+FFFD so every line parses in every JSON reader. */
static struct json_object *ref_str(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	struct json_object *o;
	size_t i = 0, k;
	char *fixed, *q;

	while (i < n && (k = ref_utf8_seq(u + i, n - i)) > 0)
		i += k;
	if (i == n)
		return json_object_new_string_len(p, (int)n);
	fixed = malloc(n * 3 + 1);
	if (!fixed)
		return NULL;
	for (i = 0, q = fixed; i < n;) {
		k = ref_utf8_seq(u + i, n - i);
		if (k) {
			memcpy(q, p + i, k);
			q += k;
			i += k;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			i++;
		}
	}
	o = json_object_new_string_len(fixed, (int)(q - fixed));
	free(fixed);
	return o;
}

/* argv block: NUL-separated strings */
static struct json_object *ref_argv(const char *p, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i = 0;

	while (i < n) {
		size_t l = strnlen(p + i, n - i);
		json_object_array_add(a, ref_str(p + i, l));
		i += l + 1;
	}
	return a;
}

/* The reference "stack" and "kernel_frames" of a sample or offcpu record. */
static void ref_stack(struct json_object *o, const struct fr_record *r, const struct fr_record_context *e)
{
	char buf[64];
	struct json_object *stack = json_object_new_array();
	uint64_t addrs[FR_SAMPLE_FRAMES_MAX];
	int n = e->frames ? e->nframes : fr_record_frames(r, addrs, FR_SAMPLE_FRAMES_MAX);
	char name[512], hex[FR_BUILD_ID_MAX * 2 + 1];
	for (int i = 0; i < n; i++) {
		const struct fr_frame *fr = e->frames ? &e->frames[i] : NULL;
		struct json_object *f = json_object_new_object();
		const char *mod;

		snprintf(buf, sizeof(buf), "0x%" PRIx64, fr ? fr->addr : addrs[i]);
		json_object_object_add(f, "addr", json_object_new_string(buf));
		/* names and paths are bytes from binaries and /proc */
		if (fr && fr->sym) {
			fr_frame_name(fr, true, name, sizeof(name));
			json_object_object_add(f, "sym", ref_str(name, strlen(name)));
		} else
			json_object_object_add(f, "sym", NULL);
		mod = fr ? fr_frame_module(fr, name, sizeof(name)) : NULL;
		json_object_object_add(f, "module", mod ? ref_str(mod, strlen(mod)) : NULL);
		if (fr && fr->has_offset) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, fr->offset);
			json_object_object_add(f, "offset", json_object_new_string(buf));
		}
		/* what offline symbolization of an unnamed frame needs */
		if (fr && !fr->sym && fr->build_id_len) {
			json_object_object_add(f, "build_id",
					       json_object_new_string(fr_format_hex(fr->build_id, fr->build_id_len, hex, sizeof(hex))));
		}
		/* only on inlined functions' frames */
		if (fr && fr->inlined)
			json_object_object_add(f, "inlined", json_object_new_boolean(1));
		json_object_array_add(stack, f);
	}
	json_object_object_add(o, "stack", stack);
	json_object_object_add(o, "kernel_frames", json_object_new_int(r->stack.kernel_frames));
}

static struct json_object *reference(const struct fr_record *r, const struct fr_record_context *e)
{
	struct json_object *o = json_object_new_object();
	char buf[INET6_ADDRSTRLEN + 64];

	json_object_object_add(o, "type", json_object_new_string(fr_record_type_name(r->type)));
	json_object_object_add(o, "time", json_object_new_string(fr_format_rfc3339(e->wall_ns, buf, sizeof(buf))));
	json_object_object_add(o, "boot_id", json_object_new_string(fr_format_boot_id(e->boot_id, buf, sizeof(buf))));
	json_object_object_add(o, "cpu", json_object_new_int((int)r->cpu));
	json_object_object_add(o, "pid", json_object_new_int64(r->pid));
	json_object_object_add(o, "tid", json_object_new_int64(r->tid));
	json_object_object_add(o, "comm", ref_str(r->comm, r->comm_len));
	json_object_object_add(o, "cgroup", e->cgroup ? ref_str(e->cgroup, e->cgroup_len) : NULL);
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(r->cgroup_id));
	json_object_object_add(o, "exe", e->exe ? ref_str(e->exe, e->exe_len) : NULL);
	if (e->kernel_thread)
		json_object_object_add(o, "kernel_thread", json_object_new_boolean(1));

	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC:
		json_object_object_add(o, "filename", ref_str(r->exec.filename, r->exec.filename_len));
		json_object_object_add(o, "argv", ref_argv(r->exec.args, r->exec.args_len));
		json_object_object_add(o, "ppid", json_object_new_int64(r->exec.ppid));
		if (r->flags & (FR_REC_F_ARGS_CUT | FR_REC_F_FILENAME_CUT))
			json_object_object_add(o, "truncated", json_object_new_boolean(1));
		break;
	case FR_REC_EXIT: {
		int sig = r->exit.status & 0x7f;
		const char *name = fr_signal_name(sig, buf, sizeof(buf));
		json_object_object_add(o, "exit_code",
				       sig ? NULL : json_object_new_int((int)(r->exit.status >> 8) & 0xff));
		json_object_object_add(o, "signal", name ? json_object_new_string(name) : NULL);
		json_object_object_add(o, "signal_number", sig ? json_object_new_int(sig) : NULL);
		json_object_object_add(o, "core_dumped", json_object_new_boolean(!!(r->exit.status & 0x80)));
		break;
	}
	case FR_REC_FORK:
		json_object_object_add(o, "child_pid", json_object_new_int64(r->fork.child_pid));
		break;
	case FR_REC_SYSCALL: {
		const char *name = fr_syscall_name(r->syscall.nr);
		json_object_object_add(o, "syscall", name ? json_object_new_string(name) : NULL);
		json_object_object_add(o, "nr", json_object_new_int64(r->syscall.nr));
		json_object_object_add(o, "duration_ns", json_object_new_uint64(r->syscall.duration_ns));
		json_object_object_add(o, "ret", json_object_new_int64(r->syscall.ret));
		break;
	}
	case FR_REC_OFFCPU: {
		const char *name = r->sched.syscall_nr >= 0 ? fr_syscall_name((unsigned)r->sched.syscall_nr) : NULL;
		json_object_object_add(o, "duration_ns", json_object_new_uint64(r->sched.duration_ns));
		json_object_object_add(o, "syscall", name ? json_object_new_string(name) : NULL);
		json_object_object_add(o, "nr", r->sched.syscall_nr >= 0 ? json_object_new_int64(r->sched.syscall_nr) : NULL);
		ref_stack(o, r, e);
		break;
	}
	case FR_REC_RUNQ:
		json_object_object_add(o, "duration_ns", json_object_new_uint64(r->sched.duration_ns));
		break;
	case FR_REC_SAMPLE:
		ref_stack(o, r, e);
		break;
	case FR_REC_SWITCH:
		json_object_object_add(o, "prev_state", json_object_new_int64(r->sw.prev_state));
		json_object_object_add(o, "next_pid", json_object_new_int64(r->sw.next_pid));
		json_object_object_add(o, "next_tid", json_object_new_int64(r->sw.next_tid));
		json_object_object_add(o, "next_comm", ref_str(r->sw.next_comm, r->sw.next_comm_len));
		break;
	case FR_REC_BLOCK:
		json_object_object_add(o, "dev", json_object_new_string(fr_format_dev(r->block.dev, buf, sizeof(buf))));
		json_object_object_add(o, "op", json_object_new_string(fr_block_op_name(r->block.op)));
		/* flushes have no sector: the kernel says -1 */
		json_object_object_add(o, "sector", r->block.sector == UINT64_MAX ? NULL : json_object_new_uint64(r->block.sector));
		json_object_object_add(o, "bytes", json_object_new_uint64(r->block.bytes));
		json_object_object_add(o, "duration_ns", json_object_new_uint64(r->block.duration_ns));
		json_object_object_add(o, "error", json_object_new_int(r->block.error));
		break;
	case FR_REC_OOM:
		json_object_object_add(o, "memcg", r->oom.memcg_len ? ref_str(r->oom.memcg, r->oom.memcg_len) : NULL);
		json_object_object_add(o, "memcg_id", json_object_new_uint64(r->oom.memcg_id));
		json_object_object_add(o, "rss_kb", json_object_new_uint64(r->oom.rss_kb));
		break;
	case FR_REC_SIGNAL: {
		const char *name = fr_signal_name((int)r->signal.sig, buf, sizeof(buf)), *code;
		json_object_object_add(o, "signal", name ? json_object_new_string(name) : NULL);
		json_object_object_add(o, "signal_number", json_object_new_int((int)r->signal.sig));
		json_object_object_add(o, "sender_pid", json_object_new_int64(r->signal.sender_pid));
		json_object_object_add(o, "sender_comm", ref_str(r->signal.sender_comm, r->signal.sender_comm_len));
		json_object_object_add(o, "sender_tid", json_object_new_int64(r->signal.sender_tid));
		json_object_object_add(o, "code", json_object_new_int(r->signal.code));
		code = fr_signal_code_name((int)r->signal.sig, r->signal.code);
		json_object_object_add(o, "code_name", code ? json_object_new_string(code) : NULL);
		snprintf(buf, sizeof(buf), "0x%" PRIx64, r->signal.addr);
		json_object_object_add(o, "addr", r->flags & FR_REC_F_FAULT_ADDR ? json_object_new_string(buf) : NULL);
		json_object_object_add(o, "stack_status", json_object_new_string(fr_signal_stack_name(r->signal.stack)));
		ref_stack(o, r, e);
		break;
	}
	case FR_REC_TCP:
		json_object_object_add(o, "event", json_object_new_string(fr_tcp_event_name(r->tcp.event)));
		json_object_object_add(o, "saddr", json_object_new_string(fr_format_addr(r->tcp.family, r->tcp.saddr, buf, sizeof(buf))));
		json_object_object_add(o, "sport", json_object_new_int(r->tcp.sport));
		json_object_object_add(o, "daddr", json_object_new_string(fr_format_addr(r->tcp.family, r->tcp.daddr, buf, sizeof(buf))));
		json_object_object_add(o, "dport", json_object_new_int(r->tcp.dport));
		json_object_object_add(o, "state", json_object_new_string(fr_tcp_state_name(r->tcp.state)));
		break;
	case FR_REC_MARK:
		json_object_object_add(o, "text", ref_str(r->mark.text, r->mark.text_len));
		break;
	case FR_REC_METRICS: {
		/* nested objects per subsystem, at the top level of the record */
		char *copy = strndup(r->metrics.json, r->metrics.json_len);
		struct json_object *m = copy ? json_tokener_parse(copy) : NULL;
		free(copy);
		if (m && json_object_is_type(m, json_type_object)) {
			json_object_object_foreach(m, key, val) {
				if (!json_object_object_get_ex(o, key, NULL))
					json_object_object_add(o, key, json_object_get(val));
			}
		}
		json_object_put(m);
		break;
	}
	case FR_REC_TRIGGER:
		json_object_object_add(o, "rule", ref_str(r->trigger.rule, r->trigger.rule_len));
		json_object_object_add(o, "incident", ref_str(r->trigger.incident, r->trigger.incident_len));
		break;
	case FR_REC_GAP:
		json_object_object_add(o, "lost", json_object_new_uint64(r->gap.lost));
		break;
	FR_REC_META_CASES /* never printed */
		break;
	}
	return o;
}

/* ---- the tests ---- */

/* how frctl dump serialized the tree */
#define DUMP_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static struct fr_json_writer *writer; /* one for all: its caches are under test too */
static struct fr_out out;
static unsigned long long seed = 0x9e3779b97f4a7c15ULL;
static unsigned compared;

static uint64_t rnd(void)
{
	return test_xorshift(&seed);
}

/* The writer's line against the reference; the tree fr_record_to_json()
 * parses from it against the reference tree under every flag set. */
static void check_record(const struct fr_record *r, const struct fr_record_context *ctx)
{
	static const int flags[] = { DUMP_FLAGS, JSON_C_TO_STRING_PLAIN, JSON_C_TO_STRING_SPACED,
				     JSON_C_TO_STRING_PRETTY };
	struct json_object *ref = reference(r, ctx), *parsed;
	size_t len, at = 0;
	const char *want = json_object_to_json_string_length(ref, DUMP_FLAGS, &len);

	out.len = 0;
	CHECK_EQ(fr_record_json_write(writer, &out, r, ctx), 0);
	CHECK_EQ(out.err, 0);
	if (out.len != len + 1 || memcmp(out.p, want, len) != 0 || out.p[len] != '\n') {
		while (at < len && at < out.len && out.p[at] == want[at])
			at++;
		fprintf(stderr, "type %u: differs at byte %zu (lengths %zu, %zu)\n  want: %.*s\n  got:  %.*s\n",
			r->type, at, len + 1, out.len, (int)(len - at < 80 ? len - at : 80), want + at,
			(int)(out.len - at < 80 ? out.len - at : 80), out.p + at);
		test_failures++;
	}
	parsed = fr_record_to_json(r, ctx);
	CHECK(parsed != NULL);
	for (size_t i = 0; parsed && i < sizeof(flags) / sizeof(flags[0]); i++) {
		size_t la, lb;
		const char *a = json_object_to_json_string_length(parsed, flags[i], &la);
		const char *b = json_object_to_json_string_length(ref, flags[i], &lb);
		if (la != lb || memcmp(a, b, la) != 0) {
			fprintf(stderr, "type %u, flags %d: the parsed tree differs\n  want: %.200s\n  got:  %.200s\n",
				r->type, flags[i], b, a);
			test_failures++;
		}
	}
	json_object_put(parsed);
	json_object_put(ref);
	compared++;
}

/* The rule the writer copies strings by: json-c (under the flags dump
 * uses) changes '"', '\\' and bytes below 0x20, and nothing else: not
 * '/', not DEL, not bytes >= 0x80, valid UTF-8 or not. */
static void test_json_c_escaping(void)
{
	struct json_object *s = json_object_new_string("");

	for (int c = 0; c < 256; c++) {
		char in[3] = { 'a', (char)c, 'b' };
		size_t len;
		const char *o;
		bool copied;

		json_object_set_string_len(s, in, 3);
		o = json_object_to_json_string_length(s, DUMP_FLAGS, &len);
		copied = len == 5 && o[0] == '"' && memcmp(o + 1, in, 3) == 0 && o[4] == '"';
		if (copied != !(c < 0x20 || c == '"' || c == '\\')) {
			fprintf(stderr, "json-c: byte 0x%02x %s\n", c, copied ? "copied" : "escaped");
			test_failures++;
		}
	}
	json_object_put(s);
}

/* Hostile pieces of strings: controls, quotes, backslashes, '/', DEL,
 * valid and invalid UTF-8 (overlong, surrogate, past U+10FFFF, cut), text
 * that looks like escapes. */
static const struct { const char *s; size_t n; } pieces[] = {
#define P(lit) { lit, sizeof(lit) - 1 }
	P("\0"), P("\x01"), P("\x1f"), P(" "), P("\""), P("\\"), P("/"), P("\x7f"), P("\x80"), P("\xbf"),
	P("\xc0\xaf"), P("\xc1\xbf"), P("\xc2"), P("\xc3\xa9"), P("\xe2\x82\xac"), P("\xe2\x82"), P("\xe0\x80\xaf"),
	P("\xed\xa0\x80"), P("\xed\x9f\xbf"), P("\xef\xbf\xbd"), P("\xf0\x9f\x98\x80"), P("\xf0\x8f\xbf\xbf"),
	P("\xf4\x8f\xbf\xbf"), P("\xf4\x90\x80\x80"), P("\xf5"), P("\xfe"), P("\xff"), P("a"), P("abc"),
	P("\b\f\n\r\t"), P("\\u0041"), P("\\\""), P("</script>"), P("/usr/bin/x"), P("null"), P("{}"),
#undef P
};
#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

/* A hostile string of up to @max bytes into buf; returns its length. */
static size_t hostile(char *buf, size_t max)
{
	size_t n = 0, want;

	switch (rnd() % 32) {
	case 0:
	case 1:
	case 2:
	case 3:
		return 0;
	case 4:
		want = max; /* long */
		break;
	default:
		want = rnd() % 64;
	}
	if (want > max)
		want = max;
	while (n < want) {
		unsigned i = (unsigned)(rnd() % NPIECES);
		size_t l = pieces[i].n < want - n ? pieces[i].n : want - n;
		memcpy(buf + n, pieces[i].s, l);
		n += l;
	}
	return n;
}

static uint64_t extreme_u64(void)
{
	static const uint64_t v[] = { 0, 1, 9, 10, 99, 100, 0x7f, 0x80, 0xff, INT32_MAX, (uint64_t)INT32_MAX + 1,
				      UINT32_MAX, (uint64_t)UINT32_MAX + 1, INT64_MAX, (uint64_t)INT64_MAX + 1,
				      UINT64_MAX - 1, UINT64_MAX, 10000000000000000000ULL };
	return rnd() % 3 ? v[rnd() % (sizeof(v) / sizeof(v[0]))] : rnd() >> (rnd() % 64);
}

static const char *const metrics[] = {
	"{\"cpu\":{\"user\":1.50,\"system\":0.1,\"idle\":1e3,\"steal\":-0.0,\"iowait\":0}}",
	"{\"psi\":{\"some\":[0.10,2.5E-3,1.7976931348623157e308,5e-324,-1.25,100.0]},\"mem\":{\"total_kb\":18446744073709551615,"
	"\"low\":-9223372036854775808,\"x\":9223372036854775807,\"y\":-0,\"z\":12345678901234567890}}",
	"{\"pid\":7,\"type\":\"x\",\"time\":1,\"boot_id\":2,\"cpu\":3,\"tid\":4,\"comm\":5,\"cgroup\":6,\"cgroup_id\":7,"
	"\"exe\":8,\"kernel_thread\":true,\"load\":[1,2,3]}",
	"{\"a\\\"b\":1,\"c\\\\d\":2,\"e/f\":\"g/h\",\"\\u0001\":\"\\u0000x\",\"\\u00e9\":\"\\ud83d\\ude00\",\"raw\":\"\xff\xfe\",\"\xc3\xa9\":null}",
	"{\"dup\":1,\"other\":{},\"dup\":[2,{\"dup\":3}],\"t\":true,\"f\":false,\"n\":null,\"s\":\"\\t\\n\\/\"}",
	"{}",
	"[1,2,3]",
	"not json",
	"{\"truncated\":",
	"{\"deep\":{\"a\":{\"b\":{\"c\":[[[]],{}]}}},\"num\":0.30000000000000004,\"e\":1E+2,\"neg\":-1e-7}",
};

static const uint16_t types[] = { FR_REC_EXEC, FR_REC_EXIT, FR_REC_FORK, FR_REC_SYSCALL, FR_REC_OFFCPU,
				  FR_REC_RUNQ, FR_REC_BLOCK, FR_REC_OOM, FR_REC_SIGNAL, FR_REC_TCP,
				  FR_REC_SWITCH, FR_REC_SAMPLE, FR_REC_GAP, FR_REC_MARK, FR_REC_METRICS,
				  FR_REC_TRIGGER, FR_REC_CGROUP, FR_REC_PROCESS, 0, 200 };
#define NTYPES (sizeof(types) / sizeof(types[0]))

#define STR_MAX (64 * 1024)
static char strs[8][STR_MAX];
static const uint8_t boots[3][16] = { { 0 }, { 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, 1, 2, 3, 4, 5, 6, 7, 8 },
				      { [0 ... 15] = 0xff } };

static void fill_frame(struct fr_frame *f, char *buf, size_t room)
{
	static const uint8_t build_id[FR_BUILD_ID_MAX] = { 0xde, 0xad, 0xbe, 0xef, 0, 1, 0x7f, 0x80, 0xff };
	size_t half = room / 2;

	*f = (struct fr_frame){ .addr = extreme_u64(), .kernel = rnd() % 2, .inlined = rnd() % 4 == 0 };
	if (rnd() % 8 == 0) {
		/* a marker: named by what it says, no module */
		f->addr = 1 + rnd() % (FR_FRAME_MARKER_MAX - 1);
		f->kernel = false;
		f->inlined = false;
		f->sym = fr_frame_marker_name(f->addr);
		f->sym_len = f->sym ? (uint32_t)strlen(f->sym) : 0;
		return;
	}
	if (rnd() % 4) {
		/* names past the 512 bytes the name is cut to, mid-character */
		f->sym_len = (uint32_t)hostile(buf, rnd() % 4 ? 40 : 600);
		f->sym = buf;
		f->sym_off = extreme_u64();
	}
	if (rnd() % 4) {
		f->module_len = (uint32_t)hostile(buf + half, rnd() % 4 ? 40 : 600);
		f->module = buf + half;
		f->module_brackets = rnd() % 2;
	}
	f->has_offset = rnd() % 2;
	f->offset = extreme_u64();
	if (rnd() % 2) {
		f->build_id = build_id;
		f->build_id_len = (uint32_t)(rnd() % (FR_BUILD_ID_MAX + 1));
	}
}

/* A sample, offcpu or signal record as a reader has it: encoded and
 * decoded (frames by address). */
static void decoded_sample(struct fr_record *r, uint8_t *enc, size_t cap)
{
	static uint64_t k[FR_SAMPLE_FRAMES_MAX], u[FR_SAMPLE_FRAMES_MAX];
	struct fr_codec_state st = { .incompat_flags = FR_CHUNK_INCOMPAT_OFFCPU_STACK | FR_CHUNK_INCOMPAT_SIGNAL_STACK },
			      dst = st;
	struct fr_record d;
	size_t pos = 0;
	int len;

	r->stack.kernel_frames = (uint16_t)(rnd() % 8);
	r->stack.user_frames = (uint16_t)(rnd() % 8);
	for (unsigned i = 0; i < FR_SAMPLE_FRAMES_MAX; i++)
		k[i] = 0xffffffff81000000ULL + (rnd() & 0xffffff), u[i] = extreme_u64();
	r->stack.kframes = k;
	r->stack.uframes = u;
	len = fr_record_encode(&st, r, enc, cap, 0);
	CHECK(len > 0);
	if (len > 0 && fr_record_decode(&dst, enc, (size_t)len, &pos, &d) == 0) {
		memcpy(d.comm, r->comm, sizeof(d.comm)); /* the codec's copy is NUL-terminated */
		*r = d;
	} else
		CHECK(!"sample decodes");
}

/* A stack for @r: named frames as a reader resolved them, or addresses
 * as decoded. */
static void random_stack(struct fr_record *r, struct fr_record_context *ctx, struct fr_frame *frames, char *names,
			 uint8_t *enc)
{
	if (rnd() % 2) {
		ctx->nframes = (int)(rnd() % 12);
		ctx->frames = frames;
		for (int i = 0; i < ctx->nframes; i++)
			fill_frame(&frames[i], names + (size_t)i * 2048, 2048);
		r->stack.kernel_frames = (uint16_t)extreme_u64();
	} else
		decoded_sample(r, enc, 1 << 16);
}

static void random_record(uint16_t type, struct fr_record *r, struct fr_record_context *ctx,
			  struct fr_frame *frames, char *names, uint8_t *enc)
{
	size_t n;

	*r = (struct fr_record){ .type = type, .cpu = (uint32_t)extreme_u64(), .pid = (uint32_t)extreme_u64(),
				 .tid = (uint32_t)extreme_u64(), .cgroup_id = extreme_u64() };
	if (rnd() % 2)
		r->flags = (uint16_t)(rnd() % 4);
	n = hostile(r->comm, FR_REC_COMM_MAX);
	r->comm[n] = 0;
	r->comm_len = (uint8_t)n;

	*ctx = (struct fr_record_context){ .boot_id = boots[rnd() % 3], .kernel_thread = rnd() % 4 == 0 };
	/* mostly ascending within a second (the writer formats seconds once) */
	static uint64_t wall = 1763750000ULL * 1000000000ULL;
	switch (rnd() % 8) {
	case 0: ctx->wall_ns = extreme_u64(); break;
	case 1: ctx->wall_ns = wall - rnd() % 3000000000ULL; break;
	default: ctx->wall_ns = wall += rnd() % 400000000ULL;
	}
	if (rnd() % 3) {
		ctx->cgroup = strs[0];
		ctx->cgroup_len = (uint32_t)hostile(strs[0], STR_MAX);
	}
	if (rnd() % 3) {
		ctx->exe = strs[1];
		ctx->exe_len = (uint32_t)hostile(strs[1], STR_MAX);
	}

	switch ((enum fr_record_type)type) {
	case FR_REC_EXEC:
		r->exec.ppid = (uint32_t)extreme_u64();
		r->exec.filename = strs[2];
		r->exec.filename_len = (uint32_t)hostile(strs[2], STR_MAX);
		r->exec.args = strs[3];
		r->exec.args_len = (uint32_t)hostile(strs[3], STR_MAX); /* NULs split it */
		break;
	case FR_REC_EXIT: {
		static const uint32_t st[] = { 0, 0x100, 0xff00, 0x0b, 0x8b, 0x86, 0x7f, 0x22, 0x40, 0xffffffff };
		r->exit.status = rnd() % 2 ? st[rnd() % (sizeof(st) / sizeof(st[0]))] : (uint32_t)rnd();
		break;
	}
	case FR_REC_FORK:
		r->fork.child_pid = (uint32_t)extreme_u64();
		break;
	case FR_REC_SYSCALL: {
		static const int64_t ret[] = { 0, -1, -4, INT64_MIN, INT64_MAX, -9223372036854775807LL, 4096 };
		r->syscall.nr = rnd() % 2 ? (uint32_t)(rnd() % 500) : (uint32_t)extreme_u64();
		r->syscall.duration_ns = extreme_u64();
		r->syscall.ret = rnd() % 2 ? ret[rnd() % (sizeof(ret) / sizeof(ret[0]))] : (int64_t)extreme_u64();
		break;
	}
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ: {
		/* none, known calls, numbers without a name, the extremes */
		static const int32_t nr[] = { -1, 0, 230, 511, 512, 100000, INT32_MAX, INT32_MIN };
		r->sched.duration_ns = extreme_u64();
		r->sched.syscall_nr = rnd() % 2 ? nr[rnd() % (sizeof(nr) / sizeof(nr[0]))] : (int32_t)(rnd() % 500);
		if (type == FR_REC_RUNQ)
			break;
		int64_t dur = (int64_t)r->sched.duration_ns;
		int32_t snr = r->sched.syscall_nr;
		random_stack(r, ctx, frames, names, enc);
		r->sched.duration_ns = (uint64_t)dur;
		r->sched.syscall_nr = snr;
		break;
	}
	case FR_REC_SAMPLE:
		random_stack(r, ctx, frames, names, enc);
		break;
	case FR_REC_SWITCH:
		r->sw.prev_state = (uint32_t)extreme_u64();
		r->sw.next_pid = (uint32_t)extreme_u64();
		r->sw.next_tid = (uint32_t)extreme_u64();
		r->sw.next_comm = strs[4];
		r->sw.next_comm_len = (uint32_t)hostile(strs[4], FR_REC_COMM_MAX);
		break;
	case FR_REC_BLOCK:
		r->block.dev = (uint32_t)extreme_u64();
		r->block.op = (uint32_t)(rnd() % 12);
		r->block.sector = rnd() % 3 ? extreme_u64() : UINT64_MAX;
		r->block.bytes = (uint32_t)extreme_u64();
		r->block.error = (int32_t)extreme_u64();
		r->block.duration_ns = extreme_u64();
		break;
	case FR_REC_OOM:
		r->oom.rss_kb = extreme_u64();
		r->oom.memcg_id = extreme_u64();
		r->oom.memcg = strs[5];
		r->oom.memcg_len = (uint32_t)hostile(strs[5], STR_MAX);
		break;
	case FR_REC_SIGNAL:
		r->signal.sig = rnd() % 2 ? (uint32_t)(rnd() % 70) : (uint32_t)extreme_u64();
		r->signal.sender_pid = (uint32_t)extreme_u64();
		r->signal.code = (int32_t)extreme_u64();
		r->signal.sender_comm = strs[4];
		r->signal.sender_comm_len = (uint32_t)hostile(strs[4], FR_REC_COMM_MAX);
		r->signal.sender_tid = (uint32_t)extreme_u64();
		r->signal.stack = (uint8_t)(rnd() % 6);
		r->signal.addr = extreme_u64();
		if (rnd() % 2)
			r->flags |= FR_REC_F_FAULT_ADDR;
		/* the stack is the sender's: the fields survive the codec */
		random_stack(r, ctx, frames, names, enc);
		break;
	case FR_REC_TCP:
		r->tcp.event = (uint8_t)(rnd() % 5);
		r->tcp.state = (uint8_t)(rnd() % 16);
		r->tcp.family = rnd() % 2 ? 2 : 10;
		r->tcp.sport = (uint16_t)rnd();
		r->tcp.dport = (uint16_t)rnd();
		for (int i = 0; i < 16; i++)
			r->tcp.saddr[i] = (uint8_t)rnd(), r->tcp.daddr[i] = (uint8_t)(rnd() % 3 ? 0 : rnd());
		break;
	case FR_REC_MARK:
		r->mark.text = strs[6];
		r->mark.text_len = (uint32_t)hostile(strs[6], STR_MAX);
		break;
	case FR_REC_METRICS: {
		const char *m = metrics[rnd() % (sizeof(metrics) / sizeof(metrics[0]))];
		r->metrics.json = m;
		r->metrics.json_len = (uint32_t)strlen(m);
		break;
	}
	case FR_REC_TRIGGER:
		r->trigger.rule = strs[6];
		r->trigger.rule_len = (uint32_t)hostile(strs[6], 200);
		r->trigger.incident = strs[7];
		r->trigger.incident_len = (uint32_t)hostile(strs[7], 200);
		break;
	case FR_REC_GAP:
		r->gap.lost = extreme_u64();
		break;
	FR_REC_META_CASES /* never printed */
		break;
	}
}

/* Every byte value alone and in text, in a recorded string, the comm and
 * a metrics key: through the writer's copy-or-escape decision. */
static void test_every_byte(void)
{
	struct fr_record r = { .type = FR_REC_MARK, .pid = 1, .tid = 1 };
	struct fr_record_context ctx = { .wall_ns = 1, .boot_id = boots[1] };
	char text[8], json[64];

	for (int c = 0; c < 256; c++) {
		snprintf(text, sizeof(text), "x%cy", c);
		text[1] = (char)c;
		r.type = FR_REC_MARK;
		r.mark.text = text;
		r.mark.text_len = 3;
		r.comm[0] = (char)c;
		r.comm[1] = 0;
		r.comm_len = 1;
		check_record(&r, &ctx);
		r.mark.text_len = 1;
		r.mark.text = text + 1;
		check_record(&r, &ctx);
		if (c >= 0x20 && c != '"' && c != '\\') {
			/* raw bytes in a metrics key and value (json-c's parser keeps them) */
			snprintf(json, sizeof(json), "{\"k%cey\":\"v%c\",\"m\":1}", c, c);
			r.type = FR_REC_METRICS;
			r.metrics.json = json;
			r.metrics.json_len = (uint32_t)strlen(json);
			check_record(&r, &ctx);
		}
	}
}

/* A sample's stack with an inlined function and a marker, as frctl(1)
 * documents it, byte for byte. */
static void test_stack_example(void)
{
	static const uint8_t bid[2] = { 0xab, 0xcd };
	struct fr_frame frames[4] = {
		{ .addr = 0xffffffff81001010ULL, .kernel = true, .sym = "do_syscall_64", .sym_len = 13, .sym_off = 0x10,
		  .module = "[kernel.kallsyms]", .module_len = 17 },
		{ .addr = 0x555500001111ULL, .inlined = true, .sym = "inner", .sym_len = 5, .module = "/usr/bin/app",
		  .module_len = 12, .has_offset = true, .offset = 0x1111, .build_id = bid, .build_id_len = 2 },
		{ .addr = 0x555500001111ULL, .sym = "outer", .sym_len = 5, .sym_off = 0x11, .module = "/usr/bin/app",
		  .module_len = 12, .has_offset = true, .offset = 0x1111, .build_id = bid, .build_id_len = 2 },
		{ .addr = FR_FRAME_TRUNCATED, .sym = "[truncated]", .sym_len = 11 },
	};
	struct fr_record r = { .type = FR_REC_SAMPLE, .pid = 7, .tid = 7, .comm = "app", .comm_len = 3 };
	struct fr_record_context ctx = { .wall_ns = 1, .boot_id = boots[1], .frames = frames, .nframes = 4 };
	const char *want = "\"stack\":[{\"addr\":\"0xffffffff81001010\",\"sym\":\"do_syscall_64+0x10\","
			   "\"module\":\"[kernel.kallsyms]\"},"
			   "{\"addr\":\"0x555500001111\",\"sym\":\"inner\",\"module\":\"/usr/bin/app\","
			   "\"offset\":\"0x1111\",\"inlined\":true},"
			   "{\"addr\":\"0x555500001111\",\"sym\":\"outer+0x11\",\"module\":\"/usr/bin/app\","
			   "\"offset\":\"0x1111\"},"
			   "{\"addr\":\"0x1\",\"sym\":\"[truncated]\",\"module\":null}],\"kernel_frames\":1";

	r.stack.kernel_frames = 1;
	r.stack.user_frames = 2;
	out.len = 0;
	CHECK_EQ(fr_record_json_write(writer, &out, &r, &ctx), 0);
	if (!memmem(out.p, out.len, want, strlen(want))) {
		fprintf(stderr, "stack example: want %s\n  in: %.*s\n", want, (int)out.len, out.p);
		test_failures++;
	}
	check_record(&r, &ctx);
}

static void test_random_records(unsigned rounds)
{
	static struct fr_frame frames[FR_SAMPLE_FRAMES_MAX];
	static char names[FR_SAMPLE_FRAMES_MAX * 2048];
	static uint8_t enc[1 << 16];
	struct fr_record r;
	struct fr_record_context ctx;

	for (unsigned i = 0; i < rounds; i++) {
		random_record(types[i % NTYPES], &r, &ctx, frames, names, enc);
		check_record(&r, &ctx);
	}
}

/* The record-type table's FR_RT_DURATION says which types have a
 * duration: fr_record_duration_ns() must give one for exactly those (a
 * new type with a duration and no case there fails here). */
static void test_duration_flag(void)
{
	unsigned n;
	const uint16_t *printed = fr_record_types_printed(&n);

	for (unsigned i = 0; i < n; i++) {
		struct fr_record r;

		memset(&r, 0xff, sizeof(r)); /* every field of the union set */
		r.type = printed[i];
		CHECK_EQ(fr_record_duration_ns(&r) != 0, (fr_record_type_flags(printed[i]) & FR_RT_DURATION) != 0);
	}
}

int main(void)
{
	if (fr_json_writer_new(&writer) < 0 || fr_out_init(&out, NULL) < 0)
		return 1;
	test_duration_flag();
	test_json_c_escaping();
	test_every_byte();
	test_stack_example();
	test_random_records(20000);
	/* a fresh writer (empty caches) gives the same */
	writer = fr_json_writer_free(writer);
	CHECK_EQ(fr_json_writer_new(&writer), 0);
	test_random_records(2000);
	printf("%u records compared\n", compared);
	fr_json_writer_free(writer);
	free(out.p);
	return TEST_DONE();
}
