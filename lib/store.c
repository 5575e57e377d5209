/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "chunk.h"
#include "macro.h"
#include "store-format.h"
#include "store.h"

void fr_store_segment_name(uint32_t slot, char *buf, size_t len)
{
	snprintf(buf, len, "%04u.frs", slot);
}

int fr_store_auto_size(int dir_fd, uint32_t nsegments, uint64_t max_chunk, uint64_t *ret_size, uint64_t *ret_fs)
{
	uint64_t fs, size, seg_min;
	struct statvfs sv;

	if (fstatvfs(dir_fd, &sv) < 0)
		return negative_errno();
	fs = (uint64_t)sv.f_blocks * (sv.f_frsize ? sv.f_frsize : sv.f_bsize);
	size = MIN(FR_STORE_AUTO_SIZE, fs / 100 * FR_STORE_AUTO_PERCENT);
	/* whole pages a segment, as the writer cuts them */
	seg_min = (sizeof(struct fr_segment_header) + 4 * max_chunk + 4095) & ~(uint64_t)4095;
	*ret_size = MAX(size, seg_min * nsegments);
	*ret_fs = fs;
	return 0;
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

/* @fd (a directory, or a file in one, named @path) is safe for a root
 * daemon to write into: ours, and no one else may write to it. */
static int check_owned(int fd, const char *path, bool dir, uid_t uid, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s is not a %s", path, dir ? "directory" : "regular file");
		return -EPERM;
	}
	if (st.st_uid != uid) {
		snprintf(why, len, "%s is owned by uid %u, not by the daemon's (uid %u)", path, (unsigned)st.st_uid,
			 (unsigned)uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "%s is writable by its group or others (mode %04o)", path,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* The files in segments/ (@fd, named @dir): each a regular file of ours
 * not writable by others, or the writer would follow or reuse it. */
static int check_segments(int fd, const char *dir, uid_t uid, char *why, size_t len)
{
	_cleanup_close_ int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	struct dirent *de;
	struct stat st;
	int r = 0;

	if (!d)
		return negative_errno();
	TAKE_FD(dfd);
	while (r == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			r = negative_errno();
			snprintf(why, len, "%s/%s cannot be read (%s)", dir, de->d_name, strerror(-r));
		} else if (!S_ISREG(st.st_mode)) {
			snprintf(why, len, "%s/%s is not a regular file%s", dir, de->d_name,
				 S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
			r = -EPERM;
		} else if (st.st_uid != uid) {
			snprintf(why, len, "%s/%s is owned by uid %u, not by the daemon's (uid %u)", dir, de->d_name,
				 (unsigned)st.st_uid, (unsigned)uid);
			r = -EPERM;
		} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
			snprintf(why, len, "%s/%s is writable by its group or others (mode %04o)", dir, de->d_name,
				 (unsigned)(st.st_mode & 07777));
			r = -EPERM;
		}
	}
	closedir(d);
	return r;
}

int fr_store_check_dirs(const char *dir, uid_t uid, char *why, size_t len)
{
	static const char *const subdirs[] = { FR_STORE_SEGMENT_DIR, FR_INCIDENT_DIR, FR_KSYMS_DIR,
					       FR_BOOT_HOST_DIR };
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char path[PATH_MAX];
	int r;

	*why = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* made by us, 0750 */
		r = negative_errno();
		snprintf(why, len, "%s cannot be opened as a directory (%s)", dir,
			 r == -ELOOP ? "a symbolic link" : strerror(-r));
		return r == -ELOOP ? -EPERM : r;
	}
	r = check_owned(fd, dir, true, uid, why, len);
	for (size_t i = 0; r == 0 && i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		_cleanup_close_ int sub = openat(fd, subdirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		snprintf(path, sizeof(path), "%s/%s", dir, subdirs[i]);
		if (sub < 0 && errno == ENOENT)
			continue;
		if (sub < 0) {
			r = negative_errno();
			snprintf(why, len, "%s cannot be opened as a directory (%s)", path,
				 r == -ELOOP || r == -ENOTDIR ? "a symbolic link or a file" : strerror(-r));
			return r == -ELOOP || r == -ENOTDIR ? -EPERM : r;
		}
		r = check_owned(sub, path, true, uid, why, len);
		if (r == 0 && i == 0)
			r = check_segments(sub, path, uid, why, len);
	}
	return r;
}

int fr_store_check_file(int fd, const char *name, char *why, size_t len)
{
	struct stat st;
	int r = check_owned(fd, name, false, geteuid(), why, len);

	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if ((st.st_mode & 07777) != 0640 && fchmod(fd, 0640) < 0)
		return negative_errno();
	return 0;
}

int fr_store_segment_header_write(int fd, uint64_t seqnum, uint64_t segment_size,
				  const struct fr_segment_prev *prev)
{
	struct fr_segment_header h = {};
	struct timespec ts;
	ssize_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	memcpy(h.magic, FR_SEGMENT_MAGIC, FR_MAGIC_LEN);
	h.header_size = htole32(sizeof(h));
	h.version = htole16(FR_STORE_VERSION);
	h.seqnum = htole64(seqnum);
	h.segment_size = htole64(segment_size);
	h.created_wall = htole64((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
	if (prev && prev->known) {
		uint64_t age = FR_SEGMENT_NO_KEYFRAME;

		/* in whole ms, rounded up: the keyframe is no earlier */
		if (prev->keyframe_wall && prev->keyframe_wall <= prev->last_wall)
			age = (prev->last_wall - prev->keyframe_wall + 999999) / 1000000;
		h.compat_flags = htole32(FR_SEGMENT_COMPAT_PREV);
		h.prev_last_wall = htole64(prev->last_wall);
		h.prev_keyframe_age_ms = htole32((uint32_t)MIN(age, (uint64_t)FR_SEGMENT_NO_KEYFRAME));
	}
	h.header_crc = htole32(fr_crc32(&h, offsetof(struct fr_segment_header, header_crc)));
	n = pwrite(fd, &h, sizeof(h), 0);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != sizeof(h))
		return -EIO;
	return 0;
}

int fr_store_segment_header_read_all(int fd, uint64_t *ret_seqnum, struct fr_segment_prev *ret_prev,
				     uint64_t *ret_created_wall)
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
	if (ret_created_wall)
		*ret_created_wall = le64toh(h.created_wall);
	if (ret_prev) {
		uint64_t last = le64toh(h.prev_last_wall), age = le32toh(h.prev_keyframe_age_ms);

		*ret_prev = (struct fr_segment_prev){};
		if (le32toh(h.compat_flags) & FR_SEGMENT_COMPAT_PREV) {
			ret_prev->known = true;
			ret_prev->last_wall = last;
			if (age != FR_SEGMENT_NO_KEYFRAME && age * 1000000 < last)
				ret_prev->keyframe_wall = last - age * 1000000;
		}
	}
	return 0;
}

int fr_store_segment_header_read(int fd, uint64_t *ret_seqnum, struct fr_segment_prev *ret_prev)
{
	return fr_store_segment_header_read_all(fd, ret_seqnum, ret_prev, NULL);
}
