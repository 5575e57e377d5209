/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl dump -f: the window asked for, then every record as it is stored,
 * like journalctl -f.
 *
 * The store is polled every POLL_NS: the reader reads the segments
 * directory and headers again (segments are reused in place), walks the
 * chunks after its cursor (whole chunks only: one being written is read on
 * a later poll; fr_store_reader_foreach_new()), and loads those chunks
 * alone, as a window of their own.  Nothing already read is read again.
 *
 * A record is printed once no record before it can still be stored: the
 * daemon stores a record at most hold_ns after it happened (its drain
 * interval, and the chunk age or the sync interval that close chunks, from
 * the configuration), so records are held back that long, then printed
 * from the pending windows merged in time order.  A record stored later
 * than that (a wait longer than the hold is stamped with its start) is
 * printed when it comes, never dropped.  Memory is what was loaded and is
 * held, and at most LOAD_BYTES_MAX of chunks are loaded at once, however
 * far behind the store the follower is.
 *
 * Notices go to stderr, so that standard output stays records only (JSON
 * Lines for --format json): the daemon's starts and stops (its lifecycle
 * marks), records lost because the ring went past the cursor, damage.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/out-buf.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/record-json.h"
#include "../lib/store-reader.h"
#include "follow.h"
#include "frctl-error.h"
#include "frctl.h"
#include "output-json.h"
#include "output-text.h"
#include "window-args.h"

/* How often the store is looked at: well inside the 2 s a record may take
 * to reach the terminal, for a few system calls per segment. */
#define POLL_NS (200 * NSEC_PER_MSEC)
/* Records falling due in between are printed this often at most (a
 * wakeup per record would cost more than printing it). */
#define PRINT_GRAIN_NS (50 * NSEC_PER_MSEC)
/* On top of the daemon's own delays (timer slack, the write itself). */
#define HOLD_SLACK_NS (100 * NSEC_PER_MSEC)
/* Chunks (decoded bytes) loaded at once, when far behind. */
#define LOAD_BYTES_MAX (16u << 20)
/* Output written out once this much is formatted. */
#define OUT_FLUSH (1u << 20)

/* A window of newly stored chunks, printed from as its records fall due. */
struct pending {
	struct fr_window *w;
	size_t next;     /* items[next..n) are not printed yet */
	uint64_t loaded; /* CLOCK_MONOTONIC */
	bool initial;    /* of the window asked for: history, no notices */
};

struct follow {
	struct frctl_source src;
	const struct frctl_window_args *a;
	struct fr_window_query q;
	struct fr_store_cursor cur;
	bool started;  /* the window asked for was walked */
	bool behind;   /* the last walk stopped at LOAD_BYTES_MAX, short of the end */
	/* walked, not loaded yet (refs of the reader as last refreshed) */
	struct fr_chunk_ref *queue;
	size_t nqueue, qhead, qcap;
	uint64_t queue_bytes;
	struct pending *pend;
	size_t npend, pendcap;
	struct fr_exe_track *exes; /* json: executables by pid */
	struct fr_text *text;
	struct fr_json_writer *json;
	struct fr_out out;         /* in memory, written by out_write() */
	size_t write_max;          /* bytes per write (a pipe: what poll promised) */
	bool write_failed;
	int sig_fd;
	uint64_t hold_ns;
	/* for the notices */
	bool any;                  /* a record was read */
	bool runs_seen;            /* a lifecycle mark was read: a start is a restart */
	uint8_t run_boot[16];      /* the boot of the daemon run being read */
};

/* A stop that is no error: SIGINT or SIGTERM, or no one reads the output
 * any more. */
#define STOP 1

static uint64_t ref_first_wall(const struct fr_chunk_ref *ref)
{
	return ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
}

/* Writes what is formatted to standard output, in pieces a pipe or a
 * terminal takes without blocking, so that a signal is seen while a slow
 * reader holds the output up.  0, STOP, or -errno (-EPIPE: the reader
 * went away). */
