/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's function symbols, in /proc/kallsyms format: parsed into a
 * sorted table for address lookups, and kept in the store as one
 * compressed snapshot per boot (kallsyms/<boot id>.zst), so kernel frames
 * of that boot resolve after a reboot and on another machine.
 */
#ifndef FR_KSYMS_H
#define FR_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Snapshots kept at most: the newest boots'.  Chunks leave the kernel
 * frames the snapshot names undescribed (daemon/symbolizer.c), so a
 * snapshot stays while the store may hold chunks of its boot; past this
 * many boots in the store (a reboot loop), the oldest boots' kernel
 * frames go unnamed rather than snapshots filling the store. */
#define FR_KSYMS_KEEP 16

struct fr_ksyms;

struct fr_ksym {
	uint64_t addr, size; /* first: a struct fr_range */
	const char *name;
	const char *module; /* "" for the kernel proper */
};

/* Parses kallsyms text (takes ownership of @text, malloc'ed with room for
 * @len + 1 bytes: the parser writes a NUL at text[len]),
 * keeping function symbols (types t, T, w, W).  -ENODATA when every address
 * is zero (kptr_restrict hides them). */
int fr_ksyms_parse(char *text, size_t len, struct fr_ksyms **ret);
/* Reads and parses /proc/kallsyms; the names are kept in a pool of their
 * own, not in the text (which is freed). */
int fr_ksyms_load_proc(struct fr_ksyms **ret);
struct fr_ksyms *fr_ksyms_free(struct fr_ksyms *k);
size_t fr_ksyms_count(const struct fr_ksyms *k);

/* The function holding @addr, or NULL. */
const struct fr_ksym *fr_ksyms_lookup(const struct fr_ksyms *k, uint64_t addr);

/* Writes @k as the snapshot of @boot_id (hex) into store @dir_fd unless one
 * exists; atomically (temporary file, fsync, rename).  Removes snapshots
 * beyond the FR_KSYMS_KEEP newest.  Returns 1 if written, 0 if present. */
int fr_ksyms_save(const struct fr_ksyms *k, int dir_fd, const char *boot_id);
/* Removes the snapshots of boots the store can no longer hold chunks of:
 * those older than one saved no later than @oldest_wall_ns (CLOCK_REALTIME
 * ns; the oldest segment's creation; 0: unknown), and those beyond the
 * FR_KSYMS_KEEP newest.  The newest always stays. */
void fr_ksyms_prune(int dir_fd, uint64_t oldest_wall_ns);
/* Whether @a and @b hold the same functions at the same addresses (what
 * a lookup names; sizes aside), BPF programs' aside: those move whenever
 * a program is loaded (the daemon's own, at each start), so chunks
 * describe their frames always (daemon/symbolizer.c) and a snapshot is
 * never trusted for them. */
bool fr_ksyms_same_functions(const struct fr_ksyms *a, const struct fr_ksyms *b);
/* Whether @k is a BPF program's (module "bpf"). */
bool fr_ksym_is_bpf(const struct fr_ksym *k);
/* Loads the snapshot of @boot_id from store @dir_fd; -ENOENT if none. */
int fr_ksyms_load_snapshot(int dir_fd, const char *boot_id, struct fr_ksyms **ret);
/* Bytes the snapshots of store @dir_fd take on disk (as du counts). */
uint64_t fr_ksyms_disk_usage(int dir_fd);

#endif
