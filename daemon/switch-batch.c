/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../bpf/event.h"
#include "log.h"
#include "switch-batch.h"

struct fr_switch_batches {
	const struct fr_switch_batch *map; /* mmap of the array, read only */
	size_t map_size;
	int prog_fd;
	unsigned ncpu;
	unsigned warned_cpu; /* +1: the CPU last warned about */
};

int fr_switch_batches_new(int map_fd, int flush_prog_fd, unsigned ncpu, struct fr_switch_batches **ret)
{
	struct fr_switch_batches *b = calloc(1, sizeof(*b));
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (!b)
		return -ENOMEM;
	/* the kernel maps whole pages of the array's values */
	b->map_size = ((size_t)ncpu * sizeof(struct fr_switch_batch) + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, b->map_size, PROT_READ, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		int k = -errno;
		free(b);
		return k;
	}
	b->map = p;
	b->prog_fd = flush_prog_fd;
	b->ncpu = ncpu;
	*ret = b;
	return 0;
}

struct fr_switch_batches *fr_switch_batches_free(struct fr_switch_batches *b)
{
	if (!b)
		return NULL;
	munmap((void *)b->map, b->map_size);
	free(b);
	return NULL;
}

unsigned fr_switch_batches_flush(struct fr_switch_batches *b)
{
	unsigned held = 0;

	if (!b)
		return 0;
	for (unsigned cpu = 0; cpu < b->ncpu; cpu++) {
		/* a hint: the CPU may add one right after, and the next drain
		 * takes that */
		uint32_t n = __atomic_load_n(&b->map[cpu].n, __ATOMIC_RELAXED);
		LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
		int k;

		if (n == 0)
			continue;
		k = bpf_prog_test_run_opts(b->prog_fd, &o);
		if (k < 0) {
			held += n;
			if (b->warned_cpu != cpu + 1)
				log_warning_errno(k, "Failed to have CPU %u write the %u switch records it holds: %m", cpu, n);
			b->warned_cpu = cpu + 1;
		}
	}
	return held;
}
