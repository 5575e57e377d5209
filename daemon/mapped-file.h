/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file a process maps, opened for the symbolizer and the unwinder,
 * which read binaries as they name and unwind frames.  The process may be
 * another user's, and hostile: only what it really maps is opened.
 */
#ifndef FR_MAPPED_FILE_H
#define FR_MAPPED_FILE_H

#include <stdint.h>
#include <sys/types.h>

/* Mappings of files taken from a process's /proc/PID/maps at most, by the
 * symbolizer (its executable ones) and the unwinder (all, for libdwfl,
 * which makes a module of each file): a program maps a few hundred, a JVM
 * a few thousand; a process that maps a file tens of thousands of times
 * (vm.max_map_count is 65530) would cost the daemon a CPU at each read.
 * Anonymous mappings are skipped, not counted.  The mappings beyond are
 * not known (their frames are named by address only), and the reads cut
 * short counted (maps_capped). */
#define FR_MAPS_FILES_MAX 4096

/* Opens the file mapped at [@start, @end) in @pid, if it is the regular
 * file /proc/PID/maps named (@dev, @ino): through /proc/PID/map_files
 * (the file itself, even deleted or in another mount namespace); when
 * that is gone (the process exited: a short-lived one, a crash; or its
 * leader did), by @path in the daemon's own namespace.  Either way first
 * as O_PATH and checked, then opened for reading through that descriptor
 * (O_NONBLOCK): a process can put anything at the path after we read its
 * maps (a FIFO whose open would stall the daemon's loop, a device, a
 * file it could not map itself), and only the very file it mapped is
 * ever opened.  Returns a descriptor, -ENOENT (nothing there) or -ESTALE
 * (refused: another file, or not a regular file, is there now). */
int fr_open_mapped_file(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino);

#endif
