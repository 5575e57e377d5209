/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A record as JSON (frctl dump --format json, the perfetto format's event
 * arguments, incident metadata); field names are an API (DESIGN.md,
 * frctl(1)).
 *
 * Records are written as text, straight into the output buffer: a dump
 * prints a million of them, and a json-c tree per record cost about 2 µs
 * of allocation and freeing each.  Keys are literals and numbers are
 * printed as json-c prints them (decimal, as "%" PRId64 / PRIu64).  String
 * values keep json-c's escaping: a string that holds no byte json-c
 * changes is copied as it is, any other goes through one reused json-c
 * string object.  The output is byte for byte what serializing the object
 * tree with JSON_FLAGS gave (tests/unit/test-record-json.c holds the two
 * side by side); callers that need a tree parse the line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "record-fields.h"
#include "record-json.h"
#include "symtab.h"
#include "syscall-names.h"
#include "wait-kind.h"
#include "waker.h"

/* compact, and "/" as it is: paths are most of the strings */
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct fr_json_writer {
	struct json_object *str; /* json-c escapes the strings that need it */
	char *fixed;             /* a string with invalid UTF-8 replaced */
	size_t fixed_cap;
	uint64_t sec;            /* time stamps: the second last formatted */
	char stamp[64];          /* "YYYY-MM-DDTHH:MM:SS." of sec */
	size_t stamp_len;        /* 0: sec is not formatted */
	uint8_t boot_id[16];     /* the boot id last formatted */
	char boot[64];
	bool have_boot;
};

int fr_json_writer_new(struct fr_json_writer **ret)
{
	struct fr_json_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->str = json_object_new_string("");
	if (!w->str) {
		free(w);
		return -ENOMEM;
	}
	*ret = w;
	return 0;
}

struct fr_json_writer *fr_json_writer_free(struct fr_json_writer *w)
{
	if (w) {
		json_object_put(w->str);
		free(w->fixed);
		free(w);
	}
	return NULL;
}

/* What json-c does to a byte in a string with JSON_FLAGS: escapes '"',
 * '\\' and control characters below 0x20, copies every other byte as it
 * is (DEL and bytes >= 0x80 too).  The unit test checks this against
 * json-c for all 256 bytes. */
enum { PLAIN = 0, ESCAPED = 1, HIGH = 2 };
static const uint8_t byte_class[256] = {
	[0 ... 0x1f] = ESCAPED, ['"'] = ESCAPED, ['\\'] = ESCAPED, [0x80 ... 0xff] = HIGH,
};

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if invalid
 * (overlongs, surrogates and values past U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *p, size_t n)
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

/* The JSON string of p[0..n) as json-c writes it, quotes included. */
static int put_escaped(struct fr_json_writer *w, struct fr_out *o, const char *p, size_t n)
{
	const char *s;
	size_t len;

	if (n > INT_MAX)
		return -E2BIG;
	if (!json_object_set_string_len(w->str, p, (int)n))
		return -ENOMEM;
	s = json_object_to_json_string_length(w->str, JSON_FLAGS, &len);
	if (!s)
		return -ENOMEM;
	fr_out_write(o, s, len);
	return 0;
}

static void put_quoted(struct fr_out *o, const char *p, size_t n)
{
	fr_out_putc(o, '"');
	fr_out_write(o, p, n);
	fr_out_putc(o, '"');
}

/* Bytes as a JSON string, exactly as json-c writes them, valid UTF-8 or
 * not (metrics keys, which json-c parsed; names formatted here). */
static int put_bytes(struct fr_json_writer *w, struct fr_out *o, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;

	for (size_t i = 0; i < n; i++)
		if (byte_class[u[i]] == ESCAPED)
			return put_escaped(w, o, p, n);
	put_quoted(o, p, n);
	return 0;
}

/* Recorded strings are bytes (argv, file names, comm); JSON is UTF-8.
 * Invalid bytes become U+FFFD so every line parses in every JSON reader. */
