/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/chunk.h"
#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/proc-stat.h"
#include "../lib/store-format.h"
#include "log.h"
#include "parser-proto.h"
#include "parser.h"
#include "proc-access.h"
#include "sanitized.h"

#define NAME "flightrec-parse"
/* the first hello: the helper maps its libraries and enters the sandbox */
#define START_DEADLINE_NS (2000 * 1000000ULL)
#define RESTART_GAP_NS NSEC_PER_SEC
#define FAILS_WINDOW_NS (60 * NSEC_PER_SEC)
#define BACKOFF_NS (60 * NSEC_PER_SEC)
#define QUARANTINE_NS (FR_PARSER_QUARANTINE_S * NSEC_PER_SEC)
#define QUARANTINE_MAX 64

struct file_id {
	uint64_t dev, ino;
};

struct fr_parser {
	int exe_fd; /* the helper's executable (O_PATH), run at every start */
	char *path;
	int sock;   /* -EBADF: no helper */
	pid_t pid;
	uint64_t next_start; /* CLOCK_MONOTONIC: no start before */
	uint64_t timeout, budget, heap_max; /* ns, ns, bytes: fr_parser_set_limits() */
	void (*started)(void *userdata, pid_t pid); /* fr_parser_on_start() */
	void *started_data;
	uint64_t window, spent; /* this second's start, and the time exchanges took in it */
	uint64_t spent_rare;    /* of which rare stacks' (struct fr_ustack), budgeted apart */
	uint64_t fails_since;
	unsigned fails;
	uint8_t *msg;                /* replies received */
	uint8_t *kept;               /* the answer fr_parser_keep() kept */
	struct fr_pm_notes *notes;   /* notes not sent yet */
	struct fr_py_probe py;       /* the last FRAMES answer's (fr_parser_python()) */
	/* the exchange in flight */
	uint32_t req_pid, req_ppid;
	int crumb_fd;                        /* FR_PARSE_CRUMB_FD in the helper */
	volatile struct fr_parse_crumb *crumb; /* the file it parses now */
	struct {
		struct file_id id;
		uint64_t until;
	} q[QUARANTINE_MAX];
	struct fr_pm_stats last, base; /* the running helper's, and its predecessors' */
	struct fr_parser_stats st;
};

static bool helper_ok(int fd, const char **why)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		*why = "owned by another user";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		*why = "writable by group or others";
	else if (!(st.st_mode & S_IXUSR))
		*why = "not executable";
	else
		return true;
	return false;
}

/* Next to our own executable (a build tree), else the installed one. */
static int open_helper(struct fr_parser *p)
{
	char self[PATH_MAX], cand[2][PATH_MAX + 32];
	const char *why = "not found";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	unsigned nc = 0;

	if (n > 0) {
		char *slash;
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(cand[nc++], sizeof(cand[0]), "%s/" NAME, self);
		}
	}
	snprintf(cand[nc++], sizeof(cand[0]), "%s/" NAME, FR_LIBEXECDIR);
	for (unsigned i = 0; i < nc; i++) {
		int fd = open(cand[i], O_PATH | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (!helper_ok(fd, &why)) {
			log_warning("Not running %s: %s.", cand[i], why);
			close(fd);
			continue;
		}
		p->path = strdup(cand[i]);
		if (!p->path) {
			close(fd);
			return -ENOMEM;
		}
		p->exe_fd = fd;
		return 0;
	}
	log_warning("No usable %s (looked next to flightrecd and in %s): user stacks keep their leaf frame, "
		    "unnamed.", NAME, FR_LIBEXECDIR);
	return -ENOENT;
}

