/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing the segment ring.  Long because the ordering below, the chunks
 * held while the disk is slow and the recovery of a torn tail are one
 * state machine, kept in one place.
 *
 * Ordering that makes the store crash-safe:
 *   - a segment is reused by truncating it to zero, then writing its header
 *     with a new, higher sequence number, then appending chunks;
 *   - chunks are appended at increasing offsets, each self-checking, so a
 *     torn or never-written chunk fails its checksum and never existed;
 *   - fdatasync is queued with IOSQE_IO_DRAIN, so it starts only after every
 *     write queued before it has completed: everything before a completed
 *     sync is durable.
 * On open, the newest segment is scanned to its last valid chunk and cut
 * there; nothing before it is rewritten.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chunk.h"
#include "macro.h"
#include "segment-walk.h"
#include "boot-host.h"
#include "ksyms.h"
#include "store-writer.h"
#include "store.h"

#define RING_ENTRIES 256
/* Bounded write-behind: past this, chunks are held (below). */
#define INFLIGHT_MAX 128
/* The writer never waits in the caller's loop: a chunk that cannot be
 * queued yet (INFLIGHT_MAX in flight, or the segment before it still
 * syncing: advance()) is held, in order, until completions make room.
 * Waiting there instead stopped the daemon's drain for 4.5 s behind one
 * slow fdatasync at a segment's end, and the BPF rings overflowed
 * (BENCHMARKS.md, 2026-12-06).  Held chunks are bounded in bytes: 16 MiB
 * is ~10 s of the busiest load measured (1.6 MB/s of chunks at the
 * context-switch ceiling); past it, appending waits for the disk. */
#define HELD_BYTES_MAX (16ULL << 20)
/* Each write and sync holds an fd of its own (queue_sync()), closed once
 * it completes.  close() runs the file system's flush: NFS writes back
 * the file's dirty pages there, FUSE asks its server and waits, so it is
 * queued to the ring (IORING_OP_CLOSE, which hands a file with a flush
 * to a worker) rather than called in the caller's loop.  Past this many
 * closes in flight, a close is done here, waiting: the fds stay bounded. */
#define CLOSES_MAX 128

enum op_kind { OP_WRITE, OP_SYNC };

struct op {
	enum op_kind kind;
	int fd;
	uint8_t *buf;
	size_t len, done;
	uint64_t off;
	uint32_t cpu;
	uint32_t nrecords;
	uint64_t gap_lost;
	uint64_t seg_seq;  /* of the segment it writes to */
	uint64_t kf_wall;  /* a keyframe chunk: its first record's wall time */
	struct op *next;   /* held: the chunk appended after it */
};

/* A rotation's file operations: opening the next slot, truncating it,
 * keeping the bound, pruning the boot files and writing the new header.
 * They run on a thread of their own, so that a file system that takes
 * seconds over one of them (waiting behind a sync, a stalled FUSE or NFS
 * server) stops only the writer, whose chunks are held meanwhile, not
 * the caller's loop and its drain of the rings. */
struct rotation {
	pthread_t thread;
	bool started;     /* its file operations began: the thread, or inline */
	bool joinable;    /* a thread runs or ran them, not joined yet */
	atomic_bool done; /* they ended (the thread then wakes event_fd) */
	/* in: */
	uint32_t next;
	uint64_t seq;
	struct fr_segment_prev prev;
	/* out: */
	int fd;           /* the new segment, its header written */
	int r;
	unsigned trimmed; /* segments enforce_bound() emptied */
};

struct fr_store_writer {
	int dir_fd;  /* store directory, flock()ed */
	int seg_dir_fd;
	uint32_t nseg;
	uint64_t seg_size;
	uint64_t size_bound; /* store.size, or what "auto" came to */
	uint64_t fs_size;    /* "auto": the file system's size; else 0 */
	uint64_t max_chunk;

	uint32_t cur;      /* slot being written */
	int cur_fd;
	uint64_t cur_off;  /* next append offset, including queued writes */
	uint64_t cur_seq;  /* segment seqnum of cur */
	uint32_t cur_chunks;
	/* what the next segment's header says of cur (fr_segment_prev):
	 * keyframes count once written */
	uint64_t cur_last_wall, cur_kf_wall;

	struct io_uring ring;
	bool ring_ok;
	int event_fd;
	unsigned inflight;
	unsigned writes_inflight; /* of inflight, the writes (not syncs) */
	unsigned closes_inflight; /* fds closed on the ring (CLOSES_MAX) */

