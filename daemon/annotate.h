/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The annotation socket: a SOCK_DGRAM unix socket applications write a line
 * of text to ("deploy 1.2.3 started"); each datagram becomes a mark record
 * attributed to the sender's pid (SCM_CREDENTIALS, checked by the kernel).
 * Like freeze and mark on the control socket it changes what is recorded,
 * so only root and control.group may: the socket file is root's, group
 * control.group, mode 0660, and the kernel checks the sender's groups (all
 * of them, at the time it sends).
 */
#ifndef FR_ANNOTATE_H
#define FR_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* Longest annotation kept; longer datagrams are cut (and say so). */
#define FR_ANNOTATION_MAX 1024

struct fr_annotate;
struct fr_control;

typedef void (*fr_annotate_cb)(uint32_t pid, const char *text, size_t len, void *userdata);

struct fr_annotate_stats {
	uint64_t received; /* became mark records */
	uint64_t cut;      /* of those, longer than FR_ANNOTATION_MAX: cut, ending in " [cut]" */
};

/* The socket at @path, writable by root and @ctl's group (0600 when the
 * group does not exist). */
int fr_annotate_new(sd_event *e, const char *path, struct fr_control *ctl, fr_annotate_cb cb, void *userdata,
		    struct fr_annotate **ret);
/* Gives the socket file to @ctl's group again, after a reload changed it. */
int fr_annotate_apply_group(struct fr_annotate *a);
struct fr_annotate *fr_annotate_free(struct fr_annotate *a);
void fr_annotate_get_stats(const struct fr_annotate *a, struct fr_annotate_stats *ret);

#endif
