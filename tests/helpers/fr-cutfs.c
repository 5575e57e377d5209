/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test tool: a FUSE file system that can cut the power.
 *
 * It passes a backing directory through, except for file data: a write is
 * kept in this process's memory ("the disk's volatile cache") and reaches
 * the backing file only when fsync() or fdatasync() of that file makes it
 * durable.  Reads see the writes, synced or not, as a page cache would.
 * Name and size changes (create, rename, link, unlink, truncate, fallocate,
 * mkdir) reach the backing directory at once: the model is a journaling
 * file system that commits its metadata eagerly and its data only on sync,
 * which is the case that loses the most data without breaking the file
 * system's own structure.
 *
 * Power is cut on SIGUSR1, or by --cut-on: the pending writes are
 * discarded and the process exits, which aborts the mount (every request
 * in flight and after fails with ENOTCONN).  What the backing directory
 * holds then is what survived.  Modes (--mode):
 *   drop     every unsynced write is lost;
 *   torn     ... except a random prefix, in 512-byte sectors, of the last
 *            write (a write the disk was in the middle of);
 *   reorder  a random subset of the unsynced writes reached the disk, in
 *            any order (a disk cache that writes back out of order).
 * Before it cuts, it writes every unsynced write to --log FILE, so that
 * "fr-cutfs replay FILE DIR" can rebuild, on a copy of the backing
 * directory, what the disk would have held had the power stayed on (writes
 * to files the copy left out are skipped).
 *
 * Faults (--faults FILE, read again on SIGHUP): lines "OP ERRNO [PATH]",
 * OP one of write, fsync, read, flush (each close() of a file: the
 * kernel asks the file system, as NFS writes back there), ERRNO one of
 * EIO, ENOSPC; the operation fails with that error for files whose path
 * contains PATH (all files without it) until the file changes.  ERRNO
 * SLOW<ms> (SLOW3000) instead does the operation that much later: a slow
 * disk, every other request waiting behind it (the file system is
 * single-threaded).  A failed fsync loses the file's unsynced writes, as
 * Linux's writeback does when the disk refuses them.
 *
 * --ignore-fsync makes fsync a no-op that keeps nothing: a program that
 * never syncs, for testing that the harness catches data loss.
 *
 *   fr-cutfs [--mode drop|torn|reorder] [--seed N] [--log FILE]
 *            [--cut-on OP:N] [--faults FILE] [--ignore-fsync] BACKING MOUNTPOINT
 *   fr-cutfs replay LOG DIR
 * OP for --cut-on: rename, truncate (to size 0: a segment reused), write
 * to a path under incidents/: the Nth such request after SIGUSR2 cuts the
 * power instead of being done.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#define LOG_MAGIC 0x7375666374756366ULL /* "fcutcfus" */
#define SECTOR 512

struct pwrite {
	struct pwrite *next;
	uint64_t seq;
	uint64_t off, len;
	char data[];
};

/* one file with writes not yet durable, found by the backing inode */
struct pfile {
	struct pfile *next;
	ino_t ino;
	char path[PATH_MAX]; /* relative to the backing directory */
	struct pwrite *head, *tail;
};

enum mode { MODE_DROP, MODE_TORN, MODE_REORDER };

struct fault {
	char op[16];
	int err;
	unsigned slow_ms; /* SLOW<ms>: done, that much later */
	char path[256];
};

