/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/conditions.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "log.h"
#include "pressure.h"

/* The kernel's PSI trigger windows (kernel/sched/psi.c: WINDOW_MIN_US,
 * WINDOW_MAX_US); a longer window is polled. */
#define KERNEL_WINDOW_MIN_NS (NSEC_PER_SEC / 2)
#define KERNEL_WINDOW_MAX_NS (10 * NSEC_PER_SEC)
#define POLL_NS NSEC_PER_SEC
#define RETRY_NS (10 * NSEC_PER_SEC)
/* a PSI file is 2 lines of under 80 bytes */
#define FILE_MAX 512

enum mode { STARTING, WAITING, KERNEL, POLLED };
static const char *const mode_names[] = { [STARTING] = "starting", [WAITING] = "waiting", [KERNEL] = "kernel",
					  [POLLED] = "polled" };

struct sample {
	uint64_t mono_ns, total_us;
};

struct fr_pressure {
	sd_event *event;
	sd_event_source *io, *timer;
	int cgroup_fd;      /* the cgroup2 mount (ours), -1: none */
	char rel[PATH_MAX]; /* below it, "" for /proc/pressure */
	char path[PATH_MAX];
	const char *kind;   /* "some" or "full" */
	uint32_t ppm;
	uint64_t over_ns;
	int fd;
	enum mode mode;
	int error;          /* why it waits (errno) */
	int kernel_error;   /* why it is polled, not a kernel trigger (0: window too long) */
	struct sample *hist; /* polled: a ring of the last totals */
	size_t cap, n, head;
	uint64_t last_fire_ns;
	uint64_t fired;
	fr_pressure_cb cb;
	void *userdata;
};

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);

static int open_file(struct fr_pressure *w, int flags)
{
	if (!w->rel[0])
		return open(w->path, flags | O_CLOEXEC | O_NOFOLLOW);
	if (w->cgroup_fd < 0)
		return -ENOENT;
	return openat(w->cgroup_fd, w->rel, flags | O_CLOEXEC | O_NOFOLLOW);
}

static void set_timer(struct fr_pressure *w, uint64_t after_ns)
{
	int k;

	if (!w->timer)
		k = sd_event_add_time_relative(w->event, &w->timer, CLOCK_MONOTONIC, after_ns / 1000, 10000, on_timer, w);
	else {
		k = sd_event_source_set_time_relative(w->timer, after_ns / 1000);
		if (k >= 0)
			k = sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
	}
	if (k < 0)
		log_warning_errno(k, "Pressure rule on %s: cannot arm its timer: %m", w->path);
}

static void stop(struct fr_pressure *w)
{
	w->io = sd_event_source_disable_unref(w->io);
	closep(&w->fd);
	w->n = w->head = 0;
}

/* Not there, or gone: try again later. */
static void wait_for_file(struct fr_pressure *w, int error)
{
	if (w->mode != WAITING || w->error != error)
		log_warning_errno(error, "Pressure rule on %s: %m; trying again every %u s.", w->path,
				  (unsigned)(RETRY_NS / NSEC_PER_SEC));
	stop(w);
	w->mode = WAITING;
	w->error = error;
	set_timer(w, RETRY_NS);
}

/* The file's line of the rule's kind, into @line. */
static int read_line(struct fr_pressure *w, char *line, size_t len)
{
	char buf[FILE_MAX];
	ssize_t n;
	char *l, *end;

	n = pread(w->fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	for (l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, w->kind, 4) && l[4] == ' ') {
			end = strchr(l, '\n');
			snprintf(line, len, "%.*s", (int)(end ? end - l : (ptrdiff_t)strlen(l)), l);
			return 0;
		}
	return -EBADMSG;
}

static void fire(struct fr_pressure *w, uint32_t share_ppm, uint64_t now)
{
	char line[FILE_MAX] = "";

	if (read_line(w, line, sizeof(line)) < 0)
		line[0] = 0;
	w->last_fire_ns = now;
	w->fired++;
	w->cb(w, share_ppm, line, w->userdata);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fr_pressure *w = userdata;

	if (revents & (EPOLLERR | EPOLLHUP))
		/* the cgroup was removed */
		wait_for_file(w, ENODEV);
	else if (revents & EPOLLPRI)
		fire(w, w->ppm, fr_now_ns(CLOCK_MONOTONIC));
	return 0;
}

/* A PSI trigger of the rule's threshold, where the kernel takes one. */
static int start_kernel(struct fr_pressure *w)
{
	uint64_t window_us = w->over_ns / 1000, stall_us = window_us * w->ppm / 1000000;
	char t[64];
	int k;

	if (w->over_ns < KERNEL_WINDOW_MIN_NS || w->over_ns > KERNEL_WINDOW_MAX_NS)
		return -ERANGE;
	w->fd = open_file(w, O_RDWR | O_NONBLOCK);
	if (w->fd < 0)
		return -errno;
	snprintf(t, sizeof(t), "%s %" PRIu64 " %" PRIu64, w->kind, MAX(stall_us, (uint64_t)1), window_us);
	/* the string with its NUL, as the kernel's documentation writes it */
	if (write(w->fd, t, strlen(t) + 1) < 0) {
		k = -errno;
		closep(&w->fd);
		return k;
	}
	k = sd_event_add_io(w->event, &w->io, w->fd, EPOLLPRI, on_io, w);
	if (k < 0)
		closep(&w->fd);
	return k;
}

