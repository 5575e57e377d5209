/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file a process maps, opened for the symbolizer and the unwinder,
 * which read binaries as they name and unwind frames, maybe after the
 * process is gone.
 */
#ifndef FR_MAPPED_FILE_H
#define FR_MAPPED_FILE_H

#include <stdint.h>
#include <sys/types.h>

/* Opens the file mapped at [@start, @end) in @pid: through
 * /proc/PID/map_files (the file itself, even deleted or in another mount
 * namespace); else, @pid gone (or a zombie, whose map_files and root are
 * unreadable), by @path as @pid saw it or as we see it, if that is still
 * the mapped file (@dev, @ino, from /proc/PID/maps).  Returns a descriptor
 * or -ENOENT. */
int fr_open_mapped_file(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino);

#endif