	/* chunks not queued yet, oldest first (HELD_BYTES_MAX) */
	struct op *held, **held_tail;
	uint64_t held_bytes;
	unsigned held_chunks;
	bool rotating;    /* the sync that ends the current segment is queued */
	struct rotation rot;
	bool sync_wanted; /* a sync asked for while chunks were held: queued
			     after the last of them */

	/* Records written since the last completed sync, per CPU: a sync
	 * that fails leaves them in doubt (the kernel may have dropped the
	 * pages it could not write, and says so only once), so they are
	 * counted lost then, each CPU's with its gaps, never silently. */
	struct unsynced {
		uint32_t cpu;
		uint32_t chunks;
		uint64_t nrecords, gap_lost;
	} *unsynced;
	size_t n_unsynced, cap_unsynced;

	fr_store_loss_cb loss_cb;
	void *userdata;
	fr_store_chunk_cb chunk_cb;
	void *chunk_userdata;
	struct fr_store_writer_stats st;
};

static void op_free(struct op *op)
{
	if (!op)
		return;
	free(op->buf);
	free(op);
}

static int open_slot(struct fr_store_writer *w, uint32_t slot, int flags)
{
	char name[32];

	char why[128];
	int fd, r;

	fr_store_segment_name(slot, name, sizeof(name));
	/* never through a symbolic link, never into a file someone else
	 * made (fr_store_check_dirs() keeps them out; this is the backstop) */
	fd = openat(w->seg_dir_fd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0640);
	if (fd < 0)
		return fd;
	r = (flags & O_ACCMODE) == O_RDONLY ? 0 : fr_store_check_file(fd, name, why, sizeof(why));
	/* O_NONBLOCK was for the open only (a FIFO planted there must not
	 * stall it): io_uring fails a write to a file that has it with
	 * -EAGAIN where it would wait (dirty page throttling), instead of
	 * handing it to a worker */
	if (r == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		r = negative_errno();
	if (r < 0) {
		close(fd);
		errno = -r;
		return -1;
	}
	return fd;
}

static struct io_uring_sqe *get_sqe(struct fr_store_writer *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

	if (!sqe) {
		io_uring_submit(&w->ring);
		sqe = io_uring_get_sqe(&w->ring);
	}
	return sqe;
}

/* A completion's user data that is a close, not an op. */
static char close_tag;

/* Closes @fd off the caller's loop (CLOSES_MAX).  Its completion only
 * counts it: an error there is the flush's, and the data it speaks of is
 * the syncs' to count (sync_done()). */
static void close_later(struct fr_store_writer *w, int fd)
{
	struct io_uring_sqe *sqe;

	if (fd < 0)
		return;
	if (!w->ring_ok || w->closes_inflight >= CLOSES_MAX || !(sqe = get_sqe(w))) {
		close(fd);
		return;
	}
	io_uring_prep_close(sqe, fd);
	io_uring_sqe_set_data(sqe, &close_tag);
	w->closes_inflight++;
}

static void count_loss(struct fr_store_writer *w, uint32_t cpu, uint32_t chunks, uint64_t nrecords,
		       uint64_t gap_lost, int error)
{
	w->st.chunks_failed += chunks;
	w->st.records_lost += nrecords;
	w->st.last_error = error;
	if (w->loss_cb)
		w->loss_cb(cpu, nrecords, gap_lost, error, w->userdata);
}

static void report_loss(struct fr_store_writer *w, struct op *op, int error)
{
	count_loss(w, op->cpu, 1, op->nrecords, op->gap_lost, error);
}

/* A chunk written, not yet synced.  Entries are per CPU (the meta CPU
 * included), so their number is bounded by the CPUs. */
static void note_unsynced(struct fr_store_writer *w, const struct op *op)
{
	struct unsynced *u = NULL;

	for (size_t i = 0; i < w->n_unsynced; i++)
		if (w->unsynced[i].cpu == op->cpu)
			u = &w->unsynced[i];
	if (!u) {
		if (w->n_unsynced == w->cap_unsynced) {
			size_t cap = w->cap_unsynced ? 2 * w->cap_unsynced : 16;
			struct unsynced *v = reallocarray(w->unsynced, cap, sizeof(*v));
			if (!v)
				return; /* not counted if its sync fails: ENOMEM */
			w->unsynced = v;
			w->cap_unsynced = cap;
		}
		u = &w->unsynced[w->n_unsynced++];
		*u = (struct unsynced){ .cpu = op->cpu };
	}
	u->chunks++;
	u->nrecords += op->nrecords;
	u->gap_lost += op->gap_lost;
}

static void sync_done(struct fr_store_writer *w, int res)
{
	if (res < 0) {
		w->st.syncs_failed++;
		for (size_t i = 0; i < w->n_unsynced; i++) {
			const struct unsynced *u = &w->unsynced[i];
			count_loss(w, u->cpu, u->chunks, u->nrecords, u->gap_lost, res);
		}
		w->st.last_error = res;
	} else {
		w->st.syncs++;
	}
	w->n_unsynced = 0;
}

static int queue_op(struct fr_store_writer *w, struct op *op)
{
	struct io_uring_sqe *sqe = get_sqe(w);

	if (!sqe)
		return -EBUSY;
	if (op->kind == OP_WRITE) {
		/* first queued: its bytes are final (seqnum, header crc) */
		if (op->done == 0 && w->chunk_cb)
			w->chunk_cb(op->buf, op->len, w->chunk_userdata);
		io_uring_prep_write(sqe, op->fd, op->buf + op->done, (unsigned)(op->len - op->done),
				    op->off + op->done);
		w->writes_inflight++;
	} else {
		io_uring_prep_fsync(sqe, op->fd, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_IO_DRAIN;
	}
	io_uring_sqe_set_data(sqe, op);
	w->inflight++;
	return 0;
}

static void complete(struct fr_store_writer *w, struct op *op, int res)
{
	w->inflight--;
	if (op->kind == OP_WRITE)
		w->writes_inflight--;
	if (op->kind == OP_SYNC) {
		/* IOSQE_IO_DRAIN: every write queued before it has completed,
		 * and none queued after it has */
		sync_done(w, res);
		close_later(w, op->fd);
		op_free(op);
		return;
	}
	if (res < 0) {
		report_loss(w, op, res);
		close_later(w, op->fd);
		op_free(op);
		return;
	}
	op->done += (size_t)res;
	if (op->done == op->len && op->kf_wall && op->seg_seq == w->cur_seq)
		w->cur_kf_wall = MAX(w->cur_kf_wall, op->kf_wall);
	if (res > 0 && op->done < op->len) {
		/* short write: resubmit the rest */
		if (queue_op(w, op) == 0) {
			io_uring_submit(&w->ring);
			return;
		}
		res = -EIO;
	}
	if (op->done < op->len) {
		report_loss(w, op, res == 0 ? -EIO : res);
	} else {
		w->st.bytes_written += op->len;
		w->st.chunks_written++;
		note_unsynced(w, op);
	}
	close_later(w, op->fd);
	op_free(op);
}

static void advance(struct fr_store_writer *w);

int fr_store_writer_process(struct fr_store_writer *w)
{
	struct io_uring_cqe *cqe;
	eventfd_t v;

	/* the eventfd is only a hint; the CQ is the truth */
	(void)eventfd_read(w->event_fd, &v);
	while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
		void *data = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&w->ring, cqe);
		if (data == &close_tag)
			w->closes_inflight--;
		else
			complete(w, data, res);
	}
	/* room in flight, or the segment before synced: held chunks move */
	advance(w);
	return 0;
}

