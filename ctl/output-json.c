/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --format json: one line per record (lib/record-json.c), with what the
 * window knows beside the record: its boot, cgroup, executable, stack. */
#include "../lib/record-json.h"
#include "output-json.h"

/* The record context of a window entry; @frames and @wframes (an
 * offcpu record's waker's): room for FR_FRAMES_EXPANDED_MAX (inlined
 * frames included). */
static void entry_context(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *frames,
			  struct fr_frame *wframes, struct fr_record_context *ret)
{
	*ret = (struct fr_record_context){
		.wall_ns = e->wall_ns, .boot_id = w->chunks[e->chunk].boot_id,
		.cgroup = e->cgroup, .cgroup_len = e->cgroup_len,
		.exe = e->exe, .exe_len = e->exe_len, .kernel_thread = e->kernel_thread,
	};
	if (fr_record_type_has_stack(e->r.type)) {
		ret->nframes = fr_window_frames(w, e, frames, FR_FRAMES_EXPANDED_MAX);
		ret->frames = ret->nframes >= 0 ? frames : NULL;
	}
	if (e->r.type == FR_REC_OFFCPU && e->r.sched.waker.context) {
		ret->waker_nframes = fr_window_waker_frames(w, e, wframes, FR_FRAMES_EXPANDED_MAX);
		ret->waker_frames = ret->waker_nframes >= 0 ? wframes : NULL;
	}
}

int fr_window_entry_json(struct fr_json_writer *jw, struct fr_out *o, struct fr_window *w,
			 const struct fr_window_entry *e)
{
	struct fr_frame frames[FR_FRAMES_EXPANDED_MAX], wframes[FR_FRAMES_EXPANDED_MAX];
	struct fr_record_context ctx;

	entry_context(w, e, frames, wframes, &ctx);
	return fr_record_json_write(jw, o, &e->r, &ctx);
}
