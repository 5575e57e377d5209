/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A record as JSON (frctl dump --format json, incident metadata); field
 * names are an API (DESIGN.md, frctl(1)). */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "record-fields.h"
#include "record-json.h"
#include "symtab.h"
#include "syscall-names.h"

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

/* Recorded strings are bytes (argv, file names, comm); JSON is UTF-8.
 * Invalid bytes become U+FFFD so every line parses in every JSON reader. */
static struct json_object *str_n(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	struct json_object *o;
	size_t i = 0, k;
	char *fixed, *q;

	while (i < n && (k = utf8_seq(u + i, n - i)) > 0)
		i += k;
	if (i == n)
		return json_object_new_string_len(p, (int)n);
	fixed = malloc(n * 3 + 1);
	if (!fixed)
		return NULL;
	for (i = 0, q = fixed; i < n;) {
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
	o = json_object_new_string_len(fixed, (int)(q - fixed));
	free(fixed);
	return o;
}

/* argv block: NUL-separated strings */
static struct json_object *argv_array(const char *p, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i = 0;

	while (i < n) {
		size_t l = strnlen(p + i, n - i);
		json_object_array_add(a, str_n(p + i, l));
		i += l + 1;
	}
	return a;
}

struct json_object *fr_record_to_json(const struct fr_record *r, const struct fr_record_context *e)
{
	struct json_object *o = json_object_new_object();
	char buf[INET6_ADDRSTRLEN + 64];

	json_object_object_add(o, "type", json_object_new_string(fr_record_type_name(r->type)));
	json_object_object_add(o, "time", json_object_new_string(fr_format_rfc3339(e->wall_ns, buf, sizeof(buf))));
	json_object_object_add(o, "boot_id", json_object_new_string(fr_format_boot_id(e->boot_id, buf, sizeof(buf))));
	json_object_object_add(o, "cpu", json_object_new_int((int)r->cpu));
	json_object_object_add(o, "pid", json_object_new_int64(r->pid));
	json_object_object_add(o, "tid", json_object_new_int64(r->tid));
	json_object_object_add(o, "comm", str_n(r->comm, r->comm_len));
	json_object_object_add(o, "cgroup", e->cgroup ? str_n(e->cgroup, e->cgroup_len) : NULL);
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(r->cgroup_id));
	json_object_object_add(o, "exe", e->exe ? str_n(e->exe, e->exe_len) : NULL);
	if (e->kernel_thread)
		json_object_object_add(o, "kernel_thread", json_object_new_boolean(1));

	switch (r->type) {
	case FR_REC_EXEC:
		json_object_object_add(o, "filename", str_n(r->exec.filename, r->exec.filename_len));
		json_object_object_add(o, "argv", argv_array(r->exec.args, r->exec.args_len));
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
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
		json_object_object_add(o, "duration_ns", json_object_new_uint64(r->sched.duration_ns));
		break;
	case FR_REC_SAMPLE: {
		struct json_object *stack = json_object_new_array();
		uint64_t addrs[FR_SAMPLE_FRAMES_MAX];
		int n = e->frames ? e->nframes : fr_sample_frames(r, addrs, FR_SAMPLE_FRAMES_MAX);
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
				json_object_object_add(f, "sym", str_n(name, strlen(name)));
			} else
				json_object_object_add(f, "sym", NULL);
			mod = fr ? fr_frame_module(fr, name, sizeof(name)) : NULL;
			json_object_object_add(f, "module", mod ? str_n(mod, strlen(mod)) : NULL);
			if (fr && fr->has_offset) {
				snprintf(buf, sizeof(buf), "0x%" PRIx64, fr->offset);
				json_object_object_add(f, "offset", json_object_new_string(buf));
			}
			/* what offline symbolization of an unnamed frame needs */
			if (fr && !fr->sym && fr->build_id_len) {
				json_object_object_add(f, "build_id",
						       json_object_new_string(fr_format_hex(fr->build_id, fr->build_id_len, hex, sizeof(hex))));
			}
			json_object_array_add(stack, f);
		}
		json_object_object_add(o, "stack", stack);
		json_object_object_add(o, "kernel_frames", json_object_new_int(r->sample.kernel_frames));
		break;
	}
	case FR_REC_SWITCH:
		json_object_object_add(o, "prev_state", json_object_new_int64(r->sw.prev_state));
		json_object_object_add(o, "next_pid", json_object_new_int64(r->sw.next_pid));
		json_object_object_add(o, "next_tid", json_object_new_int64(r->sw.next_tid));
		json_object_object_add(o, "next_comm", str_n(r->sw.next_comm, r->sw.next_comm_len));
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
		json_object_object_add(o, "memcg", r->oom.memcg_len ? str_n(r->oom.memcg, r->oom.memcg_len) : NULL);
		json_object_object_add(o, "memcg_id", json_object_new_uint64(r->oom.memcg_id));
		json_object_object_add(o, "rss_kb", json_object_new_uint64(r->oom.rss_kb));
		break;
	case FR_REC_SIGNAL: {
		const char *name = fr_signal_name((int)r->signal.sig, buf, sizeof(buf));
		json_object_object_add(o, "signal", name ? json_object_new_string(name) : NULL);
		json_object_object_add(o, "signal_number", json_object_new_int((int)r->signal.sig));
		json_object_object_add(o, "sender_pid", json_object_new_int64(r->signal.sender_pid));
		json_object_object_add(o, "sender_comm", str_n(r->signal.sender_comm, r->signal.sender_comm_len));
		json_object_object_add(o, "code", json_object_new_int(r->signal.code));
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
		json_object_object_add(o, "text", str_n(r->mark.text, r->mark.text_len));
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
		json_object_object_add(o, "rule", str_n(r->trigger.rule, r->trigger.rule_len));
		json_object_object_add(o, "incident", str_n(r->trigger.incident, r->trigger.incident_len));
		break;
	case FR_REC_GAP:
		json_object_object_add(o, "lost", json_object_new_uint64(r->gap.lost));
		break;
	}
	return o;
}