static bool rotation_joined(struct fr_store_writer *w, bool block);

static int wait_one(struct fr_store_writer *w)
{
	struct io_uring_cqe *cqe;
	int r;

	/* a rotation's files are the one thing held chunks wait for that is
	 * not in flight (advance() starts it when nothing is) */
	if (w->rot.joinable) {
		(void)rotation_joined(w, true);
		return fr_store_writer_process(w);
	}
	io_uring_submit(&w->ring);
	r = io_uring_wait_cqe(&w->ring, &cqe);
	if (r < 0)
		return r;
	return fr_store_writer_process(w);
}

/* Reaps completions until no chunk is held and *counter (one of the
 * in-flight counts, which the completions decrement) is zero.  Held
 * chunks always wait for something in flight or for a rotation's thread
 * (advance()), so there is always something to wait for. */
static int wait_until_zero(struct fr_store_writer *w, const unsigned *counter)
{
	for (;;) {
		int r;

		advance(w);
		if (!w->held && *counter == 0)
			return 0;
		r = wait_one(w);
		if (r < 0 && r != -EINTR)
			return r;
	}
}

int fr_store_writer_drain(struct fr_store_writer *w)
{
	return wait_until_zero(w, &w->inflight);
}

void fr_store_writer_set_chunk_cb(struct fr_store_writer *w, fr_store_chunk_cb cb, void *userdata)
{
	w->chunk_cb = cb;
	w->chunk_userdata = userdata;
}

