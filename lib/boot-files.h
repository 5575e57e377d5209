/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files of one boot each beside a store's segments (STORE/SUBDIR/BOOTID.*):
 * kernel symbol snapshots (ksyms.h), the host a boot recorded on
 * (boot-host.h).  They live as long as the store may hold chunks of their
 * boot, and count against the store's bound.
 */
#ifndef FR_BOOT_FILES_H
#define FR_BOOT_FILES_H

#include <stdint.h>

/* Files of one boot each in directory @subdir of store @dir_fd (kernel
 * symbol snapshots, the host a boot recorded on), named for their boot
 * and as new as the boot's first save: removes those of boots the store
 * can no longer hold chunks of (older than a file saved no later than
 * @oldest_wall_ns, the oldest segment's creation; 0: unknown) and those
 * beyond the @keep newest.  The newest always stays. */
void fr_boot_files_prune(int dir_fd, const char *subdir, unsigned keep, uint64_t oldest_wall_ns);
/* Bytes the files of @subdir take on disk (as du counts). */
uint64_t fr_boot_files_disk_usage(int dir_fd, const char *subdir);

#endif
