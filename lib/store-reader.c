/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reader opens every segment, orders them by sequence number and walks
 * chunk headers.  A header that does not verify ends that segment's walk:
 * it is the torn tail of a crash or a segment being written right now.
 * A follower reads the directory again from time to time (segments are
 * reused in place, under a new seqnum) and walks on from its cursor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "clock.h"
#include "incident-header.h"
#include "macro.h"
#include "segment-walk.h"
#include "boot-host.h"
#include "ksyms.h"
#include "store-reader.h"
#include "store.h"

struct segment {
	int fd;
	uint64_t seqnum;
	uint64_t size;  /* file size when opened */
	uint64_t start; /* first chunk: after the segment or incident header */
	uint64_t regions_damaged; /* found by the last walk of this segment */
	dev_t dev;      /* the file, to know it again when refreshing */
	ino_t ino;
	struct fr_segment_prev prev; /* its header's, of seqnum - 1 */
	struct fr_segment_prev summary; /* of itself, from the next one's */
};

struct fr_store_reader {
	struct segment *segs;
	size_t nsegs;
	ZSTD_DCtx *dctx;
	struct fr_store_reader_stats st;
	int dir_fd; /* the store directory; -EBADF for an incident file */
	void *buf;  /* following: a payload being checked */
	size_t cap;
};

static int cmp_seg(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;
	return x->seqnum < y->seqnum ? -1 : x->seqnum > y->seqnum;
}

int fr_store_reader_open_incident(const char *path, struct fr_store_reader **ret, char **ret_meta)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *meta = NULL;
	struct fr_store_reader *r;
	struct stat st;
	uint64_t start, size, length;
	int k;

	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	k = fr_incident_read_header(fd, &meta, &start);
	if (k < 0)
		return k;
	size = (uint64_t)st.st_size;
	/* sealed: the incident is its first length bytes (a file recovered
	 * from the spare may go on with zeros); a file shorter than that
	 * was cut */
	k = fr_incident_read_length(fd, &length);
	if (k < 0)
		return k;
	if (k > 0) {
		if (length < start)
			return -EBADMSG;
		if (length > size)
			return -ENODATA;
		size = length;
	}
	r = calloc(1, sizeof(*r));
	if (r)
		r->dir_fd = -EBADF;
	if (!r || !(r->segs = calloc(1, sizeof(*r->segs))) || !(r->dctx = ZSTD_createDCtx())) {
		fr_store_reader_free(r);
		return -ENOMEM;
	}
	r->segs[0] = (struct segment){ .fd = TAKE_FD(fd), .size = size, .start = start };
	r->nsegs = 1;
	r->st.segments = 1;
	r->st.bytes_on_disk = (uint64_t)st.st_size;
	*ret_meta = TAKE_PTR(meta);
	*ret = r;
	return 0;
}

/* Reads the segments directory: every segment file whose header verifies,
 * ordered by sequence number.  A file already open (the same inode) keeps
 * its descriptor, but its header and size are read again: the writer
 * reuses a segment file in place, under a new sequence number. */