int fr_store_writer_wait_written(struct fr_store_writer *w)
{
	return wait_until_zero(w, &w->writes_inflight);
}

static int enforce_bound(struct fr_store_writer *w, int skip_slot, uint64_t reserve, unsigned *trimmed);

/* When the oldest segment but @skip was started (wall ns): no chunk of the
 * store is older.  0 when none is readable. */
static uint64_t oldest_created(struct fr_store_writer *w, uint32_t skip)
{
	uint64_t oldest = 0;

	for (uint32_t i = 0; i < w->nseg; i++) {
		_cleanup_close_ int fd = i == skip ? -EBADF : open_slot(w, i, O_RDONLY);
		uint64_t created;

		if (fd >= 0 && fr_store_segment_header_read_all(fd, NULL, NULL, &created) == 0 && created &&
		    (!oldest || created < oldest))
			oldest = created;
	}
	return oldest;
}

/* The next slot's files, made ready as @rot says: the oldest segment is
 * emptied and restarted with the new sequence number.  Runs on the
 * rotation's thread: it reads only what stays fixed while chunks are
 * held for it (the slots, the bound, the current slot) and writes only
 * @rot. */
static int rotation_files(struct fr_store_writer *w, struct rotation *rot)
{
	_cleanup_close_ int fd = -EBADF;
	uint64_t oldest;
	int r;

	fd = open_slot(w, rot->next, O_RDWR | O_CREAT);
	if (fd < 0)
		return negative_errno();
	if (ftruncate(fd, 0) < 0)
		return negative_errno();
	r = enforce_bound(w, (int)rot->next, w->seg_size, &rot->trimmed);
	if (r < 0)
		return r;
	oldest = oldest_created(w, rot->next);
	fr_ksyms_prune(w->dir_fd, oldest);
	fr_boot_host_prune(w->dir_fd, oldest);
	/* the store holds command lines: not for every user, whatever the umask */
	if (fchmod(fd, 0640) < 0)
		return negative_errno();
	r = fr_store_segment_header_write(fd, rot->seq, w->seg_size, &rot->prev);
	if (r < 0)
		return r;
	rot->fd = TAKE_FD(fd);
	return 0;
}

static void *rotation_run(void *userdata)
{
	struct fr_store_writer *w = userdata;

	w->rot.r = rotation_files(w, &w->rot);
	atomic_store(&w->rot.done, true);
	/* the loop's wakeup: fr_store_writer_process() moves on */
	(void)eventfd_write(w->event_fd, 1);
	return NULL;
}

/* Starts moving to the next slot.  The finished segment is durable
 * before its successor exists: advance() calls this once the segment's
 * sync, and every write to it, completed. */
static void rotation_start(struct fr_store_writer *w)
{
	struct rotation *rot = &w->rot;

	*rot = (struct rotation){
		.started = true,
		.next = (w->cur + 1) % w->nseg,
		.seq = w->cur_seq + 1,
		/* every write to it has completed: what it holds is known */
		.prev = {
			.known = w->cur_fd >= 0,
			.last_wall = w->cur_last_wall,
			.keyframe_wall = w->cur_kf_wall,
		},
		.fd = -EBADF,
	};
	atomic_init(&rot->done, false);
	if (pthread_create(&rot->thread, NULL, rotation_run, w) == 0) {
		rot->joinable = true;
		return;
	}
	/* no thread (the tasks limit): in the caller's loop, as before */
	rot->r = rotation_files(w, rot);
	atomic_store(&rot->done, true);
}

/* Whether the rotation's file operations ended (waiting for them if
 * @block). */
static bool rotation_joined(struct fr_store_writer *w, bool block)
{
	struct rotation *rot = &w->rot;

	if (rot->joinable) {
		if (!block && !atomic_load(&rot->done))
			return false;
		(void)pthread_join(rot->thread, NULL);
		rot->joinable = false;
	}
	return true;
}

