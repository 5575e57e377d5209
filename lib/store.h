/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Store layout names and helpers shared by the writer and the reader. */
#ifndef FR_STORE_H
#define FR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FR_STORE_SEGMENT_DIR "segments"
/* the directories beside it (flightrec-store(5), DIRECTORY LAYOUT) */
#define FR_INCIDENT_DIR "incidents"
#define FR_KSYMS_DIR "kallsyms"
#define FR_BOOT_HOST_DIR "hosts"
#define FR_STORE_SEGMENTS_MAX 1024

/* store.size = "auto" (flightrec.conf(5)): FR_STORE_AUTO_SIZE, but at most
 * FR_STORE_AUTO_PERCENT of the file system the store is on. */
#define FR_STORE_AUTO_SIZE (2ULL << 30)
#define FR_STORE_AUTO_PERCENT 10

void fr_store_segment_name(uint32_t slot, char *buf, size_t len);
/* Creates @dir (0750, parents 0755 as needed) and its segments/ folder. */
int fr_store_create_dirs(const char *dir);
/* The bound store.size = "auto" stands for, for the store directory
 * @dir_fd with @nsegments segments whose largest chunk is @max_chunk:
 * FR_STORE_AUTO_SIZE capped at FR_STORE_AUTO_PERCENT of its file system
 * (journald's rule for its own default), and no less than the smallest
 * store those segments allow (4 of the largest chunks a segment).  Sets
 * *@ret_fs to the file system's size.  0 or -errno (fstatvfs). */
int fr_store_auto_size(int dir_fd, uint32_t nsegments, uint64_t max_chunk, uint64_t *ret_size, uint64_t *ret_fs);
/* A root daemon writes into the store: whoever else may write to its
 * directories could aim those writes (a segment placed as a symbolic link
 * to /etc/shadow is truncated) or read them (a segment made 0666
 * beforehand).  Checks @dir and those of segments/, incidents/, kallsyms/
 * and hosts/ that exist: directories (not symbolic links), owned by @uid,
 * not writable by group or others.  0 (also when @dir does not exist
 * yet), or -EPERM with @why set to the path and the reason, or another
 * -errno with @why set. */
int fr_store_check_dirs(const char *dir, uid_t uid, char *why, size_t len);
/* A file of the store just opened (O_NOFOLLOW): a regular file of ours,
 * not writable by others; its mode is made 0640.  0 or -EPERM with @why
 * set (naming it @name). */
int fr_store_check_file(int fd, const char *name, char *why, size_t len);
/* What a segment's header says of the segment before it (seqnum - 1),
 * written when the writer moved on from that one: a time window whose
 * keyframe is later than all of it needs none of it.  A wall time is
 * CLOCK_REALTIME ns as readers reckon a chunk's (its times plus its
 * realtime_offset). */
struct fr_segment_prev {
	bool known;
	uint64_t last_wall;     /* no record of it is later */
	uint64_t keyframe_wall; /* it holds a keyframe chunk starting no
				   earlier than this; 0: none known */
};

/* Reads and checks a segment header: 0, -EBADMSG, -EPROTONOSUPPORT.
 * @ret_prev may be NULL. */
int fr_store_segment_header_read(int fd, uint64_t *ret_seqnum, struct fr_segment_prev *ret_prev);
/* The same, and when the segment was (re)started (CLOCK_REALTIME ns). */
int fr_store_segment_header_read_all(int fd, uint64_t *ret_seqnum, struct fr_segment_prev *ret_prev,
				     uint64_t *ret_created_wall);
/* Writes a segment header at offset 0; @prev NULL: none known. */
int fr_store_segment_header_write(int fd, uint64_t seqnum, uint64_t segment_size,
				  const struct fr_segment_prev *prev);

#endif
