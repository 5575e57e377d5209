/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --format json: one JSON object per record; field names are an API
 * (DESIGN.md, frctl(1)). */
#include <json-c/json.h>
#include <string.h>
#include <systemd/sd-id128.h>

#include "../lib/parse.h"
#include "../lib/syscall-names.h"
#include "frctl.h"

const char *fr_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (!abbrev)
		return NULL;
	snprintf(buf, len, "SIG%s", abbrev);
	return buf;
}

static struct json_object *str_n(const char *p, size_t n)
{
	return json_object_new_string_len(p, (int)n);
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
