/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The spare incident file: see incident-spare.h. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "../lib/incident.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "incident-spare.h"
#include "log.h"

#define SPARE_MIN (1ULL << 20)
#define SPARE_FIRST (4ULL << 20)
#define SPARE_MAX (64ULL << 20)
/* A spare is made only while the filesystem keeps this much free, and 16
 * times its size: it must never take the last space the store needs. */
#define SPARE_FREE_MIN (64ULL << 20)

/* STRANDED: .spare holds a durable incident that could not be renamed
 * (or could not be checked); it is never written over, and renaming it
 * is tried again at the next incident. */
enum spare_state { SPARE_NONE, SPARE_BUILDING, SPARE_READY, SPARE_STRANDED };
/* io_uring user_data of the spare's I/O */
enum { IO_SPARE_WRITE = 1, IO_SPARE_SYNC, IO_SPARE_DIRSYNC, IO_NAME_DIRSYNC };

struct fr_spare {
	struct fr_spare_params p;
	uint64_t budget;

	struct io_uring ring;
	bool ring_ok;
	int ring_fd; /* eventfd of the ring's completions */
	sd_event_source *ring_source;
	unsigned ring_inflight;

	enum spare_state state;
	int fd;
	uint64_t size, want;
	void *zeros;         /* the buffer the spare's zeros come from */
	unsigned ops;        /* of its chain, still in flight */
	bool chain_failed;   /* its chain: one op failed */
	bool stopping;       /* no new spare: the daemon is exiting */
	int err;             /* the last failure to make one (logged once per change) */
	bool low_space;      /* not made for lack of free space (logged once per change) */
	char stranded_id[96]; /* the incident a stranded spare holds; "" unknown */
	int stranded_err;    /* why it is stranded (logged once per change) */
	uint64_t made, used; /* spares made ready; incidents written over one */
};

/* The size of the next spare: room for twice the largest incident seen,
 * within an eighth of the incidents' space budget. */
static uint64_t spare_cap(const struct fr_spare *s)
{
	uint64_t cap = MIN(SPARE_MAX, s->budget / 8);

	return cap & ~(uint64_t)4095;
}

void fr_spare_drop(struct fr_spare *s)
{
	closep(&s->fd);
	(void)unlinkat(s->p.dir_fd, FR_SPARE_NAME, 0);
	s->state = SPARE_NONE;
}

static struct io_uring_sqe *ring_sqe(struct fr_spare *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

	if (!sqe) {
		(void)io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
	}
	return sqe;
}

/* A spare could not be made: logged when the error is new, tried again
 * after the next incident. */
static void build_failed(struct fr_spare *s, int k)
{
	if (k != s->err)
		log_warning_errno(k, "Failed to make the spare incident file: %m");
	s->err = k;
}

/* Whether the filesystem has room for a spare of @size bytes to spare:
 * logged (at info) when that changes. */
static bool has_room(struct fr_spare *s, uint64_t size)
{
	uint64_t need = MAX(SPARE_FREE_MIN, 16 * size), avail;
	struct statvfs sv;
	char a[32], b[32];

	if (fstatvfs(s->p.dir_fd, &sv) < 0) {
		build_failed(s, negative_errno());
		return false;
	}
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail < need) {
		if (!s->low_space)
			log_info("No spare incident file while the filesystem of %s has %s free, under %s (16 times the spare, at least 64M): incidents are written as new files.",
				 s->p.dir, fr_format_size(avail, a, sizeof(a)), fr_format_size(need, b, sizeof(b)));
		s->low_space = true;
		return false;
	}
	if (s->low_space)
		log_info("The filesystem of %s has %s free again: making a spare incident file.", s->p.dir,
			 fr_format_size(avail, a, sizeof(a)));
	s->low_space = false;
	return true;
}

/* Makes a new spare: created under its name, zeros over its whole size,
 * fdatasync, fsync of the directory, linked so each starts when the one
 * before succeeded.  Ready when the last completes.  Whatever stops it
 * (no room, an error), it is tried again after the next incident. */
