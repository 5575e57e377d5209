/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host a boot recorded on: STORE/hosts/BOOTID.json, written by the
 * daemon at start, so that whoever reads the store later (after a reboot,
 * on a laptop the store was copied to, in a bundle cut out of it) names
 * the machine, kernel and boot that recorded each window, not the one
 * reading it.
 */
#ifndef FR_BOOT_HOST_H
#define FR_BOOT_HOST_H

#include <json-c/json.h>
#include <stdint.h>

#include "store.h"

/* as many as kernel symbol snapshots are kept (FR_KSYMS_KEEP) */
#define FR_BOOT_HOST_KEEP 16
/* a file larger than this is not ours */
#define FR_BOOT_HOST_MAX 4096

struct fr_boot_host {
	char host[65];       /* uname nodename (HOST_NAME_MAX + 1) */
	char kernel[65];     /* uname release */
	char version[65];    /* uname version: the build, "#1 SMP PREEMPT_DYNAMIC Debian ..." */
	char machine[65];    /* uname machine */
	char machine_id[33]; /* /etc/machine-id, "" when unknown */
};

/* This machine now. */
int fr_boot_host_current(struct fr_boot_host *h);
/* Writes @h as the host of @boot_id into store @dir_fd unless the file
 * there says the same; atomically (temporary file, fsync, rename), never
 * through a link.  Removes the files beyond the FR_BOOT_HOST_KEEP newest.
 * Returns 1 if written, 0 if it was there. */
int fr_boot_host_save(int dir_fd, const uint8_t boot_id[16], const struct fr_boot_host *h);
/* Reads the host of @boot_id from store @dir_fd: -ENOENT if none (a store
 * written before hosts were kept, or the file was pruned), -EBADMSG if it is not one. */
int fr_boot_host_load(int dir_fd, const uint8_t boot_id[16], struct fr_boot_host *h);
/* Removes the files of boots the store can no longer hold chunks of
 * (fr_boot_files_prune). */
void fr_boot_host_prune(int dir_fd, uint64_t oldest_wall_ns);
uint64_t fr_boot_host_disk_usage(int dir_fd);

/* {"boot_id", "host", "kernel", "kernel_version", "machine",
 * "machine_id"}; with @h NULL, only the boot id (the rest unknown). */
struct json_object *fr_boot_host_json(const uint8_t boot_id[16], const struct fr_boot_host *h);

/* Every boot's host the store @dir_fd keeps (at most 64), as an object
 * from the boot id (32 hex digits) to fr_boot_host_json(); empty when
 * none.  NULL: no memory. */
struct json_object *fr_boot_hosts_load(int dir_fd);

#endif
