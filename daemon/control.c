/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "control.h"
#include "log.h"
#include "unix-socket.h"

/* A request is a small JSON object; anything larger is refused */
#define REQUEST_MAX FR_CONTROL_REQUEST_MAX

/* Requests of one uid other than root: RATE_BURST at once, then
 * RATE_PER_S a second.  One past that is refused ("rate limited") only
 * after RATE_DELAY_USEC, its connection held meanwhile: a client asking
 * in a loop waits, and costs the loop a recv and a small reply per delay
 * (four of nobody's processes asking for status without pause took 77 %
 * of a CPU, issue 42).  Root's requests, and the other uids', are served
 * as before.  RATE_UIDS uids are followed at most: a new one takes the
 * slot of the one that asked longest ago. */
#define RATE_PER_S 10
#define RATE_BURST 20
#define RATE_UIDS 64
#define RATE_DELAY_USEC (500 * 1000ULL)

struct rate {
	uid_t uid;
	double tokens;
	uint64_t at; /* CLOCK_MONOTONIC usec of its last request */
};

struct fr_control {
	int fd;
	char *path;
	sd_event_source *src;
	fr_control_handler h;
	void *userdata;
	/* the group that may change state besides root */
	char *group;
	gid_t gid;
	bool have_group;
	bool group_logged;
	uint64_t denied;
	struct conn *conns; /* waiting for their requests */
	size_t nconns;
	uint64_t evicted;   /* silent connections dropped for new ones */
	struct rate rates[RATE_UIDS];
	size_t nrates;
	uint64_t rate_limited; /* requests refused (late) for their uid's rate */
};

static void reply(int fd, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	(void)send(fd, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void reply_error(int fd, const char *msg)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(msg));
	reply(fd, o);
	json_object_put(o);
}

bool fr_control_privileged(const struct fr_control *c, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups)
{
	if (uid == 0)
		return true;
	if (!c->have_group)
		return false;
	if (gid == c->gid)
		return true;
	for (size_t i = 0; i < ngroups; i++)
		if (groups[i] == c->gid)
			return true;
	return false;
}

/* The peer's ids as of its connect().  Anything the kernel does not tell
 * leaves the peer unprivileged: failing closed. */
static void peer_credentials(const struct fr_control *c, int fd, struct fr_control_peer *ret)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cred);
	gid_t small[64], *groups = small;
	_cleanup_free_ gid_t *big = NULL;

	*ret = (struct fr_control_peer){ .uid = (uid_t)-1, .gid = (gid_t)-1 };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
		return;
	ret->pid = cred.pid;
	ret->uid = cred.uid;
	ret->gid = cred.gid;
	/* supplementary groups; ERANGE says how much room they need */
	len = sizeof(small);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE || !(big = malloc(len)))
			len = 0;
		else if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, (groups = big), &len) < 0)
			len = 0;
	}
	ret->privileged = fr_control_privileged(c, cred.uid, cred.gid, groups, len / sizeof(gid_t));
}

void fr_control_set_group(struct fr_control *c, const char *name)
{
	struct group *gr = getgrnam(name);
	bool same = c->group_logged && c->group && !strcmp(c->group, name) && c->have_group == (gr != NULL) &&
		    (!gr || gr->gr_gid == c->gid);

	c->have_group = gr != NULL;
	c->gid = gr ? gr->gr_gid : (gid_t)-1;
	free(c->group);
	c->group = strdup(name);
	if (same)
		return;
	c->group_logged = true;
	if (gr)
		log_info("Freeze, mark and annotations are accepted from root and group '%s' (gid %u); "
			 "status from anyone.", name, (unsigned)c->gid);
	else
		log_notice("Group '%s' (control.group) does not exist: only root may freeze, mark or annotate; "
			   "status stays open to anyone.", name);
}

struct json_object *fr_control_deny(struct fr_control *c, const struct fr_control_peer *peer, const char *what)
{
	struct json_object *o = json_object_new_object();
	char msg[256];

	c->denied++;
	if (c->denied == 1 || c->denied % 100 == 0)
		log_notice("Refused %s from pid %d (uid %u, gid %u): not root or in group '%s'; %" PRIu64
			   " refused so far.", what, (int)peer->pid, (unsigned)peer->uid, (unsigned)peer->gid,
			   c->group ? c->group : "", c->denied);
	if (c->have_group)
		snprintf(msg, sizeof(msg), "permission denied: %s needs root or membership of group '%s'", what,
			 c->group);
	else
		snprintf(msg, sizeof(msg), "permission denied: %s needs root (group '%s' does not exist)", what,
			 c->group ? c->group : "");
	json_object_object_add(o, "error", json_object_new_string(msg));
	json_object_object_add(o, "denied", json_object_new_boolean(1));
	return o;
}

bool fr_control_group(const struct fr_control *c, gid_t *ret)
{
	*ret = c->gid;
	return c->have_group;
}

uint64_t fr_control_denied(const struct fr_control *c)
{
	return c->denied;
}

uint64_t fr_control_rate_limited(const struct fr_control *c)
{
	return c->rate_limited;
}

/* Whether @uid may make one more request now (a token of its bucket). */
static bool rate_take(struct fr_control *c, uid_t uid, uint64_t now)
{
	struct rate *r = NULL, *oldest = NULL;

	if (uid == 0)
		return true;
	for (size_t i = 0; i < c->nrates && !r; i++) {
		if (c->rates[i].uid == uid)
			r = &c->rates[i];
		else if (!oldest || c->rates[i].at < oldest->at)
			oldest = &c->rates[i];
	}
	if (!r) {
		r = c->nrates < RATE_UIDS ? &c->rates[c->nrates++] : oldest;
		*r = (struct rate){ .uid = uid, .tokens = RATE_BURST, .at = now };
	}
	r->tokens = MIN((double)RATE_BURST, r->tokens + (double)(now - r->at) * RATE_PER_S / 1e6);
	r->at = now;
	if (r->tokens < 1)
		return false;
	r->tokens -= 1;
	return true;
}