void fr_spare_make(struct fr_spare *s)
{
	struct io_uring_sqe *sqe[3];
	uint64_t size = MIN(s->want, spare_cap(s));
	struct stat st;

	/* none while stopping: it would only delay the exit */
	if (!s->ring_ok || s->state != SPARE_NONE || s->zeros || s->stopping)
		return;
	/* its three SQEs are taken together or not at all: an SQE taken and
	 * left unprepared would be submitted with the next one */
	if (io_uring_sq_space_left(&s->ring) < 3)
		(void)io_uring_submit(&s->ring);
	if (size < 64 * 1024 || s->ring_inflight + 3 > 16 || io_uring_sq_space_left(&s->ring) < 3 ||
	    !has_room(s, size)) {
		/* none now; a spare left from before the start keeps no old
		 * data meanwhile */
		(void)unlinkat(s->p.dir_fd, FR_SPARE_NAME, 0);
		return;
	}
	/* a spare left from before the start (no incident: spare_recover
	 * checked) is made again over its own blocks when it has the size;
	 * otherwise it is emptied first.  Either way zeros are written over
	 * every byte before it is used. */
	s->fd = openat(s->p.dir_fd, FR_SPARE_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (s->fd < 0) {
		build_failed(s, negative_errno());
		return;
	}
	if (fstat(s->fd, &st) < 0 || ((uint64_t)st.st_size != size && ftruncate(s->fd, 0) < 0)) {
		build_failed(s, negative_errno());
		fr_spare_drop(s);
		return;
	}
	(void)fchmod(s->fd, 0640);
	/* untouched anonymous memory: the kernel reads its zero page */
	s->zeros = calloc(1, size);
	if (!s->zeros) {
		build_failed(s, -ENOMEM);
		fr_spare_drop(s);
		return;
	}
	for (unsigned i = 0; i < 3; i++)
		sqe[i] = io_uring_get_sqe(&s->ring); /* room checked above */
	io_uring_prep_write(sqe[0], s->fd, s->zeros, (unsigned)size, 0);
	io_uring_sqe_set_data64(sqe[0], IO_SPARE_WRITE);
	sqe[0]->flags |= IOSQE_IO_LINK;
	io_uring_prep_fsync(sqe[1], s->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data64(sqe[1], IO_SPARE_SYNC);
	sqe[1]->flags |= IOSQE_IO_LINK;
	io_uring_prep_fsync(sqe[2], s->p.dir_fd, 0);
	io_uring_sqe_set_data64(sqe[2], IO_SPARE_DIRSYNC);
	s->ring_inflight += 3;
	s->ops = 3;
	s->chain_failed = false;
	s->size = size;
	s->state = SPARE_BUILDING;
	(void)io_uring_submit(&s->ring);
}

static void ring_complete(struct fr_spare *s, uint64_t what, int res)
{
	s->ring_inflight--;
	if (what == IO_NAME_DIRSYNC) {
		if (res < 0)
			log_warning_errno(res, "Failed to sync the incidents directory: %m");
		return;
	}
	/* the spare's chain: a short write fails it like an error (the ops
	 * after the failed one complete with -ECANCELED) */
	if (!s->chain_failed && (res < 0 || (what == IO_SPARE_WRITE && (uint64_t)res != s->size))) {
		build_failed(s, res < 0 ? res : -ENOSPC);
		s->chain_failed = true;
	}
	if (what == IO_SPARE_WRITE)
		free(TAKE_PTR(s->zeros));
	if (--s->ops > 0)
		return;
	if (s->chain_failed) {
		fr_spare_drop(s);
		return;
	}
	if (s->err)
		log_info("Spare incident file made again.");
	s->err = 0;
	s->state = SPARE_READY;
	s->made++;
}

static void ring_process(struct fr_spare *s)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&s->ring, &cqe) == 0) {
		uint64_t what = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&s->ring, cqe);
		ring_complete(s, what, res);
	}
}