static int put_str(struct fr_json_writer *w, struct fr_out *o, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	bool escaped = false;
	size_t i = 0, k;
	char *q;

	while (i < n) {
		uint8_t c = byte_class[u[i]];
		if (c == PLAIN)
			i++;
		else if (c == ESCAPED)
			escaped = true, i++;
		else if ((k = utf8_seq(u + i, n - i)) > 0)
			i += k;
		else
			break;
	}
	if (i == n) {
		if (escaped)
			return put_escaped(w, o, p, n);
		put_quoted(o, p, n);
		return 0;
	}
	if (w->fixed_cap < n * 3) {
		char *f = realloc(w->fixed, n * 3);
		if (!f)
			return -ENOMEM;
		w->fixed = f;
		w->fixed_cap = n * 3;
	}
	memcpy(w->fixed, p, i);
	for (q = w->fixed + i; i < n;) {
		k = utf8_seq(u + i, n - i);
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
	return put_escaped(w, o, w->fixed, (size_t)(q - w->fixed));
}

/* Names and numbers formatted here (ASCII): as json-c writes them; NULL
 * is null. */
static int put_cstr(struct fr_json_writer *w, struct fr_out *o, const char *s)
{
	if (!s) {
		fr_out_write(o, "null", 4);
		return 0;
	}
	return put_bytes(w, o, s, strlen(s));
}

/* "0x1f", as "0x%" PRIx64 */
static void put_hex(struct fr_out *o, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '"';
	do {
		*--p = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	fr_out_write(o, p, (size_t)(buf + sizeof(buf) - p));
}

/* a string literal (sizeof is its length) */
#define KEY(o, lit) fr_out_write(o, "" lit, sizeof(lit) - 1)

/* RFC 3339 UTC with nanoseconds (as fr_format_rfc3339()); the seconds are
 * formatted once each. */
static void put_time(struct fr_json_writer *w, struct fr_out *o, uint64_t wall_ns)
{
	uint64_t sec = wall_ns / NSEC_PER_SEC, ns = wall_ns % NSEC_PER_SEC;
	char frac[11];

	if (!w->stamp_len || sec != w->sec) {
		char buf[sizeof(w->stamp)];
		size_t n = strlen(fr_format_rfc3339(sec * NSEC_PER_SEC, buf, sizeof(buf)));

		w->sec = sec;
		if (n < 11 || strcmp(buf + n - 11, ".000000000Z") != 0) {
			/* not a time: as it is, no fraction */
			w->stamp_len = 0;
			put_cstr(w, o, buf);
			return;
		}
		w->stamp_len = n - 10;
		memcpy(w->stamp, buf, w->stamp_len);
	}
	for (int i = 8; i >= 0; i--, ns /= 10)
		frac[i] = (char)('0' + ns % 10);
	frac[9] = 'Z';
	frac[10] = '"';
	fr_out_putc(o, '"');
	fr_out_write(o, w->stamp, w->stamp_len);
	fr_out_write(o, frac, sizeof(frac));
}

static void put_boot_id(struct fr_json_writer *w, struct fr_out *o, const uint8_t *id)
{
	if (!w->have_boot || memcmp(w->boot_id, id, sizeof(w->boot_id)) != 0) {
		memcpy(w->boot_id, id, sizeof(w->boot_id));
		fr_format_boot_id(id, w->boot, sizeof(w->boot));
		w->have_boot = true;
	}
	put_quoted(o, w->boot, strlen(w->boot));
}

/* argv block: NUL-separated strings */
static int put_argv(struct fr_json_writer *w, struct fr_out *o, const char *p, size_t n)
{
	size_t i = 0;
	int k = 0;

	fr_out_putc(o, '[');
	while (i < n && k == 0) {
		size_t l = strnlen(p + i, n - i);
		if (i)
			fr_out_putc(o, ',');
		k = put_str(w, o, p + i, l);
		i += l + 1;
	}
	fr_out_putc(o, ']');
	return k;
}

/* Appends @n bytes of @s to buf[*len] (room @cap, one byte kept for a
 * NUL), as snprintf() cuts. */
static void append(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	if (n > cap - 1 - *len)
		n = cap - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
}

/* What fr_frame_name(f, true, buf, cap) and fr_frame_module(f, buf, cap)
 * print for a named frame and a known module, without printf (a dump
 * names millions of frames); returns the length.  The unit test holds
 * them against those functions. */
static size_t frame_name(const struct fr_frame *f, char *buf, size_t cap)
{
	char hex[16], *h = hex + sizeof(hex);
	uint64_t v = f->sym_off;
	size_t len = 0;

	do {
		*--h = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	append(buf, cap, &len, f->sym, strnlen(f->sym, f->sym_len)); /* "%.*s" */
	if (!fr_frame_sym_has_off(f))
		return len;
	append(buf, cap, &len, "+0x", 3);
	append(buf, cap, &len, h, (size_t)(hex + sizeof(hex) - h));
	return len;
}

static size_t frame_module(const struct fr_frame *f, char *buf, size_t cap)
{
	size_t len = 0;

	if (f->module_brackets)
		append(buf, cap, &len, "[", 1);
	append(buf, cap, &len, f->module, strnlen(f->module, f->module_len));
	if (f->module_brackets)
		append(buf, cap, &len, "]", 1);
	return len;
}

/* The stack of @r: @frames[0..@nframes) resolved, or (@frames NULL)
 * its addresses. */
static int put_frames(struct fr_json_writer *w, struct fr_out *o, const struct fr_record *r,
		      const struct fr_frame *frames, int nframes)
{
	uint64_t addrs[FR_SAMPLE_FRAMES_MAX];
	int n = frames ? nframes : fr_record_frames(r, addrs, FR_SAMPLE_FRAMES_MAX);
	/* the sizes fr_frame_name() and fr_frame_module() were given */
	char name[512], hex[FR_BUILD_ID_MAX * 2 + 1];
	int k = 0;

	fr_out_putc(o, '[');
	for (int i = 0; i < n && k == 0; i++) {
		const struct fr_frame *fr = frames ? &frames[i] : NULL;

		if (i)
			fr_out_putc(o, ',');
		KEY(o, "{\"addr\":");
		/* a Python frame: its code object's address */
		put_hex(o, fr ? (fr->python ? fr_frame_python_code(fr->addr) : fr->addr) : addrs[i]);
		/* names and paths are bytes from binaries and /proc */
		KEY(o, ",\"sym\":");
		if (fr && fr->sym)
			k = put_str(w, o, name, frame_name(fr, name, sizeof(name)));
		else
			KEY(o, "null");
		KEY(o, ",\"module\":");
		if (!fr || !fr->module)
			KEY(o, "null");
		else if (k == 0)
			k = put_str(w, o, name, frame_module(fr, name, sizeof(name)));
		if (fr && fr->has_offset) {
			KEY(o, ",\"offset\":");
			put_hex(o, fr->offset);
		}
		/* what offline symbolization of an unnamed frame needs */
		if (fr && !fr->sym && fr->build_id_len && k == 0) {
			KEY(o, ",\"build_id\":");
			k = put_cstr(w, o, fr_format_hex(fr->build_id, fr->build_id_len, hex, sizeof(hex)));
		}
		/* a C++ name: sym is it demangled, this as the binary has it */
		if (fr && fr->mangled && k == 0) {
			KEY(o, ",\"mangled\":");
			k = put_str(w, o, fr->mangled, strnlen(fr->mangled, fr->mangled_len));
		}
		/* only on frames that are inlined: the others are calls */
		if (fr && fr->inlined)
			KEY(o, ",\"inlined\":true");
		/* a Python frame: its source file and line (null: not known) */
		if (fr && fr->python && k == 0) {
			KEY(o, ",\"kind\":\"python\",\"file\":");
			if (fr->file)
				k = put_str(w, o, fr->file, strnlen(fr->file, fr->file_len));
			else
				KEY(o, "null");
			KEY(o, ",\"line\":");
			if (fr->line)
				fr_out_u64(o, fr->line);
			else
				KEY(o, "null");
		}
		fr_out_putc(o, '}');
	}
	fr_out_putc(o, ']');
	return k;
}

static int put_stack(struct fr_json_writer *w, struct fr_out *o, const struct fr_record *r,
		     const struct fr_record_context *e)
{
	return put_frames(w, o, r, e->frames, e->nframes);
}

/* An offcpu record's waker: who ended the wait, when, from where. */
static int put_waker(struct fr_json_writer *w, struct fr_out *o, const struct fr_record *r,
		     const struct fr_record_context *e)
{
	const struct fr_record_waker *k = &r->sched.waker;
	struct fr_record v;
	char label[128];
	int n;

	fr_record_waker_view(r, &v);
	KEY(o, ",\"waker\":{\"kind\":");
	put_cstr(w, o, fr_waker_kind(k, e->waker_frames, e->waker_nframes));
	KEY(o, ",\"label\":");
	n = put_str(w, o, label, fr_waker_label(k, e->waker_frames, e->waker_nframes, label, sizeof(label)));
	KEY(o, ",\"pid\":");
	fr_out_u64(o, k->pid);
	KEY(o, ",\"tid\":");
	fr_out_u64(o, k->tid);
	KEY(o, ",\"comm\":");
	if (n == 0)
		n = put_str(w, o, k->comm, k->comm_len);
	KEY(o, ",\"time\":");
	put_time(w, o, e->wall_ns + k->delay_ns);
	KEY(o, ",\"delay_ns\":");
	fr_out_u64(o, k->delay_ns);
	if (k->no_stack)
		KEY(o, ",\"stack_status\":\"over_budget\"");
	KEY(o, ",\"stack\":");
	if (n == 0)
		n = put_frames(w, o, &v, e->waker_frames, e->waker_nframes);
	KEY(o, ",\"kernel_frames\":");
	fr_out_u64(o, k->stack.kernel_frames);
	fr_out_putc(o, '}');
	return n;
}

/* Metrics: nested objects per subsystem, at the top level of the record,
 * each value as json-c prints what it parsed (numbers as written).  The
 * record's own fields come first and win. */
static int put_metrics(struct fr_json_writer *w, struct fr_out *o, const struct fr_record *r,
		       const struct fr_record_context *e)
{
	static const char *const taken[] = {
		"type", "time", "boot_id", "cpu", "pid", "tid", "comm", "cgroup", "cgroup_id", "exe",
	};
	char *copy = strndup(r->metrics.json, r->metrics.json_len);
	struct json_object *m = copy ? json_tokener_parse(copy) : NULL;
	int k = copy ? 0 : -ENOMEM;

	free(copy);
	if (m && json_object_is_type(m, json_type_object)) {
		json_object_object_foreach(m, key, val) {
			const char *s;
			size_t len;
			bool skip = e->kernel_thread && strcmp(key, "kernel_thread") == 0;

			for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]) && !skip; i++)
				skip = strcmp(key, taken[i]) == 0;
			if (skip)
				continue;
			fr_out_putc(o, ',');
			k = put_bytes(w, o, key, strlen(key));
			if (k < 0)
				break;
			fr_out_putc(o, ':');
			s = json_object_to_json_string_length(val, JSON_FLAGS, &len);
			if (!s) {
				k = -ENOMEM;
				break;
			}
			fr_out_write(o, s, len);
		}
	}
	json_object_put(m);
	return k;
}