int fr_parser_new(struct fr_parser **ret)
{
	struct fr_parser *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->exe_fd = p->sock = p->crumb_fd = -EBADF;
	p->timeout = FR_PARSER_TIMEOUT_MS * NSEC_PER_MSEC;
	p->budget = FR_PARSER_CPU_PERCENT * (NSEC_PER_SEC / 100);
	p->heap_max = FR_PARSER_HEAP_MAX;
	/* sealed: the helper can neither shrink it under our mapping nor grow it */
	p->crumb_fd = memfd_create("flightrec-parse-crumb", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (p->crumb_fd < 0 || ftruncate(p->crumb_fd, FR_PARSE_CRUMB_SIZE) < 0 ||
	    fcntl(p->crumb_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		fr_parser_free(p);
		return r;
	}
	p->crumb = mmap(NULL, FR_PARSE_CRUMB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p->crumb_fd, 0);
	if (p->crumb == MAP_FAILED) {
		p->crumb = NULL;
		r = -errno;
		fr_parser_free(p);
		return r;
	}
	p->msg = malloc(FR_PARSE_MSG_MAX);
	p->kept = malloc(FR_PARSE_MSG_MAX);
	p->notes = malloc(FR_PARSE_MSG_MAX);
	if (!p->msg || !p->kept || !p->notes) {
		fr_parser_free(p);
		return -ENOMEM;
	}
	p->notes->type = FR_PM_NOTES;
	p->notes->n = 0;
	r = open_helper(p);
	if (r < 0) {
		fr_parser_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

static void add_stats(struct fr_pm_stats *to, const struct fr_pm_stats *from)
{
	_Static_assert((sizeof(struct fr_pm_stats) - offsetof(struct fr_pm_stats, sym)) % sizeof(uint64_t) == 0,
		       "counters only");
	fr_add_counters((uint64_t *)&to->sym, (const uint64_t *)&from->sym,
			(sizeof(*to) - offsetof(struct fr_pm_stats, sym)) / sizeof(uint64_t));
}

/* Kills the helper (if any, and not reaped yet) and forgets it. */
static void stop(struct fr_parser *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		(void)waitpid(p->pid, NULL, 0);
	}
	if (p->sock >= 0)
		close(p->sock);
	p->sock = -EBADF;
	p->pid = 0;
	/* its counters go on in the base; its gauges (what it held) end */
	p->last.sym.processes = p->last.sym.files = p->last.sym.cache_bytes = 0;
	p->last.unw.processes = p->last.unw.files = 0;
	p->last.jit.held = 0;
	add_stats(&p->base, &p->last);
	p->last = (struct fr_pm_stats){};
	p->notes->n = 0; /* the next helper knows nothing of them */
}

struct fr_parser *fr_parser_free(struct fr_parser *p)
{
	if (!p)
		return NULL;
	if (p->sock >= 0) {
		/* it leaves at the end of its socket */
		close(p->sock);
		p->sock = -EBADF;
	}
	stop(p);
	if (p->exe_fd >= 0)
		close(p->exe_fd);
	if (p->crumb)
		munmap((void *)p->crumb, FR_PARSE_CRUMB_SIZE);
	if (p->crumb_fd >= 0)
		close(p->crumb_fd);
	free(p->path);
	free(p->msg);
	free(p->kept);
	free(p->notes);
	free(p);
	return NULL;
}

const char *fr_parser_path(const struct fr_parser *p)
{
	return p->path;
}

static bool quarantined(struct fr_parser *p, uint64_t dev, uint64_t ino, uint64_t now)
{
	for (size_t i = 0; i < QUARANTINE_MAX; i++)
		if (p->q[i].until > now && p->q[i].id.dev == dev && p->q[i].id.ino == ino)
			return true;
	return false;
}

static void quarantine(struct fr_parser *p, struct file_id id, uint64_t now)
{
	size_t slot = 0;

	if (!id.ino || quarantined(p, id.dev, id.ino, now))
		return;
	for (size_t i = 1; i < QUARANTINE_MAX; i++)
		if (p->q[i].until < p->q[slot].until)
			slot = i;
	p->q[slot].id = id;
	p->q[slot].until = now + QUARANTINE_NS;
	p->st.quarantined++;
}

enum failure { F_TIMEOUT, F_CRASH, F_BAD };

/* The helper failed an exchange: it goes, and the file it was parsing
 * (if it said: proc-access.h) is not handed out again for a while. */
/* Whether the helper is stopped (state T or t in /proc/PID/stat). */
static bool helper_stopped(pid_t pid)
{
	struct fr_proc_stat st;

	return pid > 0 && fr_proc_stat_read((uint32_t)pid, &st) == 0 && (st.state == 'T' || st.state == 't');
}

static void fail(struct fr_parser *p, enum failure f)
{
	static const char *const what[] = { "did not answer in time", "died", "sent a malformed message" };
	struct file_id blamed = { p->crumb->dev, p->crumb->ino };
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);
	char sig[32] = "";
	int status = 0;

	/* (a helper gone from its socket is exiting: up to 100 ms for its
	 * status, so that a kill -9 is not taken for the file's doing) */
	bool reaped = false;
	for (int i = 0; f == F_CRASH && p->pid > 0 && i < 100; i++) {
		pid_t w = waitpid(p->pid, &status, WNOHANG);
		if (w == p->pid)
			reaped = true;
		if (w != 0)
			break;
		usleep(1000);
	}
	if (reaped) {
		p->pid = 0; /* reaped: its status says how */
		if (WIFSIGNALED(status))
			snprintf(sig, sizeof(sig), " (signal %d)", WTERMSIG(status));
		else if (WIFEXITED(status))
			snprintf(sig, sizeof(sig), " (exit status %d)", WEXITSTATUS(status));
	}
#ifdef FR_SANITIZED
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
		log_error("%s aborted: a sanitizer finding (above, on stderr); aborting the daemon too.", NAME);
		abort();
	}
#endif
	if (f == F_TIMEOUT)
		p->st.timeouts++;
	else if (f == F_CRASH)
		p->st.crashes++;
	else
		p->st.bad_replies++;
	/* a SIGKILL is not the file's doing (the OOM killer, an administrator):
	 * ours come with F_TIMEOUT; nor is a helper stopped (SIGSTOP, a
	 * debugger) that timed out */
	if ((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) || (f == F_TIMEOUT && helper_stopped(p->pid)))
		blamed.ino = 0;
	if (blamed.ino) {
		quarantine(p, blamed, now);
		log_warning("%s %s%s naming a stack of pid %" PRIu32 " while parsing the file of device %u:%u inode %" PRIu64
			    "; that file is not handed to it for %d s.",
			    NAME, what[f], sig, p->req_pid, major(blamed.dev), minor(blamed.dev), blamed.ino,
			    FR_PARSER_QUARANTINE_S);
	} else
		log_warning("%s %s%s naming a stack of pid %" PRIu32 ".", NAME, what[f], sig, p->req_pid);
	stop(p);
	if (p->started)
		p->started(p->started_data, 0); /* its pid may be another's soon */
	if (now - p->fails_since > FAILS_WINDOW_NS) {
		p->fails_since = now;
		p->fails = 0;
	}
	p->fails++;
	p->next_start = now + (p->fails >= FR_PARSER_FAILS_MAX ? BACKOFF_NS : RESTART_GAP_NS);
	if (p->fails == FR_PARSER_FAILS_MAX)
		log_warning("%s failed %d times within a minute: not started again for a minute.", NAME,
			    FR_PARSER_FAILS_MAX);
}

/* Sends one message (with @fd attached if >= 0) by @deadline. */
static int send_msg(struct fr_parser *p, struct iovec *iov, size_t niov, int fd, uint64_t deadline)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c = {};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = niov };

	if (fd >= 0) {
		m.msg_control = c.buf;
		m.msg_controllen = sizeof(c.buf);
		c.h.cmsg_level = SOL_SOCKET;
		c.h.cmsg_type = SCM_RIGHTS;
		c.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&c.h), &fd, sizeof(fd));
	}
	for (;;) {
		struct pollfd pfd = { .fd = p->sock, .events = POLLOUT };
		uint64_t now;

		if (sendmsg(p->sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return -EPIPE;
		now = fr_now_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			return -ETIME;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000 + 1)) < 0 && errno != EINTR)
			return -EPIPE;
	}
}

