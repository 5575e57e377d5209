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

/* Opens the file mapped at [@start, @end) in @pid, through
 * /proc/PID/map_files only (the file itself, even deleted or in another
 * mount namespace), O_NONBLOCK, if it is still the file /proc/PID/maps
 * named (@dev, @ino) and a regular file.  Never by the path the maps
 * gave, in any namespace: a process can put anything there after we read
 * its maps (a FIFO whose open would stall the daemon's loop, a file it
 * could not map itself).  A zombie's map_files is unreadable (a process
 * whose leader exited included): its files are not opened.  Returns a
 * descriptor, -ENOENT (no such mapping: the process gone, the range
 * unmapped or anonymous now) or -ESTALE (refused: another file, or not a
 * regular file, is mapped there now). */
int fr_open_mapped_file(uint32_t pid, uint64_t start, uint64_t end, dev_t dev, uint64_t ino);

#endif
