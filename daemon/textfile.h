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

struct fr_textfile;

struct fr_textfile *fr_textfile_new(void);
/* Frees; the file stays (a stopped daemon leaves flightrec_up 0 behind,
 * see fr_textfile_write). NULL is fine. */
struct fr_textfile *fr_textfile_free(struct fr_textfile *t);

/* Writes @status (the daemon's status object) to @path as the Prometheus
 * text format; @up is 0 for the last file written at shutdown.  A write
 * to another path than the last removes the last one, so a reload that
 * moves the file leaves no stale copy to be scraped.  Failures are logged
 * once per kind, and again when writing works again.  @path NULL: off
 * (the last file is removed). */
int fr_textfile_write(struct fr_textfile *t, const char *path, struct json_object *status, bool up);

/* For status: the file (@path, the configured one), files written, failed
 * writes and the last error. */
struct json_object *fr_textfile_status(const struct fr_textfile *t, const char *path);

#endif