/* Receives one message into p->msg by @deadline; its length, or
 * -ETIME, -EPIPE (the helper is gone), -EBADMSG (too long, or with
 * descriptors: it has none to send).  A blocking receive, bounded by the
 * socket's SO_RCVTIMEO (the timeout): one system call per message, where
 * polling first cost two more; no receive starts past @deadline, so an
 * exchange ends by @deadline + the timeout at most. */
static ssize_t recv_msg(struct fr_parser *p, uint64_t deadline)
{
	for (;;) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * 4)];
		} c;
		struct iovec iov = { p->msg, FR_PARSE_MSG_MAX };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
		ssize_t n;

		if (fr_now_ns(CLOCK_MONOTONIC) >= deadline)
			return -ETIME;
		n = recvmsg(p->sock, &m, MSG_CMSG_CLOEXEC);
		if (n > 0) {
			bool fds = false;
			for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
				if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
					size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
					for (size_t i = 0; i < k; i++) {
						int fd;
						memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
						close(fd);
					}
					fds = true;
				}
			if (fds || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof(uint32_t))
				return -EBADMSG;
			return n;
		}
		/* EAGAIN: SO_RCVTIMEO passed; the deadline is checked above */
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		return -EPIPE;
	}
}

static enum failure failure_of(ssize_t r)
{
	return r == -ETIME ? F_TIMEOUT : r == -EPIPE ? F_CRASH : F_BAD;
}

