/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chunk.h"
#include "incident.h"
#include "macro.h"

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int64_t fr_incident_write(const char *path, const char *meta, struct fr_store_reader *r,
			  const struct fr_chunk_ref *refs, size_t nrefs)
{
	struct fr_incident_header h = {};
	_cleanup_free_ char *tmp = NULL, *dir = NULL;
	_cleanup_close_ int fd = -EBADF, dfd = -EBADF;
	static const uint8_t zero[8];
	size_t meta_len = strlen(meta);
	struct timespec ts;
	int64_t total;
	int k;

	if (meta_len > FR_INCIDENT_META_MAX)
		return -E2BIG;
	if (asprintf(&tmp, "%s.tmp", path) < 0 || !(dir = strdup(path)))
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return negative_errno();
	(void)fchmod(fd, 0640);

	clock_gettime(CLOCK_REALTIME, &ts);
	memcpy(h.magic, FR_INCIDENT_MAGIC, 8);
	h.header_size = htole32(sizeof(h));
	h.version = htole16(FR_STORE_VERSION);
	h.meta_len = htole32((uint32_t)meta_len);
	h.meta_crc = htole32(fr_crc32(meta, meta_len));
	h.chunks_offset = htole64(sizeof(h) + ALIGN8(meta_len));
	h.created_wall = htole64((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
	h.header_crc = htole32(fr_crc32(&h, offsetof(struct fr_incident_header, header_crc)));
	k = write_all(fd, &h, sizeof(h));
	if (k == 0)
		k = write_all(fd, meta, meta_len);
	if (k == 0)
		k = write_all(fd, zero, ALIGN8(meta_len) - meta_len);
	total = (int64_t)(sizeof(h) + ALIGN8(meta_len));
	for (size_t i = 0; i < nrefs && k == 0; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		/* the chunk as stored: header, payload, padding */
		k = fr_store_reader_read_chunk(r, &refs[i], &buf, &len);
		if (k == -EBADMSG) {
			/* damaged or overwritten since selected: not copied */
			k = 0;
			continue;
		}
		if (k == 0)
			k = write_all(fd, buf, len);
		free(buf);
		total += (int64_t)len;
	}
	if (k == 0 && fsync(fd) < 0)
		k = negative_errno();
	if (k == 0 && rename(tmp, path) < 0)
		k = negative_errno();
	if (k < 0) {
		unlink(tmp);
		return k;
	}
	/* the rename is durable once the directory is */
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return total;
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
