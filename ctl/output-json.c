/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --format json: one JSON object per record; field names are an API
 * (DESIGN.md, frctl(1)). */
#include <json-c/json.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-id128.h>

#include "../lib/parse.h"
#include "../lib/syscall-names.h"
#include "frctl.h"

const char *fr_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else if (sig > 0)
		snprintf(buf, len, "SIG%d", sig);
	else
		return NULL;
	return buf;
}

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

struct json_object *fr_record_to_json(const struct fr_window *w, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	struct json_object *o = json_object_new_object();
	char buf[64];
	sd_id128_t boot;

	json_object_object_add(o, "type", json_object_new_string(fr_record_type_name(r->type)));
	json_object_object_add(o, "time", json_object_new_string(fr_format_rfc3339(e->wall_ns, buf, sizeof(buf))));
	memcpy(boot.bytes, w->chunks[e->chunk].boot_id, 16);
	json_object_object_add(o, "boot_id", json_object_new_string(sd_id128_to_string(boot, buf)));
	json_object_object_add(o, "cpu", json_object_new_int((int)r->cpu));
	json_object_object_add(o, "pid", json_object_new_int64(r->pid));
	json_object_object_add(o, "tid", json_object_new_int64(r->tid));
	json_object_object_add(o, "comm", str_n(r->comm, r->comm_len));
	json_object_object_add(o, "cgroup", e->cgroup ? str_n(e->cgroup, e->cgroup_len) : NULL);
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(r->cgroup_id));
	json_object_object_add(o, "exe", e->exe ? str_n(e->exe, e->exe_len) : NULL);

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
	case FR_REC_GAP:
		json_object_object_add(o, "lost", json_object_new_uint64(r->gap.lost));
		break;
	}
	return o;
}