static void start(struct fr_pressure *w)
{
	int k = start_kernel(w);

	if (k >= 0) {
		if (w->mode != KERNEL)
			log_info("Pressure rule on %s: a kernel trigger (%s %.2f%% of %.1f s).", w->path, w->kind,
				 w->ppm / 1e4, w->over_ns / 1e9);
		w->mode = KERNEL;
		w->error = 0;
		return;
	}
	if (k == -ENOENT || k == -ENODEV) {
		wait_for_file(w, -k);
		return;
	}
	w->kernel_error = k == -ERANGE ? 0 : -k;
	w->fd = open_file(w, O_RDONLY);
	if (w->fd < 0) {
		wait_for_file(w, errno);
		return;
	}
	if (w->mode != POLLED) {
		if (w->kernel_error)
			log_info_errno(-w->kernel_error, "Pressure rule on %s: no kernel trigger (%m): read every second.",
				       w->path);
		else
			log_info("Pressure rule on %s: read every second (a window over %u s).", w->path,
				 (unsigned)(KERNEL_WINDOW_MAX_NS / NSEC_PER_SEC));
	}
	w->mode = POLLED;
	w->error = 0;
	w->n = w->head = 0;
	set_timer(w, 0);
}

/* The newest sample at least the window old, or NULL. */
static const struct sample *window_start(const struct fr_pressure *w, uint64_t now)
{
	for (size_t i = 0; i < w->n; i++) {
		const struct sample *s = &w->hist[(w->head + w->cap - 1 - i) % w->cap];
		if (now - s->mono_ns >= w->over_ns)
			return s;
	}
	return NULL;
}

static void poll_once(struct fr_pressure *w)
{
	char line[FILE_MAX], *tot;
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC), total;
	const struct sample *then;
	int k = read_line(w, line, sizeof(line));

	if (k < 0 || !(tot = strstr(line, " total=")) || sscanf(tot, " total=%" SCNu64, &total) != 1) {
		wait_for_file(w, k < 0 ? -k : EBADMSG);
		return;
	}
	w->hist[w->head] = (struct sample){ now, total };
	w->head = (w->head + 1) % w->cap;
	w->n = MIN(w->n + 1, w->cap);
	then = window_start(w, now);
	if (!then || total < then->total_us || (w->last_fire_ns && now - w->last_fire_ns < w->over_ns))
		return;
	uint64_t share = (total - then->total_us) * 1000000 / MAX((now - then->mono_ns) / 1000, (uint64_t)1);
	if (share >= w->ppm)
		fire(w, (uint32_t)MIN(share, (uint64_t)1000000), now);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct fr_pressure *w = userdata;

	if (w->mode == WAITING)
		start(w);
	else if (w->mode == POLLED) {
		poll_once(w);
		if (w->mode == POLLED)
			set_timer(w, POLL_NS);
	}
	return 0;
}

int fr_pressure_new(sd_event *e, const struct fr_rule *r, int cgroup_fd, fr_pressure_cb cb, void *userdata,
		    struct fr_pressure **ret)
{
	struct fr_pressure *w = calloc(1, sizeof(*w));
	const char *res = fr_pressure_resource_name(r->pressure.resource);

	if (!w)
		return -ENOMEM;
	w->event = e;
	w->fd = w->cgroup_fd = -EBADF;
	w->kind = r->pressure.full ? "full" : "some";
	w->ppm = r->pressure.ppm;
	w->over_ns = r->pressure.over_ns;
	w->cb = cb;
	w->userdata = userdata;
	/* a sample a second over the window, and one at each end */
	w->cap = (size_t)(w->over_ns / POLL_NS) + 3;
	w->hist = calloc(w->cap, sizeof(*w->hist));
	if (!w->hist) {
		free(w);
		return -ENOMEM;
	}
	if (r->cgroup && strcmp(r->cgroup, "/") != 0) {
		snprintf(w->rel, sizeof(w->rel), "%s/%s.pressure", r->cgroup + 1, res);
		snprintf(w->path, sizeof(w->path), "cgroup %s (%s.pressure)", r->cgroup, res);
		if (cgroup_fd >= 0)
			w->cgroup_fd = fcntl(cgroup_fd, F_DUPFD_CLOEXEC, 3);
	} else
		snprintf(w->path, sizeof(w->path), "/proc/pressure/%s", res);
	w->mode = STARTING;
	start(w);
	*ret = w;
	return 0;
}

struct fr_pressure *fr_pressure_free(struct fr_pressure *w)
{
	if (!w)
		return NULL;
	stop(w);
	sd_event_source_disable_unref(w->timer);
	closep(&w->cgroup_fd);
	free(w->hist);
	free(w);
	return NULL;
}

struct json_object *fr_pressure_status(const struct fr_pressure *w)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "file", json_object_new_string(w->path));
	json_object_object_add(o, "mode", json_object_new_string(mode_names[w->mode]));
	if (w->mode == WAITING)
		json_object_object_add(o, "error", json_object_new_string(strerror(w->error)));
	if (w->mode == POLLED && w->kernel_error)
		json_object_object_add(o, "no_kernel_trigger", json_object_new_string(strerror(w->kernel_error)));
	json_object_object_add(o, "crossed", json_object_new_uint64(w->fired));
	return o;
}