static int out_write(struct follow *fl)
{
	size_t done = 0;

	while (done < fl->out.len) {
		struct pollfd p[2] = { { .fd = STDOUT_FILENO, .events = POLLOUT }, { .fd = fl->sig_fd, .events = POLLIN } };
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fl->write_failed = true;
			return -errno;
		}
		if (p[1].revents)
			return STOP;
		if (!(p[0].revents & (POLLOUT | POLLERR | POLLHUP | POLLNVAL)))
			continue;
		n = write(STDOUT_FILENO, fl->out.p + done, MIN(fl->out.len - done, fl->write_max));
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fl->write_failed = true;
			return -errno;
		}
		done += (size_t)n;
	}
	fl->out.len = 0;
	return 0;
}

/* A line on stderr, after the records before it. */
static int notice(struct follow *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int notice(struct follow *fl, const char *fmt, ...)
{
	va_list ap;
	int k = out_write(fl);

	if (k != 0)
		return k;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	return 0;
}

/* The daemon's lifecycle marks as notices (once following, not for the
 * window asked for): the records are not the end of the story when it
 * stops, and a new run (maybe of a new boot) goes on in the same store. */
static int lifecycle_mark(struct follow *fl, const struct pending *p, const struct fr_window_entry *e)
{
	const char *text = e->r.mark.text;
	size_t len = e->r.mark.text_len, n;
	const uint8_t *boot = p->w->chunks[e->chunk].boot_id;
	bool started, new_boot, restart = fl->runs_seen;
	char id[33];

	if (len > strlen(FR_MARK_STARTED) && memcmp(text, FR_MARK_STARTED, strlen(FR_MARK_STARTED)) == 0)
		started = true;
	else if (len > strlen(FR_MARK_STOPPED) && memcmp(text, FR_MARK_STOPPED, strlen(FR_MARK_STOPPED)) == 0)
		started = false;
	else
		return 0;
	n = strlen(started ? FR_MARK_STARTED : FR_MARK_STOPPED);
	fl->runs_seen = true;
	new_boot = started && memcmp(boot, fl->run_boot, 16) != 0;
	if (started)
		memcpy(fl->run_boot, boot, 16);
	if (p->initial)
		return 0;
	if (!started)
		return notice(fl, "-- flightrecd stopped %.*s --", (int)(len - n), text + n);
	return notice(fl, "-- flightrecd %s %.*s%s%s --", restart ? "restarted" : "started", (int)(len - n), text + n,
		      new_boot ? ", boot " : "", new_boot ? fr_format_boot_id(boot, id, sizeof(id)) : "");
}

/* Item next of @p is due: updates what it names, says what it announces,
 * prints it if it is shown. */
static int print_item(struct follow *fl, struct pending *p)
{
	const struct fr_window_item *it = &p->w->items[p->next];
	bool shown = frctl_window_item_shown(fl->a, it);
	bool names = fl->exes && (it->type == FR_REC_PROCESS || it->type == FR_REC_EXEC || it->type == FR_REC_FORK ||
				  it->type == FR_REC_EXIT);
	bool lifecycle = it->type == FR_REC_MARK && it->pid == 0;
	struct fr_window_entry e;
	int k = 0;

	if (!fl->any)
		memcpy(fl->run_boot, p->w->chunks[it->chunk].boot_id, 16);
	if ((shown || names || lifecycle) && fr_window_get(p->w, p->next, &e) == 0) {
		if (fl->exes && fr_exe_track_entry(fl->exes, &e) < 0)
			return -ENOMEM;
		if (lifecycle)
			k = lifecycle_mark(fl, p, &e);
		if (k == 0 && shown && frctl_window_entry_shown(fl->a, &e)) {
			if (fl->json)
				k = fr_window_entry_json(fl->json, &fl->out, p->w, &e);
			else
				fr_text_print(fl->text, &fl->out, p->w, &e);
		}
	}
	fl->any = true;
	return k;
}

/* The time before which every record that will be stored promptly is
 * read: the hold before now, or before the newest record read when the
 * walk stopped short of the end (the chunks after were written later),
 * and before the first record of the chunks walked but not loaded yet. */
static uint64_t horizon(const struct follow *fl, uint64_t now)
{
	uint64_t h = now - MIN(now, fl->hold_ns);

	if (fl->behind)
		h = MIN(h, fl->cur.last_wall - MIN(fl->cur.last_wall, fl->hold_ns));
	for (size_t i = fl->qhead; i < fl->nqueue; i++)
		h = MIN(h, ref_first_wall(&fl->queue[i]));
	return h;
}

/* Prints the records that are due, oldest first across the pending
 * windows (ties: the window read first), and drops the windows done.
 * Once all that was stored is read, a window held for twice the hold is
 * printed whatever the clock says (a clock set back would hold it for as
 * long). */
static int print_due(struct follow *fl)
{
	uint64_t h = horizon(fl, fr_now_ns(CLOCK_REALTIME)), mono = fr_now_ns(CLOCK_MONOTONIC);
	bool caught_up = !fl->behind && fl->qhead == fl->nqueue;
	size_t kept = 0;
	int k = 0;

	for (;;) {
		struct pending *best = NULL;
		uint64_t best_t = 0;

		for (size_t i = 0; i < fl->npend; i++) {
			struct pending *p = &fl->pend[i];
			uint64_t t;

			if (p->next == p->w->n)
				continue;
			t = p->w->items[p->next].wall_ns;
			if (t > h && (!caught_up || mono - p->loaded < 2 * fl->hold_ns))
				continue;
			if (!best || t < best_t) {
				best = p;
				best_t = t;
			}
		}
		if (!best)
			break;
		k = print_item(fl, best);
		best->next++;
		if (k == 0 && fl->out.len >= OUT_FLUSH)
			k = out_write(fl);
		if (k != 0)
			return k;
	}
	for (size_t i = 0; i < fl->npend; i++) {
		if (fl->pend[i].next == fl->pend[i].w->n)
			fr_window_free(fl->pend[i].w);
		else
			fl->pend[kept++] = fl->pend[i];
	}
	fl->npend = kept;
	return out_write(fl);
}

/* How long to wait: until the next walk of the store is due (every
 * POLL_NS), or, sooner, until the next pending record falls due, but no
 * sooner than PRINT_GRAIN_NS; none while what was walked is not all
 * loaded. */
static uint64_t wait_time(const struct follow *fl, uint64_t last_walk)
{
	uint64_t now = fr_now_ns(CLOCK_REALTIME), mono = fr_now_ns(CLOCK_MONOTONIC), wait;

	if (fl->behind || fl->qhead < fl->nqueue)
		return 0;
	wait = mono - last_walk < POLL_NS ? POLL_NS - (mono - last_walk) : 0;
	for (size_t i = 0; i < fl->npend; i++) {
		const struct pending *p = &fl->pend[i];

		if (p->next < p->w->n) {
			uint64_t due = p->w->items[p->next].wall_ns + fl->hold_ns;
			wait = MIN(wait, MAX(due > now ? due - now : 0, PRINT_GRAIN_NS));
		}
	}
	return wait;
}

static int walk_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct follow *fl = userdata;

	/* far behind: the rest next time, once these are printed (the
	 * window asked for is walked whole: most of it is not loaded) */
	if (fl->started && fl->nqueue && fl->queue_bytes + ref->info.raw_size > LOAD_BYTES_MAX)
		return STOP;
	if (fl->nqueue == fl->qcap) {
		size_t cap = fl->qcap ? 2 * fl->qcap : 64;
		struct fr_chunk_ref *q = realloc(fl->queue, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		fl->queue = q;
		fl->qcap = cap;
	}
	fl->queue[fl->nqueue++] = *ref;
	fl->queue_bytes += ref->info.raw_size;
	return 0;
}

static int cmp_store_order(const void *a, const void *b)
{
	const struct fr_chunk_ref *x = a, *y = b;

	if (x->segment != y->segment)
		return x->segment < y->segment ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void format_wall(uint64_t wall, char *buf, size_t len)
{
	if (!fr_format_rfc3339(wall, buf, len))
		snprintf(buf, len, "?");
}

/* What the walk says went wrong, once each. */
static int walk_notices(struct follow *fl, const struct fr_store_new_stats *st)
{
	char a[64], b[64];
	int k = 0;

	if (st->store_reset)
		k = notice(fl, "frctl: the store at %s was made anew: following it from its start", fl->src.name);
	if (k == 0 && st->segments_lost) {
		format_wall(st->lost_after_wall, a, sizeof(a));
		format_wall(st->lost_until_wall, b, sizeof(b));
		k = notice(fl, "frctl: fell behind: %" PRIu64 " segment%s of the store %s reused before they were read: "
			   "records after %s%s%s are lost", st->segments_lost, st->segments_lost == 1 ? "" : "s",
			   st->segments_lost == 1 ? "was" : "were", a, st->lost_until_wall ? " up to " : "",
			   st->lost_until_wall ? b : "");
	}
	if (k == 0 && st->regions_damaged)
		k = notice(fl, "frctl: warning: %" PRIu64 " damaged regions of the store (chunk headers that failed their "
			   "checksums, with valid chunks after them) were skipped; their records and times are unknown",
			   st->regions_damaged);
	return k;
}

/* Walks what was stored since the last walk (or the window asked for, the
 * first time) into the queue. */
static int walk_new(struct follow *fl)
{
	struct fr_store_new_stats st = {};
	struct fr_store_reader *r = fl->src.reader;
	int k;

	fl->qhead = fl->nqueue = 0;
	fl->queue_bytes = 0;
	k = fr_store_reader_refresh(r);
	if (k < 0)
		return k;
	if (!fl->started)
		fr_store_reader_cursor_since(r, fl->q.since_ns, &fl->cur);
	/* the chunks read are checked whole first where they may be being
	 * written; at the start, only those that hold the window (most of
	 * what the first walk goes over is older) */
	k = fr_store_reader_foreach_new(r, &fl->cur, fl->started ? 0 : fl->q.since_ns, walk_cb, fl, &st);
	if (k < 0)
		return k;
	fl->behind = k == STOP;
	k = walk_notices(fl, &st);
	if (k != 0)
		return k;
	if (!fl->started) {
		/* of the chunks from the window's segment on, those of the
		 * window, and the keyframe and context before it */
		struct fr_chunk_ref *sel;
		size_t n;

		k = fr_window_select_from(&fl->q, fl->queue, fl->nqueue, &sel, &n);
		if (k < 0)
			return k;
		if (n) /* none yet: a store just made, a window to come */
			qsort(sel, n, sizeof(*sel), cmp_store_order);
		free(fl->queue);
		fl->queue = sel;
		fl->nqueue = fl->qcap = n;
	}
	return 0;
}

/* Reads what is new: walks the store when all it walked is loaded (and
 * @walk says it is time), and loads the next LOAD_BYTES_MAX of it as a
 * window. */
static int read_new(struct follow *fl, bool walk)
{
	struct fr_window *w;
	uint64_t bytes = 0;
	size_t n = 0;
	int k;

	if (fl->qhead == fl->nqueue) {
		if (!walk)
			return 0;
		k = walk_new(fl);
		if (k != 0)
			return k;
	}
	while (fl->qhead + n < fl->nqueue && (n == 0 || bytes + fl->queue[fl->qhead + n].info.raw_size <= LOAD_BYTES_MAX))
		bytes += fl->queue[fl->qhead + n++].info.raw_size;
	if (n) {
		if (fl->npend == fl->pendcap) {
			size_t cap = fl->pendcap ? 2 * fl->pendcap : 8;
			struct pending *p = realloc(fl->pend, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			fl->pend = p;
			fl->pendcap = cap;
		}
		k = fr_window_load_refs(fl->src.reader, &fl->q, fl->queue + fl->qhead, n, &w);
		if (k < 0)
			return k;
		fr_window_set_late_names(w, fl->src.late_names);
		fl->qhead += n;
		fl->pend[fl->npend++] = (struct pending){ .w = w, .loaded = fr_now_ns(CLOCK_MONOTONIC),
							  .initial = !fl->started };
		if (w->chunks_damaged || w->records_bad) {
			k = notice(fl, "frctl: warning: %" PRIu64 " damaged chunks and %" PRIu64 " undecodable records "
				   "were skipped", w->chunks_damaged, w->records_bad);
			if (k != 0)
				return k;
		}
	}
	if (fl->qhead == fl->nqueue)
		fl->started = true;
	return 0;
}

/* Waits up to @ns for a signal to stop, or for the reader of the output
 * to go away; STOP, 0 or -errno. */
static int wait_for(struct follow *fl, uint64_t ns)
{
	struct pollfd p[2] = { { .fd = fl->sig_fd, .events = POLLIN }, { .fd = STDOUT_FILENO } };
	int n = poll(p, 2, (int)((ns + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC));

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	/* a pipe no one reads says POLLERR: done, as if written to */
	if (p[0].revents || (p[1].revents & (POLLERR | POLLHUP)))
		return STOP;
	return 0;
}

static void follow_done(struct follow *fl)
{
	for (size_t i = 0; i < fl->npend; i++)
		fr_window_free(fl->pend[i].w);
	free(fl->pend);
	free(fl->queue);
	fr_exe_track_free(fl->exes);
	fr_text_free(fl->text);
	fr_json_writer_free(fl->json);
	free(fl->out.p);
	closep(&fl->sig_fd);
	frctl_source_done(&fl->src);
}

int frctl_dump_follow(struct frctl *f, const struct frctl_window_args *a, bool json, bool stacks)
{
	struct follow fl = { .a = a, .sig_fd = -EBADF };
	sigset_t mask;
	struct stat st;
	int k, ret = EXIT_FAILURE_;

	/* SIGINT and SIGTERM end it cleanly (exit 0, everything freed):
	 * blocked, here and in every thread it starts, and read from a
	 * signalfd beside the output; a reader gone is EPIPE, not SIGPIPE */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (fl.sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		frctl_error("cannot set up signals: %s", strerror(errno));
		return EXIT_FAILURE_;
	}
	(void)sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, NULL);

	k = frctl_source_open(f, a, &fl.src);
	if (k != 0) {
		follow_done(&fl);
		return k;
	}
	fl.q = fl.src.q;
	fl.q.until_ns = UINT64_MAX;
	fl.q.skip_exe = true; /* fl.exes names them, across windows */
	fl.q.progress = NULL;
	/* the daemon stores a record within a drain interval, and a chunk
	 * age (checked each drain) or a sync interval, whichever is sooner */
	fl.hold_ns = f->conf.drain_interval_ns +
		     MIN(f->conf.chunk_age_ns + f->conf.drain_interval_ns, f->conf.sync_interval_ns) + HOLD_SLACK_NS;
	fl.write_max = fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) ? SIZE_MAX : PIPE_BUF;
	if (fr_out_init(&fl.out, NULL) < 0 ||
	    (json ? fr_json_writer_new(&fl.json) < 0 || fr_exe_track_new(&fl.exes) < 0
		  : !(fl.text = fr_text_new((fr_text_colour(stdout) ? FR_TEXT_COLOUR : 0) |
					    (stacks ? FR_TEXT_STACKS : 0))))) {
		frctl_error("out of memory");
		goto out;
	}
	for (uint64_t last_walk = 0;;) {
		bool walk = fr_now_ns(CLOCK_MONOTONIC) - last_walk >= POLL_NS || fl.behind;

		if (walk && fl.qhead == fl.nqueue)
			last_walk = fr_now_ns(CLOCK_MONOTONIC);
		k = read_new(&fl, walk);
		if (k == 0)
			k = print_due(&fl);
		if (k == 0)
			k = wait_for(&fl, wait_time(&fl, last_walk));
		if (k != 0)
			break;
	}
	/* EPIPE: the reader is gone (frctl dump -f | head -1): done */
	if (k == STOP || (k == -EPIPE && fl.write_failed))
		ret = EXIT_OK;
	else if (k == -ENOMEM)
		frctl_error("out of memory");
	else if (fl.write_failed)
		frctl_error("write error: %s", strerror(-k));
	else if (k == -ENOMEDIUM || k == -ENOENT)
		frctl_error("the store at %s is gone", fl.src.name);
	else
		frctl_error("cannot read %s: %s", fl.src.name, strerror(-k));
out:
	follow_done(&fl);
	return ret;
}
