/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's health for Prometheus, as a textfile for node_exporter's
 * textfile collector (prometheus.textfile): the figures of "frctl status
 * --json" under Prometheus names, written every prometheus.interval and
 * replaced by rename, so a scrape never reads half a file.  No socket.
 */
#ifndef FR_TEXTFILE_H
#define FR_TEXTFILE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct fr_textfile;

/* Its writes' threads wake @event's loop when they end. */
int fr_textfile_new(sd_event *event, struct fr_textfile **ret);
/* Waits for the write under way, and frees; the file stays (a stopped
 * daemon leaves flightrec_up 0 behind, see fr_textfile_write). NULL is
 * fine. */
struct fr_textfile *fr_textfile_free(struct fr_textfile *t);

/* Writes @status (the daemon's status object, a reference taken) to @path
 * as the Prometheus text format, on a thread of its own (textfile.c);
 * @up is 0 for the last file written at shutdown (fr_textfile_free()
 * waits for it).
 * A write to another path than the last removes the last one, so a
 * reload that moves the file leaves no stale copy to be scraped.
 * Failures are logged once per kind, when the next write takes the
 * outcome, and again when writing works again.  -EBUSY: the last write
 * has not ended, this one is skipped (counted).  @path NULL: off (the
 * last file is removed). */
int fr_textfile_write(struct fr_textfile *t, const char *path, struct json_object *status, bool up);

/* For status: the file (@path, the configured one), files written, failed
 * writes, writes skipped behind a slow one, and the last error. */
struct json_object *fr_textfile_status(const struct fr_textfile *t, const char *path);

#endif