static int scan_segments(struct fr_store_reader *r)
{
	struct segment *segs = NULL;
	size_t nsegs = 0;
	uint64_t unsupported = 0, bytes = 0;
	struct dirent *de;
	DIR *d;
	int fd, k = 0;

	fd = openat(r->dir_fd, FR_STORE_SEGMENT_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOMEDIUM : negative_errno();
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		struct segment s = { .fd = -EBADF };
		struct stat st;
		size_t l = strlen(de->d_name);

		if (l < 5 || strcmp(de->d_name + l - 4, ".frs") != 0)
			continue;
		/* refreshing: the file open already, if it is the same one */
		if (r->nsegs && fstatat(dirfd(d), de->d_name, &st, 0) == 0)
			for (size_t i = 0; i < r->nsegs; i++)
				if (r->segs[i].fd >= 0 && r->segs[i].dev == st.st_dev && r->segs[i].ino == st.st_ino) {
					s.fd = TAKE_FD(r->segs[i].fd);
					break;
				}
		if (s.fd < 0) {
			s.fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
			if (s.fd < 0)
				continue;
			/* headers are read far apart: readahead would read the
			 * payloads a time-window query means to skip */
			(void)posix_fadvise(s.fd, 0, 0, POSIX_FADV_RANDOM);
			if (fstat(s.fd, &st) < 0) {
				close(s.fd);
				continue;
			}
		}
		if (!S_ISREG(st.st_mode)) {
			close(s.fd);
			continue;
		}
		k = fr_store_segment_header_read(s.fd, &s.seqnum, &s.prev);
		if (k < 0 && k != -EPROTONOSUPPORT && k != -EBADMSG) {
			/* the disk failed the read (EIO): the store cannot be
			 * read whole, and a reader must not pass it off as an
			 * empty segment */
			close(s.fd);
			break;
		}
		if (k < 0) {
			if (k == -EPROTONOSUPPORT)
				unsupported++;
			close(s.fd);
			k = 0;
			continue;
		}
		r->st.bytes_read += sizeof(struct fr_segment_header);
		s.size = (uint64_t)st.st_size;
		s.start = sizeof(struct fr_segment_header);
		s.dev = st.st_dev;
		s.ino = st.st_ino;
		struct segment *n = realloc(segs, (nsegs + 1) * sizeof(*n));
		if (!n) {
			close(s.fd);
			k = -ENOMEM;
			break;
		}
		segs = n;
		segs[nsegs++] = s;
		bytes += s.size;
	}
	closedir(d);
	/* the files gone (or replaced) since the last scan, or all of them
	 * on failure */
	for (size_t i = 0; i < r->nsegs; i++)
		closep(&r->segs[i].fd);
	free(r->segs);
	r->segs = segs;
	r->nsegs = nsegs;
	if (k < 0) {
		for (size_t i = 0; i < r->nsegs; i++)
			closep(&r->segs[i].fd);
		r->nsegs = 0;
		return k;
	}
	if (r->nsegs > 1)
		qsort(r->segs, r->nsegs, sizeof(*r->segs), cmp_seg);
	for (size_t i = 0; i + 1 < r->nsegs; i++)
		if (r->segs[i + 1].seqnum == r->segs[i].seqnum + 1)
			r->segs[i].summary = r->segs[i + 1].prev;
	r->st.segments = r->nsegs;
	r->st.segments_unsupported = unsupported;
	r->st.bytes_on_disk = bytes + fr_ksyms_disk_usage(r->dir_fd) + fr_boot_host_disk_usage(r->dir_fd);
	return 0;
}

int fr_store_reader_open(const char *dir, struct fr_store_reader **ret)
{
	_cleanup_close_ int dfd = -EBADF;
	struct fr_store_reader *r;
	int k;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return negative_errno();
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->dir_fd = TAKE_FD(dfd);
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		fr_store_reader_free(r);
		return -ENOMEM;
	}
	k = scan_segments(r);
	if (k < 0) {
		fr_store_reader_free(r);
		return k;
	}
	*ret = r;
	return 0;
}

int fr_store_reader_refresh(struct fr_store_reader *r)
{
	if (r->dir_fd < 0)
		return -EBADF; /* an incident file does not grow */
	return scan_segments(r);
}

int fr_store_reader_dir_fd(const struct fr_store_reader *r)
{
	return r->dir_fd;
}

struct fr_store_reader *fr_store_reader_free(struct fr_store_reader *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < r->nsegs; i++)
		close(r->segs[i].fd);
	free(r->segs);
	closep(&r->dir_fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->buf);
	free(r);
	return NULL;
}

struct walk_ctx {
	uint32_t segment;
	fr_chunk_cb cb;
	void *userdata;
	/* the newest segment of a store being written; the walk's counts
	 * and whether it stopped at bytes not written yet */
	bool newest;
	uint64_t now_wall;
	const struct fr_segment_walk_stats *st;
	uint64_t resumed; /* st->resumed at the last chunk */
	bool in_flight;
};