/* The ended rotation's result: the writer moves to the new segment. */
static int rotation_finish(struct fr_store_writer *w)
{
	struct rotation *rot = &w->rot;

	rot->started = false;
	w->st.segments_trimmed += rot->trimmed;
	if (rot->r < 0)
		return rot->r;
	close_later(w, TAKE_FD(w->cur_fd));
	w->cur_fd = TAKE_FD(rot->fd);
	w->cur = rot->next;
	w->cur_seq = rot->seq;
	w->cur_off = sizeof(struct fr_segment_header);
	w->cur_chunks = 0;
	w->cur_last_wall = w->cur_kf_wall = 0;
	return 0;
}

/* A chunk about to be written to the current segment: raises *@last_wall
 * to its last record's wall time (as readers reckon it, wrapping
 * included); a keyframe chunk's first record's time goes to *@kf_wall. */
static void note_chunk(const struct fr_chunk_header *h, uint64_t *last_wall, uint64_t *kf_wall)
{
	uint64_t off = le64toh((uint64_t)h->realtime_offset);

	*last_wall = MAX(*last_wall, le64toh(h->last_ts) + off);
	if (le32toh(h->cpu) == FR_CPU_META)
		*kf_wall = le64toh(h->first_ts) + off;
}

/* Queues the write of held chunk @op at the end of the current segment;
 * on failure its loss is counted. */
static void place(struct fr_store_writer *w, struct op *op)
{
	struct fr_chunk_header *h = (struct fr_chunk_header *)op->buf;
	int r;

	/* chunk seqnum: segment seqnum, then position in the segment */
	h->seqnum = htole64((w->cur_seq << 32) | w->cur_chunks);
	op->seg_seq = w->cur_seq;
	note_chunk(h, &w->cur_last_wall, &op->kf_wall);
	h->header_crc = htole32(fr_crc32(h, offsetof(struct fr_chunk_header, header_crc)));
	op->fd = fcntl(w->cur_fd, F_DUPFD_CLOEXEC, 3);
	op->off = w->cur_off;
	r = op->fd < 0 ? negative_errno() : queue_op(w, op);
	if (r < 0) {
		report_loss(w, op, r);
		if (op->fd >= 0)
			close(op->fd);
		op_free(op);
		return;
	}
	w->cur_off += op->len;
	w->cur_chunks++;
}

/* A sync of what is queued on the current segment (none without one). */
static int queue_sync(struct fr_store_writer *w)
{
	struct op *op;
	int r;

	if (w->cur_fd < 0)
		return 0;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->kind = OP_SYNC;
	/* Each op holds its own fd, so rotation can close the segment while
	 * writes and syncs on it are still in flight. */
	op->fd = fcntl(w->cur_fd, F_DUPFD_CLOEXEC, 3);
	if (op->fd < 0) {
		free(op);
		return negative_errno();
	}
	r = queue_op(w, op);
	if (r < 0) {
		close(op->fd);
		free(op);
	}
	return r;
}

/* Queues the held chunks, in order, as far as it can without waiting: a
 * chunk that needs a new segment waits for the current one's sync and
 * for all I/O on it, any chunk for room in flight.  Called after appends
 * and completions; nothing else moves them. */
static void advance(struct fr_store_writer *w)
{
	struct op *op;
	int r;

	while ((op = w->held)) {
		if (w->cur_off + op->len > w->seg_size || w->cur_fd < 0) {
			if (!w->rotating) {
				r = queue_sync(w);
				if (r < 0)
					goto lost;
				w->rotating = true;
				(void)io_uring_submit(&w->ring);
			}
			if (w->inflight > 0)
				return;
			if (!w->rot.started)
				rotation_start(w);
			if (!rotation_joined(w, false))
				return; /* its thread wakes the loop */
			w->rotating = false;
			r = rotation_finish(w);
			if (r < 0)
				goto lost;
		}
		if (w->inflight >= INFLIGHT_MAX)
			return;
		w->held = op->next;
		w->held_bytes -= op->len;
		w->held_chunks--;
		op->next = NULL;
		place(w, op);
		continue;
	lost:
		/* as before it was held: this chunk is lost, counted; the
		 * next tries again */
		w->held = op->next;
		w->held_bytes -= op->len;
		w->held_chunks--;
		report_loss(w, op, r);
		op_free(op);
	}
	w->held_tail = &w->held;
	if (w->sync_wanted) {
		w->sync_wanted = false;
		(void)queue_sync(w);
	}
	(void)io_uring_submit(&w->ring);
}

