/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The machine that recorded a source: host, kernel and boot of each of its
 * boots, from the store's files (lib/boot-host.h) or from an incident's or
 * bundle's metadata, never from the machine reading it: a store copied to
 * a laptop, or a bundle cut there, still names the server.
 */
#ifndef FRCTL_SOURCE_HOST_H
#define FRCTL_SOURCE_HOST_H

#include <json-c/json.h>
#include <stdint.h>

struct fr_window;

/* The hosts of the boots of a store (@store_fd) or of a file (@meta, its
 * metadata, with @store_fd -EBADF), as far as known: an object from boot
 * id to {"boot_id", "host", "kernel", ...}.  NULL: no memory. */
struct json_object *frctl_source_hosts_load(int store_fd, struct json_object *meta);

/* The host object of @boot_id in @hosts (as loaded above), or NULL when
 * unknown. */
struct json_object *frctl_hosts_find(struct json_object *hosts, const uint8_t boot_id[16]);

/* Host name and kernel release of the newest boot of @w (NULL each when
 * unknown). */
void frctl_hosts_window(struct json_object *hosts, const struct fr_window *w, const char **ret_host,
			const char **ret_kernel);

#endif