/* How long bytes of the newest segment that do not verify, with valid
 * chunks after them, are taken for writes in flight (io_uring completes
 * writes in any order; each completes within milliseconds, but the disk
 * may stall); after that they are damage (a write that failed, such as
 * on ENOSPC). */
#define BLOCKED_MAX_NS (10 * 1000000000ULL)

static int walk_cb(uint64_t offset, const struct fr_chunk_info *ci, void *userdata)
{
	struct walk_ctx *w = userdata;
	struct fr_chunk_ref ref = { .segment = w->segment, .offset = offset, .info = *ci };

	if (w->newest) {
		/* bytes that did not verify just before a chunk of the
		 * last seconds: a write still in flight, not damage; the
		 * store is read as it was before them (as a reader a moment
		 * earlier would have) */
		if (w->st->resumed != w->resumed &&
		    ci->last_ts + (uint64_t)ci->realtime_offset + BLOCKED_MAX_NS > w->now_wall) {
			w->in_flight = true;
			return 1;
		}
		w->resumed = w->st->resumed;
	}
	return w->cb(&ref, w->userdata);
}

/* The newest keyframe time known to end before @since: every keyframe
 * chunk of a segment all of whose records are earlier qualifies. */
static uint64_t keyframe_floor(const struct fr_store_reader *r, uint64_t since)
{
	uint64_t floor = 0;

	for (size_t i = 0; i < r->nsegs; i++) {
		const struct fr_segment_prev *p = &r->segs[i].summary;

		if (p->known && p->last_wall < since)
			floor = MAX(floor, p->keyframe_wall);
	}
	return floor;
}

int fr_store_reader_foreach_since(struct fr_store_reader *r, uint64_t since, fr_chunk_cb cb, void *userdata)
{
	uint64_t floor = since ? keyframe_floor(r, since) : 0, now_wall = fr_now_ns(CLOCK_REALTIME);

	r->st.segments_skipped = 0;
	for (size_t i = 0; i < r->nsegs; i++) {
		struct fr_segment_walk_stats st = {};
		/* (an incident file has no writer: what does not verify in
		 * it is damage) */
		struct walk_ctx w = { .segment = (uint32_t)i, .cb = cb, .userdata = userdata,
				      .newest = r->dir_fd >= 0 && i + 1 == r->nsegs, .now_wall = now_wall, .st = &st };
		int k;

		if (r->segs[i].summary.known && r->segs[i].summary.last_wall < floor) {
			r->st.segments_skipped++;
			continue;
		}
		k = fr_segment_walk(r->segs[i].fd, r->segs[i].start, r->segs[i].size, walk_cb, &w, &st);
		if (w.in_flight) {
			/* the region the walk stopped at is not damage (the
			 * walk counted it as damaged, then resumed) */
			st.damaged--;
			st.resumed--;
			k = 0;
		}

		r->st.bytes_read += st.bytes_read;
		r->st.chunks_damaged += st.damaged;
		r->st.chunks_unsupported += st.unsupported;
		/* set, not added: a second walk finds the same regions */
		r->segs[i].regions_damaged = st.resumed;
		if (k != 0)
			return k;
	}
	return 0;
}

void fr_store_reader_cursor_since(struct fr_store_reader *r, uint64_t since, struct fr_store_cursor *ret)
{
	uint64_t floor = since ? keyframe_floor(r, since) : 0;

	*ret = (struct fr_store_cursor){};
	/* the first segment fr_store_reader_foreach_since() walks */
	for (size_t i = 0; i < r->nsegs; i++)
		if (!r->segs[i].summary.known || r->segs[i].summary.last_wall >= floor) {
			*ret = (struct fr_store_cursor){ .seqnum = r->segs[i].seqnum, .offset = r->segs[i].start };
			return;
		}
}

/* Reads and checks the payload of @ref, as fr_store_reader_read_chunk()
 * but into the reader's own buffer: 0, or -EBADMSG when it does not
 * verify (yet). */