static uint32_t msg_type(const struct fr_parser *p)
{
	uint32_t t;

	memcpy(&t, p->msg, sizeof(t));
	return t;
}

static int set_rcvtimeo(int fd, uint64_t ns)
{
	struct timeval tv = { .tv_sec = (time_t)(ns / NSEC_PER_SEC), .tv_usec = (suseconds_t)(ns % NSEC_PER_SEC / 1000) };

	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void fr_parser_on_start(struct fr_parser *p, void (*fn)(void *userdata, pid_t pid), void *userdata)
{
	p->started = fn;
	p->started_data = userdata;
}

void fr_parser_set_limits(struct fr_parser *p, uint64_t timeout_ns, unsigned cpu_percent, uint64_t heap_max)
{
	p->heap_max = heap_max;
	p->timeout = timeout_ns;
	p->budget = (uint64_t)MIN(cpu_percent, 100u) * (NSEC_PER_SEC / 100);
	if (p->sock >= 0)
		(void)set_rcvtimeo(p->sock, p->timeout);
}

static int spawn(struct fr_parser *p)
{
	char ppid[16];
	char *argv[] = { (char *)NAME, ppid, NULL }, *envp[] = { NULL };
	int sv[2];
	pid_t pid;

	snprintf(ppid, sizeof(ppid), "%d", (int)getpid());
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* room for the largest message, where net.core.wmem_max allows */
	for (int i = 0; i < 2; i++) {
		int size = 2 * FR_PARSE_MSG_MAX;
		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	}
	if (set_rcvtimeo(sv[0], p->timeout) < 0) {
		int r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		sigset_t none;

		/* only its socket and stdio cross the exec: everything
		 * else of the daemon's (the store, BPF objects) is closed */
		if (sv[1] == FR_PARSE_FD ? fcntl(sv[1], F_SETFD, 0) < 0 : dup2(sv[1], FR_PARSE_FD) < 0)
			_exit(127);
		if (p->crumb_fd == FR_PARSE_CRUMB_FD ? fcntl(p->crumb_fd, F_SETFD, 0) < 0
						       : dup2(p->crumb_fd, FR_PARSE_CRUMB_FD) < 0)
			_exit(127);
		if (close_range(FR_PARSE_CRUMB_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execveat(p->exe_fd, "", argv, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	close(sv[1]);
	p->sock = sv[0];
	p->pid = pid;
	if (p->started)
		p->started(p->started_data, pid);
	return 0;
}

/* A helper that said hello, or -errno. */
static int ensure(struct fr_parser *p)
{
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);
	const struct fr_pm_hello *h = (const void *)p->msg;
	ssize_t n;
	int r;

	if (p->sock >= 0)
		return 0;
	if (now < p->next_start)
		return -EAGAIN;
	r = spawn(p);
	if (r < 0) {
		p->st.start_failed++;
		p->next_start = now + BACKOFF_NS;
		return log_warning_errno(r, "Failed to start %s, retrying in a minute: %m", p->path);
	}
	n = recv_msg(p, now + START_DEADLINE_NS);
	if (n != (ssize_t)sizeof(*h) || h->type != FR_PM_HELLO || h->proto != FR_PARSE_PROTO) {
		p->st.start_failed++;
		stop(p);
		if (p->started)
			p->started(p->started_data, 0);
		p->next_start = now + BACKOFF_NS;
		log_warning("%s did not start (%s), retrying in a minute.", p->path,
			    n == -ETIME ? "no hello within 2 s" : n < 0 ? "it exited" : "another build");
		return -EPROTO;
	}
	p->st.starts++;
	p->st.pid = p->pid;
	return 0;
}

static int flush_notes(struct fr_parser *p, uint64_t deadline)
{
	struct iovec iov = { p->notes, sizeof(*p->notes) + p->notes->n * sizeof(p->notes->note[0]) };
	int r;

	if (!p->notes->n)
		return 0;
	r = send_msg(p, &iov, 1, -EBADF, deadline);
	p->notes->n = 0;
	return r;
}

static void note(struct fr_parser *p, uint32_t kind, uint32_t pid, uint32_t child)
{
	if (p->sock < 0)
		return; /* a helper started later knows nothing of pid */
	if (p->notes->n == FR_PM_NOTES_MAX) {
		int r = flush_notes(p, fr_now_ns(CLOCK_MONOTONIC) + p->timeout);
		if (r < 0) {
			fail(p, failure_of(r));
			return;
		}
	}
	p->notes->note[p->notes->n++] = (struct fr_pm_note){ kind, pid, child };
}

void fr_parser_exec(struct fr_parser *p, uint32_t pid)
{
	note(p, FR_NOTE_EXEC, pid, 0);
}

void fr_parser_exit(struct fr_parser *p, uint32_t pid)
{
	note(p, FR_NOTE_EXIT, pid, 0);
}

void fr_parser_fork(struct fr_parser *p, uint32_t pid, uint32_t child)
{
	note(p, FR_NOTE_FORK, pid, child);
}

/* Opens the file a NEED asks for and sends it (or why not). */
static int serve(struct fr_parser *p, size_t len, uint64_t deadline)
{
	const struct fr_pm_need *n = (const void *)p->msg;
	struct fr_pm_opened o = { .type = FR_PM_OPENED };
	struct iovec iov = { &o, sizeof(o) };
	char path[FR_PM_PATH_MAX + 1];
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);
	int fd = -ESRCH, r;

	if (len < sizeof(*n) || n->path_len >= FR_PM_PATH_MAX || len != sizeof(*n) + n->path_len ||
	    n->build_id_len > FR_BUILD_ID_MAX)
		return -EBADMSG;
	if (n->kind != FR_NEED_DEBUG && n->pid != p->req_pid && (!p->req_ppid || n->pid != p->req_ppid)) {
		/* only the process whose stack it names, and its parent
		 * (whose mappings a forked child has) */
		p->st.needs_refused++;
	} else {
		switch (n->kind) {
		case FR_NEED_MAPS:
			fd = fr_access_maps(n->pid, &o.exe_ino);
			break;
		case FR_NEED_MAPS_GONE:
			fd = fr_access_maps_gone(n->pid, &o.exe_ino);
			break;
		case FR_NEED_MAPPED:
			if (quarantined(p, n->dev, n->ino, now)) {
				p->st.quarantine_refused++;
				fd = -ESTALE;
				break;
			}
			memcpy(path, p->msg + sizeof(*n), n->path_len);
			path[n->path_len] = 0;
			fd = fr_access_mapped(n->pid, n->start, n->end, n->path_len ? path : NULL, (dev_t)n->dev, n->ino);
			break;
		case FR_NEED_DEBUG: {
			struct stat st;
			fd = fr_access_debug(n->build_id, n->build_id_len);
			if (fd >= 0 && fstat(fd, &st) == 0 && quarantined(p, st.st_dev, st.st_ino, now)) {
				p->st.quarantine_refused++;
				close(fd);
				fd = -ESTALE;
			}
			break;
		}
		case FR_NEED_PERF_MAP:
			fd = fr_access_perf_map(n->pid);
			break;
		default:
			return -EBADMSG;
		}
	}
	o.result = fd < 0 ? fd : 0;
	if (fd >= 0)
		p->st.files_handed++;
	r = send_msg(p, &iov, 1, fd, deadline);
	if (fd >= 0)
		close(fd);
	return r;
}

/* The FRAMES answer in p->msg: frames into @out, descriptions into
 * @desc.  -EBADMSG when it does not add up. */
static int take_frames(struct fr_parser *p, size_t len, size_t max, uint64_t *out, struct fr_frame_desc *desc,
		       size_t *ret)
{
	const struct fr_pm_frames *a = (const void *)p->msg;
	size_t pos;

	if (len < sizeof(*a) || a->nframes > max || a->ndesc > a->nframes ||
	    len < sizeof(*a) + a->nframes * sizeof(uint64_t))
		return -EBADMSG;
	memcpy(out, p->msg + sizeof(*a), a->nframes * sizeof(uint64_t));
	pos = sizeof(*a) + a->nframes * sizeof(uint64_t);
	for (size_t i = 0; i < a->nframes; i++) {
		struct fr_record *slot[] = { &desc[i].mapping, &desc[i].symbol, &desc[i].inl };
		static const uint16_t type[] = { FR_REC_MAPPING, FR_REC_SYMBOL, FR_REC_INLINE };
		uint8_t mask;

		desc[i] = (struct fr_frame_desc){};
		if (i >= a->ndesc)
			continue;
		if (pos >= len)
			return -EBADMSG;
		mask = p->msg[pos++];
		if (mask & ~7u)
			return -EBADMSG;
		for (unsigned k = 0; k < 3; k++) {
			struct fr_codec_state st = { .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };

			if (!(mask & (1u << k)))
				continue;
			if (fr_record_decode(&st, p->msg, len, &pos, slot[k]) != 0 || slot[k]->type != type[k])
				return -EBADMSG;
			/* the daemon says whose it is */
			slot[k]->pid = p->req_pid;
		}
	}
	if (pos != len)
		return -EBADMSG;
	p->st.descs_cut += a->cut;
	p->py = a->py;
	*ret = a->nframes;
	return 0;
}

size_t fr_parser_stack(struct fr_parser *p, const struct fr_ustack *s, const uint64_t *frames, size_t nframes,
		       bool name, bool leaf_user, uint64_t *out, size_t max, struct fr_frame_desc *desc)
{
	uint64_t start = fr_now_ns(CLOCK_MONOTONIC), deadline = start + p->timeout;
	bool unwind = !frames && s->stack_len;
	struct fr_pm_stack q = {
		.type = FR_PM_STACK,
		.flags = (unwind ? FR_PM_UNWIND : 0) | (name ? FR_PM_NAME : 0) | (leaf_user ? FR_PM_LEAF_USER : 0),
		.pid = s->pid, .tid = s->tid, .ppid = s->ppid, .max = (uint32_t)max, .exe_ino = s->exe_ino,
		.stack_len = unwind ? (uint32_t)MIN(s->stack_len, (size_t)FR_USTACK_COPY) : 0,
		.nframes = unwind ? 0 : (uint32_t)MIN(nframes, max),
	};
	struct iovec iov[2] = { { &q, sizeof(q) },
				{ unwind ? (void *)s->stack : (void *)frames, unwind ? q.stack_len : q.nframes * 8 } };
	ssize_t n;
	size_t got = 0;

	memcpy(q.regs, s->regs, sizeof(q.regs));
	if (start - p->window >= NSEC_PER_SEC) {
		p->window = start;
		p->spent = p->spent_rare = 0;
	}
	if ((s->rare ? p->spent_rare : p->spent) >= p->budget) {
		/* a file slow to parse, short of the deadline each time, must
		 * not keep the daemon's loop waiting */
		p->st.over_budget++;
		goto leaf;
	}
	p->py = (struct fr_py_probe){};
	if (max < 2 || ensure(p) < 0)
		goto skip;
	p->req_pid = s->pid;
	p->req_ppid = s->ppid;
	*p->crumb = (struct fr_parse_crumb){};
	n = flush_notes(p, deadline);
	if (n == 0)
		n = send_msg(p, iov, 2, -EBADF, deadline);
	while (n == 0) {
		n = recv_msg(p, deadline);
		if (n > 0 && msg_type(p) == FR_PM_NEED)
			n = serve(p, (size_t)n, deadline);
		else if (n > 0 && msg_type(p) == FR_PM_FRAMES)
			n = take_frames(p, (size_t)n, max, out, desc, &got) < 0 ? -EBADMSG : 1;
		else if (n > 0)
			n = -EBADMSG;
	}
	*(s->rare ? &p->spent_rare : &p->spent) += fr_now_ns(CLOCK_MONOTONIC) - start;
	if (n < 0) {
		fail(p, failure_of(n));
		goto skip;
	}
	p->st.stacks++;
	p->st.wait_ns_max = MAX(p->st.wait_ns_max, fr_now_ns(CLOCK_MONOTONIC) - start);
	return got;
skip:
	p->st.skipped++;
leaf:
	if (unwind) {
		out[0] = s->regs[16];
		out[1] = FR_FRAME_UNWIND_FAILED;
		got = 2;
	} else {
		/* (none at all: a stack copy that came back empty) */
		got = frames ? MIN(nframes, max) : 0;
		if (got)
			memcpy(out, frames, got * sizeof(uint64_t));
	}
	for (size_t i = 0; i < got; i++)
		desc[i] = (struct fr_frame_desc){};
	return got;
}

void fr_parser_python(const struct fr_parser *p, struct fr_py_probe *ret)
{
	*ret = p->py;
}

void fr_parser_keep(struct fr_parser *p)
{
	uint8_t *m = p->msg;

	p->msg = p->kept;
	p->kept = m;
}

void fr_parser_tick(struct fr_parser *p)
{
	uint64_t deadline = fr_now_ns(CLOCK_MONOTONIC) + p->timeout;
	struct fr_pm_stats *s = (void *)p->msg;
	struct fr_pm_trim trim = { .type = FR_PM_TRIM, .heap_max = p->heap_max };
	struct iovec iov = { &trim, sizeof(trim) };
	ssize_t n;

	if (p->sock < 0)
		return;
	p->req_pid = p->req_ppid = 0;
	*p->crumb = (struct fr_parse_crumb){};
	n = flush_notes(p, deadline);
	if (n == 0)
		n = send_msg(p, &iov, 1, -EBADF, deadline);
	if (n == 0)
		n = recv_msg(p, deadline);
	if (n > 0 && (n != (ssize_t)sizeof(*s) || s->type != FR_PM_STATS))
		n = -EBADMSG;
	if (n < 0) {
		fail(p, failure_of(n));
		return;
	}
	p->last = *s;
}

void fr_parser_get_stats(const struct fr_parser *p, struct fr_parser_stats *ret, struct fr_symbolizer_stats *sym,
			 struct fr_unwinder_stats *unw, struct fr_perf_maps_stats *jit)
{
	struct fr_pm_stats all = p->base;

	add_stats(&all, &p->last);
	*ret = p->st;
	ret->pid = p->pid;
	ret->heap_bytes = p->last.heap;
	*sym = all.sym;
	*unw = all.unw;
	*jit = all.jit;
}