static struct {
	int bfd; /* backing directory */
	enum mode mode;
	int log_fd; /* opened at start: the mount may change the directory */
	char faults_path[PATH_MAX];
	bool ignore_fsync;
	char cut_op[16];
	long cut_n;
	struct pfile *files;
	uint64_t seq;
	uint64_t pending_bytes;
	struct fault faults[16];
	int nfaults;
	bool reload_faults;
	bool armed; /* --cut-on counts from SIGUSR2 on */
} fs = { .bfd = -1, .log_fd = -1 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static struct pfile *find_file(ino_t ino)
{
	for (struct pfile *f = fs.files; f; f = f->next)
		if (f->ino == ino)
			return f;
	return NULL;
}

static void free_writes(struct pfile *f)
{
	struct pwrite *w = f->head, *n;

	for (; w; w = n) {
		n = w->next;
		fs.pending_bytes -= w->len;
		free(w);
	}
	f->head = f->tail = NULL;
}

static void drop_file(ino_t ino)
{
	for (struct pfile **p = &fs.files; *p; p = &(*p)->next)
		if ((*p)->ino == ino) {
			struct pfile *f = *p;
			*p = f->next;
			free_writes(f);
			free(f);
			return;
		}
}

static uint64_t pending_end(const struct pfile *f)
{
	uint64_t end = 0;

	for (const struct pwrite *w = f ? f->head : NULL; w; w = w->next)
		if (w->off + w->len > end)
			end = w->off + w->len;
	return end;
}

/* a truncate to @size: pending data past it is gone */
static void trim_writes(struct pfile *f, uint64_t size)
{
	struct pwrite **p = &f->head, *w;

	f->tail = NULL;
	while ((w = *p)) {
		if (w->off >= size) {
			*p = w->next;
			fs.pending_bytes -= w->len;
			free(w);
			continue;
		}
		if (w->off + w->len > size) {
			fs.pending_bytes -= w->off + w->len - size;
			w->len = size - w->off;
		}
		f->tail = w;
		p = &w->next;
	}
}

static void load_faults(void)
{
	FILE *in;
	char line[512], op[16], err[16], path[256];

	fs.nfaults = 0;
	fs.reload_faults = false;
	if (!fs.faults_path[0] || !(in = fopen(fs.faults_path, "re")))
		return;
	while (fs.nfaults < 16 && fgets(line, sizeof(line), in)) {
		int n = sscanf(line, "%15s %15s %255s", op, err, path);
		struct fault *x = &fs.faults[fs.nfaults];

		if (n < 2 || op[0] == '#')
			continue;
		snprintf(x->op, sizeof(x->op), "%s", op);
		x->slow_ms = !strncmp(err, "SLOW", 4) ? (unsigned)strtoul(err + 4, NULL, 10) : 0;
		x->err = x->slow_ms ? 0 : !strcmp(err, "ENOSPC") ? ENOSPC : EIO;
		snprintf(x->path, sizeof(x->path), "%s", n == 3 ? path : "");
		fs.nfaults++;
	}
	fclose(in);
}

static int fault(const char *op, const char *path)
{
	if (fs.reload_faults)
		load_faults();
	for (int i = 0; i < fs.nfaults; i++) {
		if (strcmp(fs.faults[i].op, op) || !strstr(path, fs.faults[i].path))
			continue;
		if (!fs.faults[i].slow_ms)
			return -fs.faults[i].err;
		/* a slow disk: single-threaded, every request waits behind it */
		(void)nanosleep(&(struct timespec){ fs.faults[i].slow_ms / 1000, (long)(fs.faults[i].slow_ms % 1000) * 1000000 },
				NULL);
		return 0;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

/* the disk completes @w, or its first @len bytes */
static void land(const struct pfile *f, const struct pwrite *w, uint64_t len)
{
	int fd = openat(fs.bfd, f->path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	(void)write_all(fd, w->data, len, (off_t)w->off);
	close(fd);
}

static void write_log(void)
{
	int fd = fs.log_fd;
	uint64_t magic = LOG_MAGIC;

	if (fd < 0)
		return;
	(void)write_all(fd, &magic, sizeof(magic), -1);
	for (struct pfile *f = fs.files; f; f = f->next)
		for (struct pwrite *w = f->head; w; w = w->next) {
			uint32_t plen = (uint32_t)strlen(f->path);
			uint64_t h[3] = { w->seq, w->off, w->len };

			(void)write_all(fd, &plen, sizeof(plen), -1);
			(void)write_all(fd, f->path, plen, -1);
			(void)write_all(fd, h, sizeof(h), -1);
			(void)write_all(fd, w->data, w->len, -1);
		}
	(void)fsync(fd);
}

/* Power off.  Called with the lock held; never returns. */
static void cut(void)
{
	struct pfile *lf = NULL;
	struct pwrite *lw = NULL;
	uint64_t landed = 0, lost = 0;

	write_log();
	for (struct pfile *f = fs.files; f; f = f->next)
		for (struct pwrite *w = f->head; w; w = w->next) {
			if (!lw || w->seq > lw->seq) {
				lw = w;
				lf = f;
			}
			if (fs.mode == MODE_REORDER && (random() & 1)) {
				land(f, w, w->len);
				landed += w->len;
			} else {
				lost += w->len;
			}
		}
	if (fs.mode == MODE_TORN && lw) {
		uint64_t sectors = (lw->len + SECTOR - 1) / SECTOR;
		uint64_t keep = (uint64_t)(random() % (long)sectors) * SECTOR;

		if (keep > lw->len)
			keep = lw->len;

		land(lf, lw, keep);
		landed += keep;
		lost -= keep;
	}
	fprintf(stderr, "fr-cutfs: power cut (%s): %" PRIu64 " unsynced bytes lost, %" PRIu64 " landed\n",
		fs.mode == MODE_DROP ? "drop" : fs.mode == MODE_TORN ? "torn" : "reorder", lost, landed);
	_exit(0);
}

static void maybe_cut(const char *op, const char *path)
{
	if (!fs.armed || fs.cut_n <= 0 || strcmp(fs.cut_op, op))
		return;
	if (!strcmp(op, "write") && !strstr(path, "incidents/"))
		return;
	if (--fs.cut_n == 0)
		cut();
}

static int do_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	if (fstatat(fs.bfd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(st->st_mode)) {
		uint64_t end = pending_end(find_file(st->st_ino));
		if (end > (uint64_t)st->st_size)
			st->st_size = (off_t)end;
	}
	return 0;
}

static int do_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	int fd = openat(fs.bfd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	(void)off, (void)fi, (void)flags;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)))
		if (fill(buf, de->d_name, NULL, 0, 0))
			break;
	closedir(d);
	return 0;
}

static int do_mkdir(const char *path, mode_t mode)
{
	return mkdirat(fs.bfd, rel(path), mode) < 0 ? -errno : 0;
}

static int do_mknod(const char *path, mode_t mode, dev_t dev)
{
	return mknodat(fs.bfd, rel(path), mode, dev) < 0 ? -errno : 0;
}

static int do_rmdir(const char *path)
{
	return unlinkat(fs.bfd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0;
}

static int do_unlink(const char *path)
{
	struct stat st;

	if (fstatat(fs.bfd, rel(path), &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (unlinkat(fs.bfd, rel(path), 0) < 0)
		return -errno;
	/* open files keep their data, but nothing can reach it after a cut */
	if (st.st_nlink <= 1)
		drop_file(st.st_ino);
	return 0;
}

static int do_rename(const char *from, const char *to, unsigned int flags)
{
	struct stat a, b;
	bool replaced;
	struct pfile *f;

	maybe_cut("rename", from);
	if (fstatat(fs.bfd, rel(from), &a, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	replaced = fstatat(fs.bfd, rel(to), &b, AT_SYMLINK_NOFOLLOW) == 0;
	if (renameat2(fs.bfd, rel(from), fs.bfd, rel(to), flags) < 0)
		return -errno;
	if (replaced && b.st_ino != a.st_ino && b.st_nlink <= 1)
		drop_file(b.st_ino);
	if ((f = find_file(a.st_ino)))
		snprintf(f->path, sizeof(f->path), "%s", rel(to));
	return 0;
}

static int do_link(const char *from, const char *to)
{
	return linkat(fs.bfd, rel(from), fs.bfd, rel(to), 0) < 0 ? -errno : 0;
}

static int do_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	if (fi)
		return fchmod((int)fi->fh, mode) < 0 ? -errno : 0;
	return fchmodat(fs.bfd, rel(path), mode, 0) < 0 ? -errno : 0;
}

static int do_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	if (fi)
		return fchown((int)fi->fh, uid, gid) < 0 ? -errno : 0;
	return fchownat(fs.bfd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int do_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	if (fi)
		return futimens((int)fi->fh, tv) < 0 ? -errno : 0;
	return utimensat(fs.bfd, rel(path), tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int fd_ino(int fd, ino_t *ino)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

static int do_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int fd = fi ? (int)fi->fh : openat(fs.bfd, rel(path), O_WRONLY | O_CLOEXEC);
	ino_t ino;
	int r;
	struct pfile *f;

	if (fd < 0)
		return -errno;
	if (size == 0)
		maybe_cut("truncate", path);
	r = fd_ino(fd, &ino);
	if (r == 0 && ftruncate(fd, size) < 0)
		r = -errno;
	if (r == 0 && (f = find_file(ino)))
		trim_writes(f, (uint64_t)size);
	if (!fi)
		close(fd);
	return r;
}

static int open_common(const char *path, struct fuse_file_info *fi, int flags, mode_t mode)
{
	int fd = openat(fs.bfd, rel(path), (flags & ~(O_APPEND | O_DIRECT)) | O_CLOEXEC, mode);
	ino_t ino;
	struct pfile *f;

	if (fd < 0)
		return -errno;
	if ((flags & O_TRUNC) && fd_ino(fd, &ino) == 0 && (f = find_file(ino)))
		trim_writes(f, 0);
	fi->fh = (uint64_t)fd;
	return 0;
}

static int do_open(const char *path, struct fuse_file_info *fi)
{
	return open_common(path, fi, fi->flags, 0);
}

static int do_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return open_common(path, fi, fi->flags | O_CREAT, mode);
}

static int do_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	int fd = (int)fi->fh, r;
	ino_t ino;
	struct stat st;
	struct pfile *f;
	uint64_t end, o = (uint64_t)off;
	ssize_t n;

	if ((r = fault("read", path)))
		return r;
	if (fstat(fd, &st) < 0)
		return -errno;
	ino = st.st_ino;
	f = find_file(ino);
	end = (uint64_t)st.st_size;
	if (pending_end(f) > end)
		end = pending_end(f);
	if (o >= end)
		return 0;
	if (size > end - o)
		size = (size_t)(end - o);
	n = pread(fd, buf, size, off);
	if (n < 0)
		return -errno;
	if ((size_t)n < size)
		memset(buf + n, 0, size - (size_t)n);
	for (const struct pwrite *w = f ? f->head : NULL; w; w = w->next) {
		uint64_t a = w->off > o ? w->off : o;
		uint64_t b = w->off + w->len < o + size ? w->off + w->len : o + size;
		if (a < b)
			memcpy(buf + (a - o), w->data + (a - w->off), b - a);
	}
	return (int)size;
}

static int do_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	int r;
	ino_t ino;
	struct pfile *f;
	struct pwrite *w;

	maybe_cut("write", path);
	if ((r = fault("write", path)))
		return r;
	if ((r = fd_ino((int)fi->fh, &ino)))
		return r;
	f = find_file(ino);
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		f->ino = ino;
		f->next = fs.files;
		fs.files = f;
	}
	snprintf(f->path, sizeof(f->path), "%s", rel(path));
	w = malloc(sizeof(*w) + size);
	if (!w)
		return -ENOMEM;
	w->next = NULL;
	w->seq = ++fs.seq;
	w->off = (uint64_t)off;
	w->len = size;
	memcpy(w->data, buf, size);
	if (f->tail)
		f->tail->next = w;
	else
		f->head = w;
	f->tail = w;
	fs.pending_bytes += size;
	return (int)size;
}

static int do_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int r;
	ino_t ino;
	struct pfile *f;

	(void)datasync;
	if ((r = fd_ino((int)fi->fh, &ino)))
		return r;
	f = find_file(ino);
	/* a failed writeback: Linux marks the pages clean and reports the
	 * error once; the data is gone (here at once, readers included) */
	if ((r = fault("fsync", path))) {
		if (f)
			free_writes(f);
		return r;
	}
	if (fs.ignore_fsync)
		return 0;
	for (struct pwrite *w = f ? f->head : NULL; w; w = w->next)
		if ((r = write_all((int)fi->fh, w->data, w->len, (off_t)w->off)))
			return r;
	if (f)
		free_writes(f);
	return 0;
}

static int do_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path, (void)datasync, (void)fi;
	return 0;
}