static int on_ring(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct fr_spare *s = userdata;
	eventfd_t v;

	/* the eventfd is only a hint; the CQ is the truth */
	(void)eventfd_read(s->ring_fd, &v);
	ring_process(s);
	return 0;
}

/* Waits for the I/O in flight (at exit).  Returns whether none is left:
 * otherwise the kernel may still read the zeros buffer. */
static bool ring_drain(struct fr_spare *s)
{
	while (s->ring_ok && s->ring_inflight > 0) {
		struct io_uring_cqe *cqe;
		int k;

		(void)io_uring_submit(&s->ring);
		k = io_uring_wait_cqe(&s->ring, &cqe);
		if (k == -EINTR)
			continue;
		if (k < 0) {
			log_warning_errno(k, "Failed to wait for the incident file I/O: %m");
			return false;
		}
		ring_process(s);
	}
	return true;
}

/* The ring for the spare's I/O, its completions on an eventfd in the
 * loop.  All or nothing: ring_ok only once every part is set up. */
static int ring_setup(struct fr_spare *s)
{
	int k = io_uring_queue_init(16, &s->ring, 0);

	if (k < 0)
		return k;
	s->ring_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ring_fd < 0)
		k = negative_errno();
	if (k >= 0)
		k = io_uring_register_eventfd(&s->ring, s->ring_fd);
	if (k >= 0)
		k = sd_event_add_io(s->p.event, &s->ring_source, s->ring_fd, EPOLLIN, on_ring, s);
	if (k < 0) {
		s->ring_source = sd_event_source_disable_unref(s->ring_source);
		io_uring_queue_exit(&s->ring);
		closep(&s->ring_fd);
		return k;
	}
	s->ring_ok = true;
	return 0;
}

/* An incident id as a file name: no path, not hidden. */
static bool id_ok(const char *id)
{
	return id && id[0] && id[0] != '.' && !strchr(id, '/') && strlen(id) < 200;
}

/* Renames the spare to the first free name of ID.fri, ID-2.fri, ID-3.fri,
 * ... (never over an existing file, nor to the name of an incident not
 * yet written; @reserved: ID itself is the caller's); *name gets the file
 * name.  0 or -errno. */
static int spare_rename(struct fr_spare *s, const char *id, bool reserved, char *name, size_t size)
{
	for (unsigned n = 1; n <= 1000; n++) {
		char cand[128];

		snprintf(cand, sizeof(cand), n > 1 ? "%s-%u" : "%s", id, n);
		if (!(n == 1 && reserved) && s->p.taken && s->p.taken(cand, s->p.userdata))
			continue;
		snprintf(name, size, "%s%s", cand, FR_INCIDENT_SUFFIX);
		if (renameat2(s->p.dir_fd, FR_SPARE_NAME, s->p.dir_fd, name, RENAME_NOREPLACE) == 0)
			return 0;
		/* a filesystem without RENAME_NOREPLACE: link() does not
		 * replace either */
		if (errno == EINVAL && linkat(s->p.dir_fd, FR_SPARE_NAME, s->p.dir_fd, name, 0) == 0) {
			(void)unlinkat(s->p.dir_fd, FR_SPARE_NAME, 0);
			return 0;
		}
		if (errno != EEXIST)
			return negative_errno();
	}
	return -EEXIST;
}

/* A spare holding a whole sealed incident is one that was durable when the
 * daemon stopped (@at_start) or when its rename failed: it gets its name,
 * ID.fri, or ID-N.fri when that is taken.  A spare that is not sealed or
 * fails its crc (never used, or torn mid-write) is no incident: at start,
 * one of a spare's size is kept to be made again over its own blocks,
 * anything else is removed.  Anything else (it cannot be read, checked or
 * renamed) keeps it where it is, stranded: never written over, tried
 * again at the next incident. */