int fr_store_writer_append(struct fr_store_writer *w, void *buf, size_t len)
{
	struct fr_chunk_header *h;
	struct op *op;
	void *fit;
	int r;

	/* a chunk's buffer is sized for the worst case (zstd's bound), and
	 * it is held or in flight for a while: only what is written stays */
	fit = realloc(buf, len);
	if (fit)
		buf = fit;
	h = buf;
	op = calloc(1, sizeof(*op));
	if (!op) {
		/* the chunk is lost like one the disk refused: counted, and
		 * its gaps' counts reported again */
		count_loss(w, le32toh(h->cpu), 1, le32toh(h->nevents), le64toh(h->gap_lost), -ENOMEM);
		free(buf);
		return -ENOMEM;
	}
	op->kind = OP_WRITE;
	op->buf = buf;
	op->len = len;
	op->fd = -EBADF;
	op->cpu = le32toh(h->cpu);
	/* gaps and metadata are not counted as lost: only events are */
	op->nrecords = le32toh(h->nevents);
	op->gap_lost = le64toh(h->gap_lost);

	r = -EFBIG;
	if (len + sizeof(struct fr_segment_header) > w->seg_size)
		goto fail;
	/* past the bound, back-pressure: wait for the disk, as the rings
	 * then fill and BPF counts what they drop (held chunks always have
	 * I/O in flight to wait for: advance()) */
	while (w->held && w->held_bytes + len > HELD_BYTES_MAX) {
		r = wait_one(w);
		if (r < 0 && r != -EINTR)
			goto fail;
	}
	*w->held_tail = op;
	w->held_tail = &op->next;
	w->held_bytes += len;
	w->held_chunks++;
	advance(w);
	return 0;
fail:
	report_loss(w, op, r);
	op_free(op);
	return r;
}

int fr_store_writer_sync(struct fr_store_writer *w)
{
	int r;

	/* after the chunks held, which it must cover too */
	if (w->held) {
		w->sync_wanted = true;
		return 0;
	}
	r = queue_sync(w);
	if (r < 0)
		return r;
	return fr_store_writer_submit(w);
}

int fr_store_writer_submit(struct fr_store_writer *w)
{
	int r = io_uring_submit(&w->ring);
	return r < 0 ? r : 0;
}

int fr_store_writer_dir_fd(const struct fr_store_writer *w)
{
	return w->dir_fd;
}

int fr_store_writer_fd(struct fr_store_writer *w)
{
	return w->event_fd;
}

void fr_store_writer_get_stats(struct fr_store_writer *w, struct fr_store_writer_stats *ret)
{
	*ret = w->st;
	ret->inflight = w->inflight;
	ret->closes_inflight = w->closes_inflight;
	ret->held_chunks = w->held_chunks;
	ret->held_bytes = w->held_bytes;
}

uint64_t fr_store_writer_segment_size(struct fr_store_writer *w)
{
	return w->seg_size;
}

uint64_t fr_store_writer_size_bound(const struct fr_store_writer *w, uint64_t *ret_fs)
{
	if (ret_fs)
		*ret_fs = w->fs_size;
	return w->size_bound;
}

struct recover_ctx {
	int fd;
	uint64_t end;        /* end of the last chunk whose payload verifies */
	uint32_t next_index; /* index after that chunk's, for seqnums */
	uint64_t last_wall;  /* of every chunk with a valid header (cut or not) */
	uint64_t kf_wall;    /* of keyframe chunks up to end */
};

static int recover_cb(uint64_t offset, const struct fr_chunk_info *ci, void *userdata)
{
	struct recover_ctx *rc = userdata;
	_cleanup_free_ uint8_t *p = malloc(ci->payload_size);
	uint64_t kf = 0;
	ssize_t n;

	if (!p)
		return -ENOMEM;
	/* an upper bound may count chunks that are cut below; a keyframe
	 * only counts if it stays */
	rc->last_wall = MAX(rc->last_wall, ci->last_ts + (uint64_t)ci->realtime_offset);
	if (ci->cpu == FR_CPU_META)
		kf = ci->first_ts + (uint64_t)ci->realtime_offset;
	n = pread(rc->fd, p, ci->payload_size, (off_t)(offset + sizeof(struct fr_chunk_header)));
	if (n != (ssize_t)ci->payload_size || fr_crc32(p, ci->payload_size) != ci->payload_crc)
		return 0; /* damaged: a later valid chunk may still follow */
	rc->end = offset + fr_chunk_disk_size(ci);
	rc->next_index = (uint32_t)(ci->seqnum & 0xffffffffu) + 1;
	rc->kf_wall = MAX(rc->kf_wall, kf);
	return 0;
}

