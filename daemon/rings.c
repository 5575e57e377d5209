/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One libbpf ring_buffer per CPU, all behind one epoll fd of our own, so
 * that each ring can be drained on its own: under overload the daemon
 * drains the rings in turn until its CPU budget for the drain window is
 * spent and leaves the rest to overflow, which BPF counts as drops.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "rings.h"

struct ring_ctx {
	struct fr_rings *owner;
	unsigned cpu;
};

/* Returned by on_sample to make libbpf stop; the records after it stay. */
#define STOP_BUDGET (-ECANCELED)
/* Records between two looks at the wall clock (vDSO, ~20 ns).  The
 * thread's CPU time takes a system call (~1 us: it locks the run queue);
 * read every 64 records it was 5 % of the daemon's CPU in full mode.  A
 * thread runs no longer than the wall clock moves, so it is read only once
 * the wall clock has moved as far as the budget left when it was read
 * last: far from the deadline, once a drain. */
#define BUDGET_STRIDE 64

struct fr_rings {
	unsigned ncpu;
	int outer_fd, counters_fd, py_exes_fd, py_seen_fd, py_threads_fd, epoll_fd;
	int *fds;
	struct ring_ctx *ctx;
	struct ring_buffer **rb; /* one per CPU */
	fr_ring_cb cb;
	void *userdata;
	unsigned next;           /* ring drained first next time: fairness */
	uint64_t deadline;       /* thread CPU time (ns) to stop at; 0: none */
	uint64_t cpu_seen;       /* thread CPU time when last read */
	uint64_t wall_seen;      /* CLOCK_MONOTONIC then */
	unsigned since_look;
	bool stopped;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct ring_ctx *c = ctx;
	struct fr_rings *r = c->owner;

	int k = r->cb(r->userdata, c->cpu, data, size);

	/* libbpf has already moved past this record, whatever we return:
	 * look at the budget only once it is handled, never drop it */
	if (r->deadline && ++r->since_look >= BUDGET_STRIDE) {
		uint64_t wall = fr_now_ns(CLOCK_MONOTONIC), cpu;

		r->since_look = 0;
		if (wall - r->wall_seen < r->deadline - r->cpu_seen)
			return k; /* cannot have reached it */
		cpu = thread_cpu_ns();
		if (cpu >= r->deadline) {
			r->stopped = true;
			return STOP_BUDGET; /* libbpf stops; the rest stays in the ring */
		}
		r->cpu_seen = cpu;
		r->wall_seen = wall;
	}
	return k;
}

int fr_rings_new(uint64_t ring_size, fr_ring_cb cb, void *userdata, struct fr_rings **ret)
{
	LIBBPF_OPTS(bpf_map_create_opts, outer_opts);
	struct fr_rings *r;
	int n, k;

	n = libbpf_num_possible_cpus();
	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ncpu = (unsigned)n;
	r->outer_fd = r->counters_fd = r->py_exes_fd = r->py_seen_fd = r->py_threads_fd = r->epoll_fd = -EBADF;
	r->cb = cb;
	r->userdata = userdata;
	r->fds = malloc(sizeof(int) * r->ncpu);
	r->ctx = calloc(r->ncpu, sizeof(*r->ctx));
	r->rb = calloc(r->ncpu, sizeof(*r->rb));
	if (!r->fds || !r->ctx || !r->rb) {
		k = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < r->ncpu; i++)
		r->fds[i] = -EBADF;
	for (unsigned i = 0; i < r->ncpu; i++) {
		r->fds[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fr_ring", 0, 0, (uint32_t)ring_size, NULL);
		if (r->fds[i] < 0) {
			k = r->fds[i];
			goto fail;
		}
	}
	outer_opts.inner_map_fd = r->fds[0];
	r->outer_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "rings", sizeof(uint32_t),
				     sizeof(uint32_t), r->ncpu, &outer_opts);
	if (r->outer_fd < 0) {
		k = r->outer_fd;
		goto fail;
	}
	for (unsigned i = 0; i < r->ncpu; i++) {
		uint32_t key = i, val = (uint32_t)r->fds[i];
		k = bpf_map_update_elem(r->outer_fd, &key, &val, BPF_ANY);
		if (k < 0)
			goto fail;
	}
	r->counters_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "counters", sizeof(uint32_t),
					sizeof(struct fr_counters), FR_SRC__MAX, NULL);
	if (r->counters_fd < 0) {
		k = r->counters_fd;
		goto fail;
	}
	/* the CPython executables whose Python frames are walked (python.h) */
	r->py_exes_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "py_exes", sizeof(struct fr_py_exe_key),
				       sizeof(struct fr_py_exe), 256, NULL);
	if (r->py_exes_fd < 0) {
		k = r->py_exes_fd;
		goto fail;
	}
	/* and what the walks remember, one table for all of them (the
	 * programs' definitions say the sizes: bpf/python.bpf.h) */
	r->py_seen_fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "py_seen", sizeof(struct fr_py_seen_key), sizeof(uint64_t),
				       FR_PY_SEEN_MAX, NULL);
	r->py_threads_fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "py_threads", sizeof(uint32_t), sizeof(uint64_t),
					  FR_PY_THREADS_MAX, NULL);
	if (r->py_seen_fd < 0 || r->py_threads_fd < 0) {
		k = r->py_seen_fd < 0 ? r->py_seen_fd : r->py_threads_fd;
		goto fail;
	}
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0) {
		k = -errno;
		goto fail;
	}
	for (unsigned i = 0; i < r->ncpu; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		r->ctx[i] = (struct ring_ctx){ .owner = r, .cpu = i };
		r->rb[i] = ring_buffer__new(r->fds[i], on_sample, &r->ctx[i], NULL);
		if (!r->rb[i]) {
			k = -errno;
			goto fail;
		}
		if (epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(r->rb[i]), &ev) < 0) {
			k = -errno;
			goto fail;
		}
	}
	*ret = r;
	return 0;
