/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Store layout names and helpers shared by the writer and the reader. */
#ifndef FR_STORE_H
#define FR_STORE_H

#include <stddef.h>
#include <stdint.h>

#define FR_STORE_SEGMENT_DIR "segments"
#define FR_STORE_SEGMENTS_MAX 1024

void fr_store_segment_name(uint32_t slot, char *buf, size_t len);
/* Creates @dir (0750, parents 0755 as needed) and its segments/ folder. */
int fr_store_create_dirs(const char *dir);
/* Reads and checks a segment header: 0, -EBADMSG, -EPROTONOSUPPORT. */
int fr_store_segment_header_read(int fd, uint64_t *ret_seqnum, uint64_t *ret_size);

#endif