/* Keeps the segments within the bound: while the other segments plus
 * @reserve bytes (room for the one about to be filled) exceed it, the
 * oldest segment goes.  Normally a no-op; it matters after store.size or
 * store.segments were made smaller, when segments written under the old
 * sizes remain.  Counts what it empties in segments_trimmed. */
static int enforce_bound(struct fr_store_writer *w, int skip_slot, uint64_t reserve, unsigned *trimmed)
{
	/* kernel symbol snapshots and boots' hosts live beside the segments,
	 * inside the bound */
	uint64_t extra = fr_ksyms_disk_usage(w->dir_fd) + fr_boot_host_disk_usage(w->dir_fd);

	for (;;) {
		uint64_t sum = reserve + extra, oldest_seq = UINT64_MAX;
		int oldest = -1;

		for (uint32_t i = 0; i < w->nseg; i++) {
			_cleanup_close_ int fd = -EBADF;
			struct stat sb;
			uint64_t seq;

			if ((int)i == skip_slot)
				continue;
			fd = open_slot(w, i, O_RDONLY);
			if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size == 0)
				continue;
			sum += (uint64_t)sb.st_blocks * 512; /* what du counts */
			if ((int)i == (int)w->cur && w->cur_fd >= 0)
				continue; /* never the segment being written */
			if (fr_store_segment_header_read(fd, &seq, NULL) < 0)
				seq = 0; /* unreadable: the first to go */
			if (seq < oldest_seq) {
				oldest_seq = seq;
				oldest = (int)i;
			}
		}
		if (sum <= w->size_bound || oldest < 0)
			return 0;
		_cleanup_close_ int fd = open_slot(w, (uint32_t)oldest, O_RDWR);
		if (fd < 0 || ftruncate(fd, 0) < 0)
			return negative_errno();
		(*trimmed)++;
	}
}

/* Finds the newest segment and the end of its last valid chunk, and cuts
 * what follows (a torn tail).  Valid chunks after a damaged one are kept:
 * io_uring may complete writes out of order before a crash. */
static int recover(struct fr_store_writer *w)
{
	uint64_t best_seq = 0;
	int best = -1, k;

	for (uint32_t i = 0; i < w->nseg; i++) {
		_cleanup_close_ int fd = open_slot(w, i, O_RDONLY);
		uint64_t seq;

		if (fd < 0)
			continue;
		k = fr_store_segment_header_read(fd, &seq, NULL);
		/* never overwrite what a newer flightrecd wrote */
		if (k == -EPROTONOSUPPORT)
			return k;
		if (k < 0)
			continue;
		if (best < 0 || seq > best_seq) {
			best = (int)i;
			best_seq = seq;
		}
	}
	if (best < 0) {
		/* a new store: start in slot 0 with seqnum 1 */
		w->cur = w->nseg - 1;
		w->cur_seq = 0;
		w->cur_fd = -EBADF;
		return 0;
	}

	_cleanup_close_ int fd = open_slot(w, (uint32_t)best, O_RDWR);
	struct recover_ctx rc = { .fd = -EBADF, .end = sizeof(struct fr_segment_header) };
	struct fr_segment_walk_stats st = {};
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0)
		return negative_errno();
	rc.fd = fd;
	/* the whole file: one written under a larger store.size ends at its
	 * last chunk too, and the next append moves on to the next slot */
	k = fr_segment_walk(fd, sizeof(struct fr_segment_header), (uint64_t)sb.st_size, recover_cb, &rc, &st);
	if (k < 0)
		return k;
	/* chunks of a format or flag this writer does not know: a newer
	 * flightrecd wrote here (and this one was rolled back).  Cutting them
	 * as a torn tail would lose them: refuse, as for a newer segment. */
	if (st.unsupported)
		return -EPROTONOSUPPORT;
	uint64_t end = rc.end;
	uint32_t chunks = rc.next_index;
	if (ftruncate(fd, (off_t)end) < 0)
		return negative_errno();
	w->cur = (uint32_t)best;
	w->cur_seq = best_seq;
	w->cur_off = end;
	w->cur_chunks = chunks;
	w->cur_last_wall = rc.last_wall;
	w->cur_kf_wall = rc.kf_wall;
	w->cur_fd = TAKE_FD(fd);
	return 0;
}