static int do_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)path;
	return fallocate((int)fi->fh, mode, off, len) < 0 ? -errno : 0;
}

/* Sent on every close() of a file, so that a close waits behind a slow
 * request like any other (fault() "flush") */
static int do_flush(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return fault("flush", path);
}

static int do_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int do_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	return fstatvfs(fs.bfd, sv) < 0 ? -errno : 0;
}

static void *do_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* the store's readers must see the sizes and data of this moment */
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->use_ino = 1;
	return NULL;
}

/* Every operation runs under one lock, so a cut never lands inside one. */
#define LOCKED(ret, name, params, args)             \
	static ret locked_##name params             \
	{                                           \
		ret r;                              \
		pthread_mutex_lock(&lock);          \
		r = do_##name args;                 \
		pthread_mutex_unlock(&lock);        \
		return r;                           \
	}
LOCKED(int, getattr, (const char *p, struct stat *s, struct fuse_file_info *f), (p, s, f))
LOCKED(int, readdir, (const char *p, void *b, fuse_fill_dir_t fl, off_t o, struct fuse_file_info *f, enum fuse_readdir_flags x), (p, b, fl, o, f, x))
LOCKED(int, mkdir, (const char *p, mode_t m), (p, m))
LOCKED(int, mknod, (const char *p, mode_t m, dev_t d), (p, m, d))
LOCKED(int, rmdir, (const char *p), (p))
LOCKED(int, unlink, (const char *p), (p))
LOCKED(int, rename, (const char *a, const char *b, unsigned int fl), (a, b, fl))
LOCKED(int, link, (const char *a, const char *b), (a, b))
LOCKED(int, chmod, (const char *p, mode_t m, struct fuse_file_info *f), (p, m, f))
LOCKED(int, chown, (const char *p, uid_t u, gid_t g, struct fuse_file_info *f), (p, u, g, f))
LOCKED(int, utimens, (const char *p, const struct timespec tv[2], struct fuse_file_info *f), (p, tv, f))
LOCKED(int, truncate, (const char *p, off_t s, struct fuse_file_info *f), (p, s, f))
LOCKED(int, open, (const char *p, struct fuse_file_info *f), (p, f))
LOCKED(int, create, (const char *p, mode_t m, struct fuse_file_info *f), (p, m, f))
LOCKED(int, read, (const char *p, char *b, size_t s, off_t o, struct fuse_file_info *f), (p, b, s, o, f))
LOCKED(int, write, (const char *p, const char *b, size_t s, off_t o, struct fuse_file_info *f), (p, b, s, o, f))
LOCKED(int, fsync, (const char *p, int d, struct fuse_file_info *f), (p, d, f))
LOCKED(int, fsyncdir, (const char *p, int d, struct fuse_file_info *f), (p, d, f))
LOCKED(int, fallocate, (const char *p, int m, off_t o, off_t l, struct fuse_file_info *f), (p, m, o, l, f))
LOCKED(int, flush, (const char *p, struct fuse_file_info *f), (p, f))
LOCKED(int, release, (const char *p, struct fuse_file_info *f), (p, f))
LOCKED(int, statfs, (const char *p, struct statvfs *s), (p, s))

