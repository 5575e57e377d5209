/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "chunk.h"
#include "incident-header.h"
#include "macro.h"

int fr_incident_check_sealed(int fd, char **ret_meta, uint64_t *ret_length)
{
	_cleanup_free_ char *meta = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	struct fr_incident_header h;
	uint64_t start, length, off;
	uint32_t crc = 0;
	struct stat st;
	int k;

	k = fr_incident_read_header(fd, &meta, &start);
	if (k < 0)
		return k;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || fstat(fd, &st) < 0)
		return -EIO;
	length = le64toh(h.length);
	if (!(le32toh(h.compat_flags) & FR_INCIDENT_COMPAT_SEALED) || length < start ||
	    length > (uint64_t)st.st_size)
		return -EBADMSG;
	buf = malloc(1 << 20);
	if (!buf)
		return -ENOMEM;
	for (off = start; off < length;) {
		size_t want = (size_t)MIN(length - off, (uint64_t)(1 << 20));
		ssize_t n = pread(fd, buf, want, (off_t)off);
		if (n <= 0)
			return n < 0 ? negative_errno() : -EBADMSG;
		crc = (uint32_t)crc32(crc, buf, (uInt)n);
		off += (uint64_t)n;
	}
	if (fr_crc_mismatch(le32toh(h.body_crc), crc))
		return -EBADMSG;
	*ret_meta = TAKE_PTR(meta);
	*ret_length = length;
	return 0;
}

int fr_incident_read_length(int fd, uint64_t *ret_length)
{
	struct fr_incident_header h;
	ssize_t n = pread(fd, &h, sizeof(h), 0);

	if (n < 0)
		return negative_errno();
	if (n != (ssize_t)sizeof(h))
		return -EBADMSG;
	if (!(le32toh(h.compat_flags) & FR_INCIDENT_COMPAT_SEALED))
		return 0;
	*ret_length = le64toh(h.length);
	return 1;
}

int fr_incident_read_header(int fd, char **ret_meta, uint64_t *ret_chunks_offset)
{
	struct fr_incident_header h;
	_cleanup_free_ char *meta = NULL;
	uint32_t len;
	ssize_t n = pread(fd, &h, sizeof(h), 0);

	if (n < 0)
		return negative_errno();
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, FR_INCIDENT_MAGIC, 8) != 0 ||
	    fr_crc_mismatch(le32toh(h.header_crc), fr_crc32(&h, offsetof(struct fr_incident_header, header_crc))))
		return -EBADMSG;
	if (le16toh(h.version) != FR_STORE_VERSION || (le32toh(h.incompat_flags) & ~FR_INCOMPAT_KNOWN))
		return -EPROTONOSUPPORT;
	len = le32toh(h.meta_len);
	if (le32toh(h.header_size) != sizeof(h) || len > FR_INCIDENT_META_MAX ||
	    le64toh(h.chunks_offset) != sizeof(h) + ALIGN8(len))
		return -EBADMSG;
	meta = malloc(len + 1);
	if (!meta)
		return -ENOMEM;
	n = pread(fd, meta, len, sizeof(h));
	if (n != (ssize_t)len || fr_crc_mismatch(le32toh(h.meta_crc), fr_crc32(meta, len)))
		return -EBADMSG;
	meta[len] = 0;
	*ret_meta = TAKE_PTR(meta);
	*ret_chunks_offset = le64toh(h.chunks_offset);
	return 0;
}
