/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunk.h"
#include "macro.h"
#include "store-format.h"
#include "store.h"

void fr_store_segment_name(uint32_t slot, char *buf, size_t len)
{
	snprintf(buf, len, "%04u.frs", slot);
}

/* Creates @path with exactly @mode (whatever the umask); an existing
 * directory is left as the administrator made it. */
static int mkdir_mode(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0)
		return errno == EEXIST ? 0 : negative_errno();
	if (chmod(path, mode) < 0)
		return negative_errno();
	return 0;
}

int fr_store_create_dirs(const char *dir)
{
	_cleanup_free_ char *p = strdup(dir), *seg = NULL;
	struct stat st;
	int r;

	if (!p)
		return -ENOMEM;
	/* parents, as mkdir -p would */
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		r = mkdir_mode(p, 0755);
		*s = '/';
		if (r < 0)
			return r;
	}
	r = mkdir_mode(dir, 0750);
	if (r < 0)
		return r;
	if (stat(dir, &st) < 0)
		return negative_errno();
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (asprintf(&seg, "%s/%s", dir, FR_STORE_SEGMENT_DIR) < 0)
		return -ENOMEM;
	return mkdir_mode(seg, 0750);
}

int fr_store_segment_header_read(int fd, uint64_t *ret_seqnum, uint64_t *ret_size)
{
	struct fr_segment_header h;
	ssize_t n = pread(fd, &h, sizeof(h), 0);

	if (n < 0)
		return negative_errno();
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, FR_SEGMENT_MAGIC, FR_MAGIC_LEN) != 0 ||
	    fr_crc_mismatch(le32toh(h.header_crc), fr_crc32(&h, offsetof(struct fr_segment_header, header_crc))))
		return -EBADMSG;
	if (le16toh(h.version) != FR_STORE_VERSION ||
	    (le32toh(h.incompat_flags) & ~FR_INCOMPAT_KNOWN))
		return -EPROTONOSUPPORT;
	if (le32toh(h.header_size) != sizeof(h))
		return -EBADMSG;
	if (ret_seqnum)
		*ret_seqnum = le64toh(h.seqnum);
	if (ret_size)
		*ret_size = le64toh(h.segment_size);
	return 0;
}
