/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The annotation socket: a SOCK_DGRAM unix socket applications write a line
 * of text to ("deploy 1.2.3 started"); each datagram becomes a mark record
 * attributed to the sender's pid (SCM_CREDENTIALS, checked by the kernel).
 * Like freeze and mark on the control socket it changes what is recorded,
 * so only root and control.group may: the socket file is open (0666) and
 * each datagram's credentials decide, its supplementary groups read from
 * /proc/PID/status (datagrams carry no SO_PEERGROUPS).
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
	uint64_t denied;   /* from a sender not root or in control.group: dropped */
};

/* Datagrams are accepted from the senders @ctl deems privileged (root,
 * control.group); the others are dropped and counted. */
int fr_annotate_new(sd_event *e, const char *path, struct fr_control *ctl, fr_annotate_cb cb, void *userdata,
		    struct fr_annotate **ret);
struct fr_annotate *fr_annotate_free(struct fr_annotate *a);
void fr_annotate_get_stats(const struct fr_annotate *a, struct fr_annotate_stats *ret);

#endif