fail:
	fr_rings_free(r);
	return k;
}

struct fr_rings *fr_rings_free(struct fr_rings *r)
{
	if (!r)
		return NULL;
	if (r->rb)
		for (unsigned i = 0; i < r->ncpu; i++)
			ring_buffer__free(r->rb[i]);
	closep(&r->epoll_fd);
	if (r->fds)
		for (unsigned i = 0; i < r->ncpu; i++)
			closep(&r->fds[i]);
	closep(&r->outer_fd);
	closep(&r->counters_fd);
	closep(&r->py_exes_fd);
	closep(&r->py_seen_fd);
	closep(&r->py_threads_fd);
	free(r->fds);
	free(r->ctx);
	free(r->rb);
	free(r);
	return NULL;
}

unsigned fr_rings_ncpu(const struct fr_rings *r)
{
	return r->ncpu;
}

int fr_rings_outer_fd(const struct fr_rings *r)
{
	return r->outer_fd;
}

int fr_rings_counters_fd(const struct fr_rings *r)
{
	return r->counters_fd;
}

int fr_rings_py_exes_fd(const struct fr_rings *r)
{
	return r->py_exes_fd;
}

int fr_rings_py_seen_fd(const struct fr_rings *r)
{
	return r->py_seen_fd;
}

int fr_rings_py_threads_fd(const struct fr_rings *r)
{
	return r->py_threads_fd;
}

int fr_rings_epoll_fd(const struct fr_rings *r)
{
	return r->epoll_fd;
}

/* Drains every ring once, starting with the one after the ring that was
 * cut short last time, so a budget never starves the same CPU. */
static int consume(struct fr_rings *r, uint64_t deadline)
{
	int n = 0, k = 0;

	r->deadline = deadline;
	r->since_look = 0;
	r->stopped = false;
	for (unsigned j = 0; j < r->ncpu && !r->stopped; j++) {
		unsigned i = (r->next + j) % r->ncpu;

		k = ring_buffer__consume(r->rb[i]);
		if (k == STOP_BUDGET) {
			r->next = i; /* where we stopped goes first next time */
			k = 0;
			break;
		}
		if (k < 0)
			break;
		n += k;
	}
	if (!r->stopped)
		r->next = (r->next + 1) % r->ncpu;
	r->deadline = 0;
	return k < 0 ? k : n;
}

int fr_rings_consume(struct fr_rings *r)
{
	return consume(r, 0);
}

int fr_rings_consume_until(struct fr_rings *r, uint64_t cpu_deadline_ns, bool *exhausted)
{
	int k;

	if (cpu_deadline_ns) {
		r->wall_seen = fr_now_ns(CLOCK_MONOTONIC);
		r->cpu_seen = thread_cpu_ns();
		if (r->cpu_seen >= cpu_deadline_ns) {
			*exhausted = true;
			return 0;
		}
	}
	k = consume(r, cpu_deadline_ns);
	*exhausted = r->stopped;
	return k;
}

uint64_t fr_rings_thread_cpu_ns(void)
{
	return thread_cpu_ns();
}

int fr_rings_read_counters(const struct fr_rings *r, unsigned src, struct fr_counters *out)
{
	uint32_t key = src;

	return bpf_map_lookup_elem(r->counters_fd, &key, out);
}
