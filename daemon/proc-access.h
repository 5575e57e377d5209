/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the symbolizer and the unwinder open of other processes: their
 * maps, the files they map, their JIT maps, and the separate debug files
 * of their binaries.  Every file is opened here and only here, checked
 * (mapped-file.h, and the JIT map rules below), and handed over as a
 * descriptor; what is in it is parsed by the caller.
 *
 * Two implementations with the same names, one linked into each program:
 * proc-access.c opens the files itself (flightrecd, which holds the
 * capabilities, and the unit tests); proc-access-broker.c, in the
 * sandboxed flightrec-parse, asks flightrecd for each over its socket
 * (parser.h), since it may open nothing itself.
 */
#ifndef FR_PROC_ACCESS_H
#define FR_PROC_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* /proc/@pid/maps, opened for reading, with the inode of the image the
 * process runs (/proc/PID/exe, looked at first: a process that exits
 * between the two has no maps and no image) in *exe_ino.  -ESRCH when
 * the process is gone. */
int fr_access_maps(uint32_t pid, uint64_t *exe_ino);
/* Where fr_access_maps() finds the maps of a process that is gone (its
 * exe and maps unreadable: exited, or a zombie): @fn returns a descriptor
 * to read them from, or -ESRCH (flightrecd: mmap-tracker.h). */
typedef int (*fr_access_gone_maps_fn)(void *userdata, uint32_t pid, uint64_t *exe_ino);
void fr_access_set_gone_maps(fr_access_gone_maps_fn fn, void *userdata);
/* Those maps (-ESRCH when none): for a process whose /proc/PID/maps
 * read empty or cut, having exited between its opening and its reading. */
int fr_access_maps_gone(uint32_t pid, uint64_t *exe_ino);

/* After /proc/PID/maps was read from @fd to its end: was all of it read?
 * A read after the process's memory is gone ends the file (a process
 * that exits while its maps are read leaves them cut at a page: libc's
 * lines lost), and the memory never comes back, so if the file still
 * reads now, every read before it was whole.  True of any descriptor
 * with content (the maps fr_access_maps_gone() gives). */
static inline bool fr_maps_fd_whole(int fd)
{
	char c;

	return pread(fd, &c, 1, 0) == 1;
}

/* fr_open_mapped_file() (mapped-file.h). */
int fr_access_mapped(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino);

/* The separate debug file of @build_id under the daemon's debug
 * directory (fr_debug_file_open(), lib/elf-names.h). */
int fr_access_debug(const uint8_t *build_id, size_t len);
#define FR_DEBUG_DIR_DEFAULT "/usr/lib/debug"
/* That directory (flightrecd's debug_dir; NULL or "": the default). */
void fr_access_set_debug_dir(const char *dir);

/* /tmp/perf-@pid.map as the process sees its /tmp (/proc/PID/root/tmp),
 * opened for reading only if it is a regular file (not followed if a
 * symbolic link), owned by the process's real or effective uid, not
 * writable by others, and on the mount of the process's own /tmp (a
 * bind mount over the path, which a user namespace may make of a
 * root-only file, is another mount).  -ENOENT when there is none (or no
 * process), -EPERM when there is one it refuses. */
int fr_access_perf_map(uint32_t pid);

/* The file whose content is being parsed now (from the descriptor one
 * of the above gave): what a crash or an overrun of the parser is blamed
 * on (parser.h).  Nothing in the daemon itself. */
void fr_access_parsing(dev_t dev, uint64_t ino);
/* flightrec-parse only: maps the page it says that in. */
int fr_access_broker_init(void);

#endif