static void spare_recover(struct fr_spare *s, bool at_start)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *meta = NULL;
	struct json_object *o = NULL, *idv = NULL;
	char id[96], name[256], own[128];
	const char *why = NULL;
	uint64_t len;
	int k;

	s->state = SPARE_NONE;
	fd = openat(s->p.dir_fd, FR_SPARE_NAME, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	k = fd < 0 ? negative_errno() : fr_incident_check_sealed(fd, &meta, &len);
	if (k == -ENOENT || k == -EBADMSG) {
		/* none, or not an incident: never sealed, or torn mid-write.
		 * At start, one of a size a spare can have is made again over
		 * its own blocks (fr_spare_make writes zeros over all of it
		 * before it is used); anything else is removed. */
		struct stat st;
		if (k == -EBADMSG && at_start && s->ring_ok && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size >= 64 * 1024 && (uint64_t)st.st_size <= spare_cap(s) && st.st_size % 4096 == 0)
			s->want = MAX(s->want, (uint64_t)st.st_size);
		else if (k == -EBADMSG)
			(void)unlinkat(s->p.dir_fd, FR_SPARE_NAME, 0);
		s->stranded_id[0] = 0;
		s->stranded_err = 0;
		return;
	}
	if (k < 0) {
		why = fd < 0 ? "Cannot open" : "Cannot check";
		id[0] = 0;
	} else {
		/* sealed: the crc held, so the metadata is the daemon's; an id
		 * that is no file name (never written so) still gets one */
		if ((o = json_tokener_parse(meta)) && json_object_object_get_ex(o, "id", &idv) &&
		    id_ok(json_object_get_string(idv)) && strlen(json_object_get_string(idv)) < sizeof(id) - 8)
			snprintf(id, sizeof(id), "%s", json_object_get_string(idv));
		else {
			time_t now = time(NULL);
			struct tm tm;
			gmtime_r(&now, &tm);
			strftime(id, sizeof(id), "%Y%m%dT%H%M%SZ-recovered", &tm);
		}
		json_object_put(o);
		/* cut to its length first: a name never points at the spare's
		 * zeros */
		k = ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0 ? negative_errno() : 0;
		if (k == 0)
			k = spare_rename(s, id, false, name, sizeof(name));
	}
	if (k < 0) {
		/* kept: never written over; fr_spare_holds() keeps its id free */
		snprintf(s->stranded_id, sizeof(s->stranded_id), "%s", id);
		s->state = SPARE_STRANDED;
		if (at_start || k != s->stranded_err) {
			if (why)
				log_warning_errno(k, "%s the spare incident file %s/%s: %m; kept there, tried again at the next incident.",
						  why, s->p.dir, FR_SPARE_NAME);
			else
				log_warning_errno(k, "Incident %s is durable in %s/%s but cannot be renamed: %m; kept there, tried again at the next incident.",
						  id, s->p.dir, FR_SPARE_NAME);
		}
		s->stranded_err = k;
		return;
	}
	(void)fsync(s->p.dir_fd);
	s->stranded_id[0] = 0;
	s->stranded_err = 0;
	snprintf(own, sizeof(own), "%s%s", id, FR_INCIDENT_SUFFIX);
	log_notice("Incident %s, durable in the spare file %s, is now %s/%s%s.", id,
		   at_start ? "when the daemon stopped" : "since its rename failed", s->p.dir, name,
		   strcmp(name, own) ? " (its own name was taken)" : "");
}

int fr_spare_new(const struct fr_spare_params *p, struct fr_spare **ret)
{
	struct fr_spare *s = calloc(1, sizeof(*s));
	int k;

	if (!s)
		return -ENOMEM;
	s->p = *p;
	s->budget = p->budget;
	s->fd = s->ring_fd = -EBADF;
	s->want = SPARE_FIRST;
	k = ring_setup(s);
	if (k < 0)
		/* incidents are still written, the plain way */
		log_info_errno(k, "No io_uring for incident files (%m): no spare file, incidents wait for two journal commits.");
	spare_recover(s, true);
	fr_spare_make(s);
	*ret = s;
	return 0;
}