static int check_payload(struct fr_store_reader *r, const struct fr_chunk_ref *ref)
{
	ssize_t n;

	if (r->cap < ref->info.payload_size) {
		void *p = realloc(r->buf, ref->info.payload_size);
		if (!p)
			return -ENOMEM;
		r->buf = p;
		r->cap = ref->info.payload_size;
	}
	n = pread(r->segs[ref->segment].fd, r->buf, ref->info.payload_size,
		  (off_t)(ref->offset + sizeof(struct fr_chunk_header)));
	if (n < 0)
		return negative_errno();
	r->st.bytes_read += (uint64_t)n;
	if ((size_t)n != ref->info.payload_size ||
	    fr_crc_mismatch(ref->info.payload_crc, fr_crc32(r->buf, ref->info.payload_size)))
		return -EBADMSG;
	return 0;
}

struct new_walk {
	struct fr_store_reader *r;
	/* the segment, and whether it is the newest (the one written to) */
	uint32_t segment;
	bool newest;
	struct fr_store_cursor *cur;
	uint64_t check_from_wall;
	fr_chunk_cb cb;
	void *userdata;
	struct fr_store_new_stats *st;
	uint64_t now; /* CLOCK_MONOTONIC */
	bool stopped; /* at what is not readable yet */
};

static int new_walk_cb(uint64_t offset, const struct fr_chunk_info *ci, void *userdata)
{
	struct new_walk *w = userdata;
	struct fr_store_cursor *cur = w->cur;
	const struct segment *seg = &w->r->segs[w->segment];
	struct fr_chunk_ref ref = { .segment = w->segment, .offset = offset, .info = *ci };
	uint64_t last = ci->last_ts + (uint64_t)ci->realtime_offset;
	int k;

	/* the segment part of the chunk's seqnum: the file was reused
	 * (truncated and restarted) while being read */
	if ((ci->seqnum >> 32) != (seg->seqnum & 0xffffffffu)) {
		w->stopped = true;
		return 1;
	}
	if (offset != cur->offset) {
		/* bytes before this chunk that do not verify (a region, or a
		 * chunk whose payload did not): damage in a segment the
		 * writer has left (it waits for every write to a segment
		 * before it starts the next); in the newest, maybe writes in
		 * flight, for a while */
		if (w->newest) {
			if (cur->blocked_offset != cur->offset) {
				cur->blocked_offset = cur->offset;
				cur->blocked_since = w->now;
			}
			if (w->now - cur->blocked_since < BLOCKED_MAX_NS) {
				w->stopped = true;
				return 1;
			}
		}
		w->st->regions_damaged++;
		cur->offset = offset;
	}
	/* in the newest segment, the chunks of the last moments may be
	 * written while read: their payloads are checked first (one that
	 * does not verify is not taken, and the walk goes on only to see
	 * whether valid chunks follow it) */
	if (w->newest && last >= w->check_from_wall) {
		k = check_payload(w->r, &ref);
		if (k == -EBADMSG)
			return 0;
		if (k < 0)
			return k;
	}
	k = w->cb(&ref, w->userdata);
	if (k != 0)
		return k; /* the caller's stop: it takes this chunk next time */
	cur->offset = offset + fr_chunk_disk_size(ci);
	cur->last_wall = MAX(cur->last_wall, last);
	cur->blocked_offset = 0;
	return 0;
}

/* Where the cursor is, after a refresh: its segment, or if that is gone
 * (reused before it was read to its end), the next one there is, with
 * what was lost counted.  -ENOENT: no segment yet. */