static int close_to_others(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if ((st.st_mode & S_IRWXO) && fchmod(fd, st.st_mode & 07770) < 0)
		return negative_errno();
	return 0;
}

int fr_store_writer_open(const char *dir, const struct fr_store_params *p,
			 fr_store_loss_cb loss_cb, void *userdata, struct fr_store_writer **ret)
{
	struct fr_store_writer *w;
	int r;

	if (p->nsegments < 2 || p->nsegments > FR_STORE_SEGMENTS_MAX)
		return -EINVAL;
	if (p->size && p->size / p->nsegments < sizeof(struct fr_segment_header) + 2 * p->max_chunk)
		return -EINVAL;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->dir_fd = w->seg_dir_fd = w->cur_fd = w->event_fd = -EBADF;
	w->nseg = p->nsegments;
	w->max_chunk = p->max_chunk;
	w->size_bound = p->size;
	w->loss_cb = loss_cb;
	w->userdata = userdata;
	w->held_tail = &w->held;
	w->rot.fd = -EBADF;

	r = fr_store_create_dirs(dir);
	if (r < 0)
		goto fail;
	w->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->dir_fd < 0) {
		r = negative_errno();
		goto fail;
	}
	if (flock(w->dir_fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : negative_errno();
		goto fail;
	}
	if (w->size_bound == 0) {
		r = fr_store_auto_size(w->dir_fd, w->nseg, w->max_chunk, &w->size_bound, &w->fs_size);
		if (r < 0)
			goto fail;
	}
	/* whole pages, so du matches what we count */
	w->seg_size = (w->size_bound / w->nseg) & ~(uint64_t)4095;
	w->seg_dir_fd = openat(w->dir_fd, FR_STORE_SEGMENT_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->seg_dir_fd < 0) {
		r = negative_errno();
		goto fail;
	}
	/* the store holds every user's command lines: a directory made
	 * beforehand (mkdir, an old version, a umask of 0) loses what it gives
	 * other users; what it gives its group is the administrator's choice */
	r = close_to_others(w->dir_fd);
	if (r == 0)
		r = close_to_others(w->seg_dir_fd);
	if (r < 0)
		goto fail;
	/* slots beyond a shrunk ring would break the disk bound */
	for (uint32_t i = w->nseg; i < FR_STORE_SEGMENTS_MAX; i++) {
		char name[32];
		fr_store_segment_name(i, name, sizeof(name));
		if (unlinkat(w->seg_dir_fd, name, 0) == 0)
			w->st.segments_removed++;
	}
	r = recover(w);
	if (r < 0)
		goto fail;
	/* the segment written next grows to seg_size before the next
	 * rotation looks again: room for all of it (counted at what it holds
	 * now, it grew past the bound after store.size was made smaller:
	 * 96 KiB over 512 in test-store, 2 runs in 100) */
	r = enforce_bound(w, w->cur_fd >= 0 ? (int)w->cur : -1, w->seg_size, &w->st.segments_trimmed);
	if (r < 0)
		goto fail;
	r = io_uring_queue_init(RING_ENTRIES, &w->ring, 0);
	if (r < 0)
		goto fail;
	w->ring_ok = true;
	w->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->event_fd < 0) {
		r = negative_errno();
		goto fail;
	}
	r = io_uring_register_eventfd(&w->ring, w->event_fd);
	if (r < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	fr_store_writer_close(w);
	return r;
}

struct fr_store_writer *fr_store_writer_close(struct fr_store_writer *w)
{
	if (!w)
		return NULL;
	if (w->ring_ok) {
		(void)fr_store_writer_sync(w);
		(void)fr_store_writer_drain(w);
		/* and the fds the completions closed on the ring */
		(void)wait_until_zero(w, &w->closes_inflight);
		io_uring_queue_exit(&w->ring);
	}
	/* a rotation the drain did not see end (it failed) */
	(void)rotation_joined(w, true);
	closep(&w->rot.fd);
	/* held still (the drain failed): lost, counted */
	while (w->held) {
		struct op *op = w->held;
		w->held = op->next;
		report_loss(w, op, -EIO);
		op_free(op);
	}
	closep(&w->event_fd);
	closep(&w->cur_fd);
	closep(&w->seg_dir_fd);
	closep(&w->dir_fd); /* releases the lock */
	free(w->unsynced);
	free(w);
	return NULL;
}