struct fr_spare *fr_spare_free(struct fr_spare *s)
{
	bool drained;

	if (!s)
		return NULL;
	/* names queued for syncing get synced; a spare still being made is
	 * made again at the next start */
	drained = ring_drain(s);
	sd_event_source_disable_unref(s->ring_source);
	if (s->ring_ok)
		io_uring_queue_exit(&s->ring);
	/* a write from it may still be in flight: left to the exit */
	if (drained)
		free(s->zeros);
	closep(&s->ring_fd);
	closep(&s->fd);
	free(s);
	return NULL;
}

void fr_spare_set_budget(struct fr_spare *s, uint64_t budget)
{
	s->budget = budget;
}

int fr_spare_fd(const struct fr_spare *s, uint64_t *ret_size)
{
	if (s->state != SPARE_READY)
		return -EBADF;
	*ret_size = s->size;
	return s->fd;
}

void fr_spare_want(struct fr_spare *s, uint64_t need)
{
	s->want = MAX(s->want, (2 * need + SPARE_MIN - 1) & ~(SPARE_MIN - 1));
}

int fr_spare_publish(struct fr_spare *s, const char *id, uint64_t len, char *name, size_t size)
{
	struct io_uring_sqe *sqe;
	int k = 0;

	if (s->state != SPARE_READY)
		return -EBADF;
	if (ftruncate(s->fd, (off_t)len) < 0)
		k = negative_errno();
	if (k == 0)
		k = spare_rename(s, id, true, name, size);
	closep(&s->fd);
	if (k < 0) {
		s->state = SPARE_STRANDED;
		snprintf(s->stranded_id, sizeof(s->stranded_id), "%s", id);
		s->stranded_err = k;
		return k;
	}
	s->state = SPARE_NONE;
	sqe = ring_sqe(s);
	if (sqe) {
		io_uring_prep_fsync(sqe, s->p.dir_fd, 0);
		io_uring_sqe_set_data64(sqe, IO_NAME_DIRSYNC);
		s->ring_inflight++;
		(void)io_uring_submit(&s->ring);
	} else
		(void)fsync(s->p.dir_fd);
	return 0;
}

void fr_spare_retry(struct fr_spare *s)
{
	if (s->state == SPARE_STRANDED)
		spare_recover(s, false);
}

void fr_spare_stop(struct fr_spare *s)
{
	s->stopping = true;
}

bool fr_spare_holds(const struct fr_spare *s, const char *id)
{
	return s->state == SPARE_STRANDED && !strcmp(s->stranded_id, id);
}

void fr_spare_count_use(struct fr_spare *s)
{
	s->used++;
}

static const char *state_name(const struct fr_spare *s)
{
	if (!s->ring_ok)
		return "unavailable";
	switch (s->state) {
	case SPARE_BUILDING: return "building";
	case SPARE_READY: return "ready";
	case SPARE_STRANDED: return "stranded";
	case SPARE_NONE: break;
	}
	return s->low_space ? "low_space" : "none";
}

struct json_object *fr_spare_status(const struct fr_spare *s)
{
	struct json_object *o = json_object_new_object();
	bool has = s->state == SPARE_BUILDING || s->state == SPARE_READY;

	json_object_object_add(o, "state", json_object_new_string(state_name(s)));
	json_object_object_add(o, "bytes", json_object_new_uint64(has ? s->size : 0));
	json_object_object_add(o, "made", json_object_new_uint64(s->made));
	json_object_object_add(o, "used", json_object_new_uint64(s->used));
	json_object_object_add(o, "error", s->err && s->state == SPARE_NONE ? json_object_new_string(strerror(-s->err))
									   : NULL);
	return o;
}