static int cursor_segment(struct fr_store_reader *r, struct fr_store_cursor *cur, struct fr_store_new_stats *st)
{
	size_t i;

	if (!r->nsegs)
		return -ENOENT;
	if (cur->seqnum == 0) {
		*cur = (struct fr_store_cursor){ .seqnum = r->segs[0].seqnum, .offset = r->segs[0].start };
		return 0;
	}
	for (i = 0; i < r->nsegs && r->segs[i].seqnum < cur->seqnum; i++)
		;
	if (i == r->nsegs) {
		/* every segment older than the cursor: a new store */
		st->store_reset = true;
		*cur = (struct fr_store_cursor){ .seqnum = r->segs[0].seqnum, .offset = r->segs[0].start };
		return 0;
	}
	if (r->segs[i].seqnum == cur->seqnum)
		return (int)i;
	/* the cursor's segment was reused: the segments between it and this
	 * one are lost, and its own rest unless everything in it was read
	 * (as far as its successor's header tells: none of it was later than
	 * what was read) */
	const struct fr_segment_prev *p = &r->segs[i].prev;
	uint64_t lost = r->segs[i].seqnum - cur->seqnum - 1;

	if (lost || !p->known || p->last_wall > cur->last_wall)
		lost++;
	if (lost) {
		st->segments_lost += lost;
		if (!st->lost_after_wall)
			st->lost_after_wall = cur->last_wall;
		st->lost_until_wall = p->known ? p->last_wall : 0;
	}
	cur->seqnum = r->segs[i].seqnum;
	cur->offset = r->segs[i].start;
	cur->blocked_offset = 0;
	return (int)i;
}

int fr_store_reader_foreach_new(struct fr_store_reader *r, struct fr_store_cursor *cur, uint64_t check_from_wall,
				fr_chunk_cb cb, void *userdata, struct fr_store_new_stats *st)
{
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);
	int i = cursor_segment(r, cur, st);

	if (i == -ENOENT)
		return 0;
	for (; i < (int)r->nsegs; i++) {
		struct new_walk w = { .r = r, .segment = (uint32_t)i, .newest = i + 1 == (int)r->nsegs, .cur = cur,
				      .check_from_wall = check_from_wall, .cb = cb, .userdata = userdata, .st = st,
				      .now = now };
		struct fr_segment_walk_stats ws = {};
		int k;

		if (r->segs[i].seqnum != cur->seqnum) {
			/* moving on: a gap in the sequence is segments gone */
			if (r->segs[i].seqnum > cur->seqnum + 1) {
				st->segments_lost += r->segs[i].seqnum - cur->seqnum - 1;
				if (!st->lost_after_wall)
					st->lost_after_wall = cur->last_wall;
				st->lost_until_wall = r->segs[i].prev.known ? r->segs[i].prev.last_wall : 0;
			}
			*cur = (struct fr_store_cursor){ .seqnum = r->segs[i].seqnum, .offset = r->segs[i].start,
							 .last_wall = cur->last_wall };
		}
		k = fr_segment_walk(r->segs[i].fd, cur->offset, r->segs[i].size, new_walk_cb, &w, &ws);
		r->st.bytes_read += ws.bytes_read;
		r->st.chunks_unsupported += ws.unsupported;
		if (w.stopped)
			return 0; /* the rest is not readable yet */
		if (k != 0)
			return k;
	}
	return 0;
}

