/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watcher of a rule of condition "pressure": the PSI file of its
 * resource, the system's (/proc/pressure/RESOURCE) or its cgroup's
 * (RESOURCE.pressure below the cgroup2 mount).  Where the kernel takes
 * one, the rule's threshold is a PSI trigger in the kernel ("some STALL
 * WINDOW" written into the file, an EPOLLPRI when it is crossed, at most
 * once a window): no wakeup while there is no pressure.  Where it does
 * not (a window over the kernel's 10 s; a kernel before 6.5 without
 * CAP_SYS_RESOURCE; a read-only cgroup file system, as under the
 * shipped unit), the file's total stall time is read once a second and
 * the share over the window computed here, firing at most once a
 * window too.  A file that cannot be opened or read (a cgroup not there
 * yet, or removed as its service stopped) is tried again every 10 s;
 * status says which way each rule is watched and why.
 */
#ifndef FR_PRESSURE_H
#define FR_PRESSURE_H

#include <json-c/json.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "../lib/rules.h"

struct fr_pressure;

/* The rule's stall crossed its threshold: @share_ppm of the window was
 * stalled (polled), or (kernel trigger, which says no more) the
 * threshold itself; @line is the file's line of the rule's kind as read
 * then ("some avg10=... total=..."), or "". */
typedef void (*fr_pressure_cb)(struct fr_pressure *w, uint32_t share_ppm, const char *line, void *userdata);

/* Watches @r's pressure (copied what it needs); @cgroup_fd is the
 * cgroup2 mount (-1: none; a rule on a cgroup then waits). */
int fr_pressure_new(sd_event *e, const struct fr_rule *r, int cgroup_fd, fr_pressure_cb cb, void *userdata,
		    struct fr_pressure **ret);
struct fr_pressure *fr_pressure_free(struct fr_pressure *w);
/* {file, mode: "kernel"|"polled"|"waiting", error, fired} */
struct json_object *fr_pressure_status(const struct fr_pressure *w);

#endif
