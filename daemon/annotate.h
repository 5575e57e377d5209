/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The annotation socket: a SOCK_DGRAM unix socket applications write a line
 * of text to ("deploy 1.2.3 started"); each datagram becomes a mark record
 * attributed to the sender's pid (SCM_CREDENTIALS, checked by the kernel).
 */
#ifndef FR_ANNOTATE_H
#define FR_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* Longest annotation kept; longer datagrams are cut (and say so). */
#define FR_ANNOTATION_MAX 1024

struct fr_annotate;

typedef void (*fr_annotate_cb)(uint32_t pid, const char *text, size_t len, void *userdata);

int fr_annotate_new(sd_event *e, const char *path, fr_annotate_cb cb, void *userdata,
		    struct fr_annotate **ret);
struct fr_annotate *fr_annotate_free(struct fr_annotate *a);

#endif