/* *buf holds at least @need bytes (what it held kept). */
static int room(void **buf, size_t *cap, size_t need)
{
	void *p;

	if (*cap >= need)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

int fr_store_reader_read_payload(struct fr_store_reader *r, const struct fr_chunk_ref *ref, void **buf, size_t *cap)
{
	ssize_t n;

	if (ref->segment >= r->nsegs)
		return -EINVAL;
	if (room(buf, cap, ref->info.payload_size) < 0)
		return -ENOMEM;
	n = pread(r->segs[ref->segment].fd, *buf, ref->info.payload_size,
		  (off_t)(ref->offset + sizeof(struct fr_chunk_header)));
	if (n < 0)
		return negative_errno();
	/* the counters are shared by the threads that load */
	__atomic_fetch_add(&r->st.bytes_read, (uint64_t)n, __ATOMIC_RELAXED);
	/* the zstd frame says what it decompresses to: unless that is what
	 * the header says, nothing is sized from the header's counts */
	if ((size_t)n != ref->info.payload_size ||
	    ZSTD_getFrameContentSize(*buf, (size_t)n) != fr_chunk_content_size(&ref->info)) {
		__atomic_fetch_add(&r->st.chunks_damaged, 1, __ATOMIC_RELAXED);
		return -EBADMSG;
	}
	return 0;
}

int fr_store_reader_decode_payload(struct fr_store_reader *r, ZSTD_DCtx *dctx, const struct fr_chunk_ref *ref,
				   uint8_t *raw, void **buf, size_t *cap, struct fr_record_iter *it)
{
	int k;

	/* after the payload, room to decompress a chunk in columns */
	if (room(buf, cap, ref->info.payload_size + fr_chunk_content_size(&ref->info)) < 0)
		return -ENOMEM;
	k = fr_chunk_payload_decode(dctx ? dctx : r->dctx, &ref->info, *buf, raw,
				   (uint8_t *)*buf + ref->info.payload_size, it);
	if (k == -EBADMSG)
		__atomic_fetch_add(&r->st.chunks_damaged, 1, __ATOMIC_RELAXED);
	return k;
}

int fr_store_reader_load_into(struct fr_store_reader *r, ZSTD_DCtx *dctx, const struct fr_chunk_ref *ref, uint8_t *raw,
			      void **buf, size_t *cap, struct fr_record_iter *it)
{
	int k = fr_store_reader_read_payload(r, ref, buf, cap);

	return k < 0 ? k : fr_store_reader_decode_payload(r, dctx, ref, raw, buf, cap, it);
}

int fr_store_reader_load(struct fr_store_reader *r, ZSTD_DCtx *dctx, const struct fr_chunk_ref *ref, uint8_t *raw)
{
	_cleanup_free_ void *buf = NULL;
	struct fr_record_iter it;
	struct fr_record rec;
	size_t cap = 0, at;
	int k;

	k = fr_store_reader_load_into(r, dctx, ref, raw, &buf, &cap, &it);
	if (k < 0 || !it.columns)
		return k;
	/* all of it into rows */
	for (uint32_t i = 0; i < ref->info.nrecords; i++)
		if (fr_record_iter_next(&it, &rec, &at) < 0)
			break;
	if (!fr_record_iter_done(&it)) {
		__atomic_fetch_add(&r->st.chunks_damaged, 1, __ATOMIC_RELAXED);
		return -EBADMSG;
	}
	return 0;
}

int fr_store_reader_read_chunk(struct fr_store_reader *r, const struct fr_chunk_ref *ref, uint8_t **ret,
			       size_t *ret_len)
{
	size_t len = (size_t)fr_chunk_disk_size(&ref->info);
	_cleanup_free_ uint8_t *buf = NULL;
	struct fr_chunk_info ci;
	ssize_t n;

	if (ref->segment >= r->nsegs)
		return -EINVAL;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	n = pread(r->segs[ref->segment].fd, buf, len, (off_t)ref->offset);
	if (n < 0)
		return negative_errno();
	r->st.bytes_read += (uint64_t)n;
	/* still the chunk that was found? (a segment may be reused meanwhile) */
	if ((size_t)n != len || fr_chunk_header_parse((struct fr_chunk_header *)buf, &ci) < 0 ||
	    ci.seqnum != ref->info.seqnum ||
	    fr_crc_mismatch(ci.payload_crc, fr_crc32(buf + sizeof(struct fr_chunk_header), ci.payload_size)))
		return -EBADMSG;
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int fr_store_reader_foreach(struct fr_store_reader *r, fr_chunk_cb cb, void *userdata)
{
	return fr_store_reader_foreach_since(r, 0, cb, userdata);
}

void fr_store_reader_get_stats(struct fr_store_reader *r, struct fr_store_reader_stats *ret)
{
	*ret = r->st;
	ret->regions_damaged = 0;
	for (size_t i = 0; i < r->nsegs; i++)
		ret->regions_damaged += r->segs[i].regions_damaged;
}