static const struct fuse_operations ops = {
	.init = do_init,
	.getattr = locked_getattr,
	.readdir = locked_readdir,
	.mkdir = locked_mkdir,
	.mknod = locked_mknod,
	.rmdir = locked_rmdir,
	.unlink = locked_unlink,
	.rename = locked_rename,
	.link = locked_link,
	.chmod = locked_chmod,
	.chown = locked_chown,
	.utimens = locked_utimens,
	.truncate = locked_truncate,
	.open = locked_open,
	.create = locked_create,
	.read = locked_read,
	.write = locked_write,
	.fsync = locked_fsync,
	.fsyncdir = locked_fsyncdir,
	.fallocate = locked_fallocate,
	.flush = locked_flush,
	.release = locked_release,
	.statfs = locked_statfs,
};

/* SIGUSR1 cuts, SIGUSR2 arms --cut-on, SIGHUP reloads the faults: taken
 * by this thread, which waits for the lock like any request */
static void *signals(void *arg)
{
	sigset_t *set = arg;
	int sig;

	for (;;) {
		if (sigwait(set, &sig))
			continue;
		pthread_mutex_lock(&lock);
		if (sig == SIGUSR1)
			cut();
		if (sig == SIGUSR2)
			fs.armed = true;
		else
			fs.reload_faults = true;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static int replay(const char *log, const char *dir)
{
	FILE *in = fopen(log, "re");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t magic, h[3];
	uint32_t plen;
	char path[PATH_MAX];
	unsigned long n = 0, skipped = 0;

	if (!in || dfd < 0 || fread(&magic, sizeof(magic), 1, in) != 1 || magic != LOG_MAGIC) {
		fprintf(stderr, "fr-cutfs replay: cannot read %s or open %s\n", log, dir);
		return 1;
	}
	/* in the order they were written: the log lists them file by file */
	struct rec {
		uint64_t seq, off, len;
		char path[PATH_MAX];
		char *data;
	} *v = NULL;
	size_t nv = 0, cap = 0;
	while (fread(&plen, sizeof(plen), 1, in) == 1) {
		if (plen >= sizeof(path) || fread(path, plen, 1, in) != 1 || fread(h, sizeof(h), 1, in) != 1)
			return fprintf(stderr, "fr-cutfs replay: %s is cut short\n", log), 1;
		path[plen] = 0;
		if (nv == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 1;
		}
		v[nv].seq = h[0], v[nv].off = h[1], v[nv].len = h[2];
		memcpy(v[nv].path, path, plen + 1);
		v[nv].data = malloc(h[2] ? h[2] : 1);
		if (!v[nv].data || (h[2] && fread(v[nv].data, h[2], 1, in) != 1))
			return fprintf(stderr, "fr-cutfs replay: %s is cut short\n", log), 1;
		nv++;
	}
	for (uint64_t next = 0;; n++) {
		size_t best = nv;
		for (size_t i = 0; i < nv; i++)
			if (v[i].seq > next && (best == nv || v[i].seq < v[best].seq))
				best = i;
		if (best == nv)
			break;
		next = v[best].seq;
		int fd = openat(dfd, v[best].path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			skipped++; /* a file the copy left out */
			continue;
		}
		if (fd < 0 || write_all(fd, v[best].data, v[best].len, (off_t)v[best].off) < 0) {
			fprintf(stderr, "fr-cutfs replay: cannot write %s: %m\n", v[best].path);
			return 1;
		}
		close(fd);
	}
	printf("%lu writes replayed, %lu to files not in %s\n", n - skipped, skipped, dir);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: fr-cutfs [--mode drop|torn|reorder] [--seed N] [--log FILE] [--cut-on OP:N] "
			"[--faults FILE] [--ignore-fsync] BACKING MOUNTPOINT\n"
			"       fr-cutfs replay LOG DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long seed = (unsigned long)getpid();
	const char *backing = NULL, *mnt = NULL;
	static sigset_t set;
	pthread_t th;

	if (argc == 4 && !strcmp(argv[1], "replay"))
		return replay(argv[2], argv[3]);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--mode") && v) {
			fs.mode = !strcmp(v, "drop") ? MODE_DROP : !strcmp(v, "torn") ? MODE_TORN : !strcmp(v, "reorder") ? MODE_REORDER : (usage(), MODE_DROP);
			i++;
		} else if (!strcmp(a, "--seed") && v) {
			seed = strtoul(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--log") && v) {
			fs.log_fd = open(v, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fs.log_fd < 0) {
				fprintf(stderr, "fr-cutfs: cannot create %s: %m\n", v);
				return 1;
			}
			i++;
		} else if (!strcmp(a, "--faults") && v) {
			if (!realpath(v, fs.faults_path)) {
				fprintf(stderr, "fr-cutfs: no file %s: %m\n", v);
				return 1;
			}
			i++;
		} else if (!strcmp(a, "--cut-on") && v) {
			if (sscanf(v, "%15[a-z]:%ld", fs.cut_op, &fs.cut_n) != 2 || fs.cut_n <= 0)
				usage();
			i++;
		} else if (!strcmp(a, "--ignore-fsync")) {
			fs.ignore_fsync = true;
		} else if (!backing) {
			backing = a;
		} else if (!mnt) {
			mnt = a;
		} else {
			usage();
		}
	}
	if (!mnt)
		usage();
	srandom((unsigned)seed);
	fs.bfd = open(backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs.bfd < 0) {
		fprintf(stderr, "fr-cutfs: cannot open %s: %m\n", backing);
		return 1;
	}
	load_faults();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&th, NULL, signals, &set)) {
		fprintf(stderr, "fr-cutfs: cannot start its signal thread\n");
		return 1;
	}
	/* foreground, one request at a time; allow_other: the daemon's
	 * sandboxed parser and nobody's frctl read the store too */
	char *fargv[] = { argv[0], "-f", "-s", "-o", "allow_other,default_permissions,fsname=fr-cutfs", (char *)mnt, NULL };
	return fuse_main(6, fargv, &ops, NULL);
}