/* A connection waiting for its request.  The loop never waits for a
 * client: each is read when it has written, and dropped when it says
 * nothing for CONN_TIMEOUT_USEC.  At most CONN_MAX wait at once: a new one
 * past that drops the one that has waited longest (a client sends its
 * request as it connects, so silent ones cannot keep others out). */
#define CONN_MAX 64
#define CONN_TIMEOUT_USEC (5 * 1000000ULL)

struct conn {
	struct fr_control *c;
	int fd;
	sd_event_source *io, *timer;
	bool limited; /* its request is refused when the timer fires */
	struct conn *prev, *next;
};

static void conn_free(struct conn *x)
{
	struct fr_control *c = x->c;

	sd_event_source_disable_unref(x->io);
	sd_event_source_disable_unref(x->timer);
	closep(&x->fd);
	if (x->prev)
		x->prev->next = x->next;
	else
		c->conns = x->next;
	if (x->next)
		x->next->prev = x->prev;
	c->nconns--;
	free(x);
}

/* One request, one reply. */
static void handle(struct fr_control *c, int cfd, const struct fr_control_peer *peer, char *buf, ssize_t n)
{
	struct fr_control_request req;
	struct json_object *resp;
	const char *why;

	if (fr_control_request_parse(buf, (size_t)n, &req, &why) < 0) {
		reply_error(cfd, why);
		return;
	}
	resp = c->h(&req, peer, c->userdata);
	fr_control_request_done(&req);
	if (!resp) {
		reply_error(cfd, "internal error");
		return;
	}
	reply(cfd, resp);
	json_object_put(resp);
}

static int on_request(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct conn *x = userdata;
	struct fr_control *c = x->c;
	char buf[REQUEST_MAX + 1];
	ssize_t n = recv(fd, buf, REQUEST_MAX + 1, MSG_DONTWAIT);
	struct fr_control_peer peer;
	uint64_t now;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n > 0) {
		peer_credentials(c, fd, &peer);
		if (sd_event_now(sd_event_source_get_event(s), CLOCK_MONOTONIC, &now) >= 0 &&
		    !rate_take(c, peer.uid, now) &&
		    sd_event_source_set_enabled(x->io, SD_EVENT_OFF) >= 0 &&
		    sd_event_source_set_time_relative(x->timer, RATE_DELAY_USEC) >= 0) {
			x->limited = true;
			c->rate_limited++;
			if (c->rate_limited == 1 || c->rate_limited % 1000 == 0)
				log_notice("Control requests of uid %u past %d a second are refused after %llu ms "
					   "(%" PRIu64 " so far).", (unsigned)peer.uid, RATE_PER_S,
					   RATE_DELAY_USEC / 1000, c->rate_limited);
			return 0;
		}
		handle(c, fd, &peer, buf, n);
	}
	conn_free(x);
	return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct conn *x = userdata;

	if (x->limited)
		reply_error(x->fd, "rate limited: too many requests from this user; try again in a second");
	conn_free(x);
	return 0;
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fr_control *c = userdata;
	_cleanup_close_ int cfd = -EBADF;
	struct conn *x;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0)
		return 0;
	if (c->nconns >= CONN_MAX) {
		struct conn *oldest = c->conns;
		while (oldest->next)
			oldest = oldest->next;
		c->evicted++;
		if (c->evicted == 1 || c->evicted % 100 == 0)
			log_notice("%zu control connections were waiting for their requests: dropped the oldest (%" PRIu64
				   " so far).", c->nconns, c->evicted);
		conn_free(oldest);
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return 0;
	*x = (struct conn){ .c = c, .fd = TAKE_FD(cfd), .next = c->conns };
	if (c->conns)
		c->conns->prev = x;
	c->conns = x;
	c->nconns++;
	if (sd_event_add_io(sd_event_source_get_event(s), &x->io, x->fd, EPOLLIN, on_request, x) < 0 ||
	    sd_event_add_time_relative(sd_event_source_get_event(s), &x->timer, CLOCK_MONOTONIC, CONN_TIMEOUT_USEC, 0,
				       on_timeout, x) < 0)
		conn_free(x);
	return 0;
}

int fr_control_new(sd_event *e, const char *path, fr_control_handler h, void *userdata,
		   struct fr_control **ret)
{
	struct fr_control *c = calloc(1, sizeof(*c));
	int k;

	if (!c)
		return -ENOMEM;
	c->h = h;
	c->userdata = userdata;
	c->gid = (gid_t)-1; /* root only until fr_control_set_group() */
	c->path = strdup(path);
	c->fd = c->path ? fr_unix_socket_bind(path, SOCK_SEQPACKET, false, 0666) : -ENOMEM;
	if (c->fd < 0) {
		k = c->fd;
		goto fail;
	}
	k = sd_event_add_io(e, &c->src, c->fd, EPOLLIN, on_connection, c);
	if (k < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	fr_control_free(c);
	return k;
}

struct fr_control *fr_control_free(struct fr_control *c)
{
	if (!c)
		return NULL;
	while (c->conns)
		conn_free(c->conns);
	sd_event_source_disable_unref(c->src);
	fr_unix_socket_close(c->fd, c->path);
	free(c->path);
	free(c->group);
	free(c);
	return NULL;
}
