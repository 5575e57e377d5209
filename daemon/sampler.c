/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "sampler.h"

struct fr_sampler {
	unsigned ncpu, hz;
	const char *event;
	int *fds;
	struct bpf_link **links;
};

static int open_event(unsigned cpu, unsigned hz, bool hardware)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hardware ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? negative_errno() : fd;
}

int fr_sampler_attach(struct bpf_program *prog, unsigned ncpu, unsigned hz, struct fr_sampler **ret)
{
	struct fr_sampler *s = calloc(1, sizeof(*s));
	int k;

	if (!s)
		return -ENOMEM;
	s->ncpu = ncpu;
	s->hz = hz;
	s->fds = malloc(ncpu * sizeof(int));
	s->links = calloc(ncpu, sizeof(*s->links));
	if (!s->fds || !s->links) {
		fr_sampler_free(s);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < ncpu; i++)
		s->fds[i] = -EBADF;
	/* the PMU if there is one (KERNEL-FACTS: not on the test machines) */
	s->event = "cycles";
	k = open_event(0, hz, true);
	if (k < 0) {
		s->event = "cpu-clock";
	} else
		close(k);
	for (unsigned i = 0; i < ncpu; i++) {
		s->fds[i] = open_event(i, hz, strcmp(s->event, "cycles") == 0);
		if (s->fds[i] == -ENODEV)
			continue; /* a possible CPU that is not online */
		if (s->fds[i] < 0) {
			k = s->fds[i];
			fr_sampler_free(s);
			return k;
		}
		s->links[i] = bpf_program__attach_perf_event(prog, s->fds[i]);
		if (!s->links[i]) {
			k = -errno;
			fr_sampler_free(s);
			return k;
		}
	}
	*ret = s;
	return 0;
}

struct fr_sampler *fr_sampler_free(struct fr_sampler *s)
{
	if (!s)
		return NULL;
	for (unsigned i = 0; s->links && i < s->ncpu; i++)
		bpf_link__destroy(s->links[i]);
	for (unsigned i = 0; s->fds && i < s->ncpu; i++)
		closep(&s->fds[i]);
	free(s->links);
	free(s->fds);
	free(s);
	return NULL;
}

const char *fr_sampler_event(const struct fr_sampler *s)
{
	return s ? s->event : NULL;
}

unsigned fr_sampler_hz(const struct fr_sampler *s)
{
	return s ? s->hz : 0;
}
