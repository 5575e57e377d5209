/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_OUTPUT_JSON_H
#define FR_CTL_OUTPUT_JSON_H

#include "../lib/window.h"

/* --format json: the record's line (lib/record-json.h), appended to @o; 0
 * or -ENOMEM. */
struct fr_json_writer;
struct fr_out;
int fr_window_entry_json(struct fr_json_writer *jw, struct fr_out *o, struct fr_window *w,
			 const struct fr_window_entry *e);

#endif
