/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "rings.h"

struct ring_ctx {
	struct fr_rings *owner;
	unsigned cpu;
};

struct fr_rings {
	unsigned ncpu;
	int outer_fd, counters_fd;
	int *fds;
	struct ring_ctx *ctx;
	struct ring_buffer *rb;
	fr_ring_cb cb;
	void *userdata;
};

static int on_sample(void *ctx, void *data, size_t size)
{
	struct ring_ctx *c = ctx;
	return c->owner->cb(c->owner->userdata, c->cpu, data, size);
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
	r->outer_fd = r->counters_fd = -EBADF;
	r->cb = cb;
	r->userdata = userdata;
	r->fds = malloc(sizeof(int) * r->ncpu);
	r->ctx = calloc(r->ncpu, sizeof(*r->ctx));
	if (!r->fds || !r->ctx) {
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
	for (unsigned i = 0; i < r->ncpu; i++) {
		r->ctx[i] = (struct ring_ctx){ .owner = r, .cpu = i };
		if (i == 0) {
			r->rb = ring_buffer__new(r->fds[0], on_sample, &r->ctx[0], NULL);
			if (!r->rb) {
				k = -errno;
				goto fail;
			}
		} else {
			k = ring_buffer__add(r->rb, r->fds[i], on_sample, &r->ctx[i]);
			if (k < 0)
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
	ring_buffer__free(r->rb);
	if (r->fds)
		for (unsigned i = 0; i < r->ncpu; i++)
			closep(&r->fds[i]);
	closep(&r->outer_fd);
	closep(&r->counters_fd);
	free(r->fds);
	free(r->ctx);
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

int fr_rings_epoll_fd(const struct fr_rings *r)
{
	return ring_buffer__epoll_fd(r->rb);
}

int fr_rings_consume(struct fr_rings *r)
{
	return ring_buffer__consume(r->rb);
}

int fr_rings_read_counters(const struct fr_rings *r, unsigned src, struct fr_counters *out)
{
	uint32_t key = src;

	return bpf_map_lookup_elem(r->counters_fd, &key, out);
}