int fr_record_json_write(struct fr_json_writer *w, struct fr_out *o, const struct fr_record *r,
			 const struct fr_record_context *e)
{
	char buf[INET6_ADDRSTRLEN + 64];
	int k = 0;

	KEY(o, "{\"type\":");
	put_cstr(w, o, fr_record_type_name(r->type));
	KEY(o, ",\"time\":");
	put_time(w, o, e->wall_ns);
	KEY(o, ",\"boot_id\":");
	put_boot_id(w, o, e->boot_id);
	KEY(o, ",\"cpu\":");
	fr_out_i64(o, (int)r->cpu);
	KEY(o, ",\"pid\":");
	fr_out_u64(o, r->pid);
	KEY(o, ",\"tid\":");
	fr_out_u64(o, r->tid);
	KEY(o, ",\"comm\":");
	k = put_str(w, o, r->comm, r->comm_len);
	KEY(o, ",\"cgroup\":");
	if (!e->cgroup)
		KEY(o, "null");
	else if (k == 0)
		k = put_str(w, o, e->cgroup, e->cgroup_len);
	KEY(o, ",\"cgroup_id\":");
	fr_out_u64(o, r->cgroup_id);
	KEY(o, ",\"exe\":");
	if (!e->exe)
		KEY(o, "null");
	else if (k == 0)
		k = put_str(w, o, e->exe, e->exe_len);
	/* known from the process, or said by an offcpu record itself */
	if (e->kernel_thread || (r->type == FR_REC_OFFCPU && r->sched.kthread))
		KEY(o, ",\"kernel_thread\":true");
	if (k < 0)
		return k;

	/* (every type has its case: a new one is a compile error until it has one) */
	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC:
		KEY(o, ",\"filename\":");
		k = put_str(w, o, r->exec.filename, r->exec.filename_len);
		KEY(o, ",\"argv\":");
		if (k == 0)
			k = put_argv(w, o, r->exec.args, r->exec.args_len);
		KEY(o, ",\"ppid\":");
		fr_out_u64(o, r->exec.ppid);
		if (r->flags & (FR_REC_F_ARGS_CUT | FR_REC_F_FILENAME_CUT))
			KEY(o, ",\"truncated\":true");
		break;
	case FR_REC_EXIT: {
		int sig = r->exit.status & 0x7f;
		KEY(o, ",\"exit_code\":");
		if (sig)
			KEY(o, "null");
		else
			fr_out_i64(o, (int)(r->exit.status >> 8) & 0xff);
		KEY(o, ",\"signal\":");
		put_cstr(w, o, fr_signal_name(sig, buf, sizeof(buf)));
		KEY(o, ",\"signal_number\":");
		if (sig)
			fr_out_i64(o, sig);
		else
			KEY(o, "null");
		if (r->exit.status & 0x80)
			KEY(o, ",\"core_dumped\":true");
		else
			KEY(o, ",\"core_dumped\":false");
		break;
	}
	case FR_REC_FORK:
		KEY(o, ",\"child_pid\":");
		fr_out_u64(o, r->fork.child_pid);
		break;
	case FR_REC_SYSCALL:
		KEY(o, ",\"syscall\":");
		put_cstr(w, o, fr_syscall_name(r->syscall.nr));
		KEY(o, ",\"nr\":");
		fr_out_u64(o, r->syscall.nr);
		KEY(o, ",\"duration_ns\":");
		fr_out_u64(o, r->syscall.duration_ns);
		KEY(o, ",\"ret\":");
		fr_out_i64(o, r->syscall.ret);
		break;
	case FR_REC_OFFCPU:
		KEY(o, ",\"duration_ns\":");
		fr_out_u64(o, r->sched.duration_ns);
		/* the call it was blocked in: both null when none */
		KEY(o, ",\"syscall\":");
		put_cstr(w, o, r->sched.syscall_nr >= 0 ? fr_syscall_name((unsigned)r->sched.syscall_nr) : NULL);
		KEY(o, ",\"nr\":");
		if (r->sched.syscall_nr >= 0)
			fr_out_u64(o, (uint64_t)r->sched.syscall_nr);
		else
			KEY(o, "null");
		/* the task state it blocked in, as ps prints it: present when
		 * recorded (not in records from before issue 45) */
		if (fr_task_state_name(r->sched.state)) {
			KEY(o, ",\"state\":");
			put_cstr(w, o, fr_task_state_name(r->sched.state));
		}
		/* where it slept and where it entered the kernel: frames as a
		 * sample's ([] when none was captured) */
		KEY(o, ",\"stack\":");
		k = put_stack(w, o, r, e);
		KEY(o, ",\"kernel_frames\":");
		fr_out_u64(o, r->stack.kernel_frames);
		/* who ended the wait, where recorded */
		if (k == 0 && r->sched.waker.context)
			k = put_waker(w, o, r, e);
		break;
	case FR_REC_RUNQ:
		KEY(o, ",\"duration_ns\":");
		fr_out_u64(o, r->sched.duration_ns);
		break;
	case FR_REC_SAMPLE:
		KEY(o, ",\"stack\":");
		k = put_stack(w, o, r, e);
		KEY(o, ",\"kernel_frames\":");
		fr_out_u64(o, r->stack.kernel_frames);
		break;
	case FR_REC_SWITCH:
		KEY(o, ",\"prev_state\":");
		fr_out_u64(o, r->sw.prev_state);
		KEY(o, ",\"next_pid\":");
		fr_out_u64(o, r->sw.next_pid);
		KEY(o, ",\"next_tid\":");
		fr_out_u64(o, r->sw.next_tid);
		KEY(o, ",\"next_comm\":");
		k = put_str(w, o, r->sw.next_comm, r->sw.next_comm_len);
		break;
	case FR_REC_BLOCK:
		KEY(o, ",\"dev\":");
		put_cstr(w, o, fr_format_dev(r->block.dev, buf, sizeof(buf)));
		KEY(o, ",\"op\":");
		put_cstr(w, o, fr_block_op_name(r->block.op));
		/* flushes have no sector: the kernel says -1 */
		KEY(o, ",\"sector\":");
		if (r->block.sector == UINT64_MAX)
			KEY(o, "null");
		else
			fr_out_u64(o, r->block.sector);
		KEY(o, ",\"bytes\":");
		fr_out_u64(o, r->block.bytes);
		KEY(o, ",\"duration_ns\":");
		fr_out_u64(o, r->block.duration_ns);
		KEY(o, ",\"error\":");
		fr_out_i64(o, r->block.error);
		break;
	case FR_REC_OOM:
		KEY(o, ",\"memcg\":");
		if (r->oom.memcg_len)
			k = put_str(w, o, r->oom.memcg, r->oom.memcg_len);
		else
			KEY(o, "null");
		KEY(o, ",\"memcg_id\":");
		fr_out_u64(o, r->oom.memcg_id);
		KEY(o, ",\"rss_kb\":");
		fr_out_u64(o, r->oom.rss_kb);
		break;
	case FR_REC_SIGNAL:
		KEY(o, ",\"signal\":");
		put_cstr(w, o, fr_signal_name((int)r->signal.sig, buf, sizeof(buf)));
		KEY(o, ",\"signal_number\":");
		fr_out_i64(o, (int)r->signal.sig);
		KEY(o, ",\"sender_pid\":");
		fr_out_u64(o, r->signal.sender_pid);
		KEY(o, ",\"sender_comm\":");
		k = put_str(w, o, r->signal.sender_comm, r->signal.sender_comm_len);
		KEY(o, ",\"sender_tid\":");
		fr_out_u64(o, r->signal.sender_tid);
		KEY(o, ",\"code\":");
		fr_out_i64(o, r->signal.code);
		KEY(o, ",\"code_name\":");
		put_cstr(w, o, fr_signal_code_name((int)r->signal.sig, r->signal.code));
		/* the fault address (si_addr), for a fault only */
		KEY(o, ",\"addr\":");
		if (r->flags & FR_REC_F_FAULT_ADDR)
			put_hex(o, r->signal.addr);
		else
			KEY(o, "null");
		/* the sender's stacks (the faulting thread's for a fault), as
		 * a sample's; stack_status says why there are none */
		KEY(o, ",\"stack_status\":");
		put_cstr(w, o, fr_signal_stack_name(r->signal.stack));
		if (k == 0) {
			KEY(o, ",\"stack\":");
			k = put_stack(w, o, r, e);
		}
		KEY(o, ",\"kernel_frames\":");
		fr_out_u64(o, r->stack.kernel_frames);
		break;
	case FR_REC_TCP:
		KEY(o, ",\"event\":");
		put_cstr(w, o, fr_tcp_event_name(r->tcp.event));
		KEY(o, ",\"saddr\":");
		put_cstr(w, o, fr_format_tcp_addr(r, r->tcp.saddr, buf, sizeof(buf)));
		KEY(o, ",\"sport\":");
		fr_out_u64(o, r->tcp.sport);
		KEY(o, ",\"daddr\":");
		put_cstr(w, o, fr_format_tcp_addr(r, r->tcp.daddr, buf, sizeof(buf)));
		KEY(o, ",\"dport\":");
		fr_out_u64(o, r->tcp.dport);
		KEY(o, ",\"state\":");
		put_cstr(w, o, fr_tcp_state_name(r->tcp.state));
		break;
	case FR_REC_MARK:
		KEY(o, ",\"text\":");
		k = put_str(w, o, r->mark.text, r->mark.text_len);
		break;
	case FR_REC_METRICS:
		k = put_metrics(w, o, r, e);
		break;
	case FR_REC_TRIGGER:
		KEY(o, ",\"rule\":");
		k = put_str(w, o, r->trigger.rule, r->trigger.rule_len);
		KEY(o, ",\"incident\":");
		if (k == 0)
			k = put_str(w, o, r->trigger.incident, r->trigger.incident_len);
		/* the record it fired on, where the chunk says */
		if (r->trigger.cause_type) {
			KEY(o, ",\"fired_on\":{\"type\":");
			put_cstr(w, o, fr_record_type_name(r->trigger.cause_type));
			KEY(o, ",\"time\":");
			put_time(w, o, e->wall_ns - (uint64_t)r->trigger.cause_ago_ns);
			fr_out_putc(o, '}');
		}
		break;
	case FR_REC_GAP:
		KEY(o, ",\"lost\":");
		fr_out_u64(o, r->gap.lost);
		break;
	FR_REC_META_CASES /* metadata: names what the others print */
		break;
	}
	KEY(o, "}\n");
	return k;
}

struct json_object *fr_record_to_json(const struct fr_record *r, const struct fr_record_context *ctx)
{
	struct fr_json_writer *w = NULL;
	struct json_object *obj = NULL;
	struct fr_out o;

	if (fr_out_init(&o, NULL) < 0)
		return NULL;
	if (fr_json_writer_new(&w) == 0 && fr_record_json_write(w, &o, r, ctx) == 0) {
		fr_out_putc(&o, '\0');
		if (!o.err)
			obj = json_tokener_parse(o.p);
	}
	fr_json_writer_free(w);
	free(o.p);
	return obj;
}
