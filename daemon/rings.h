/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-CPU ring buffers and loss counters every BPF object writes to.
 * Created here, before any object loads, then handed to each object with
 * bpf_map__reuse_fd(); consumed through one epoll fd.
 */
#ifndef FR_RINGS_H
#define FR_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/event.h"

struct fr_rings;

/* Called for every record, with the CPU whose ring it came from. */
typedef int (*fr_ring_cb)(void *userdata, unsigned cpu, const void *data, size_t size);

int fr_rings_new(uint64_t ring_size, fr_ring_cb cb, void *userdata, struct fr_rings **ret);
struct fr_rings *fr_rings_free(struct fr_rings *r);

unsigned fr_rings_ncpu(const struct fr_rings *r);
int fr_rings_outer_fd(const struct fr_rings *r);
int fr_rings_counters_fd(const struct fr_rings *r);
/* The py_exes map every object that walks Python frames shares
 * (bpf/python.bpf.h, daemon/python.h). */
int fr_rings_py_exes_fd(const struct fr_rings *r);
/* Its py_seen and py_threads maps, shared the same way. */
int fr_rings_py_seen_fd(const struct fr_rings *r);
int fr_rings_py_threads_fd(const struct fr_rings *r);
int fr_rings_epoll_fd(const struct fr_rings *r);
/* Drains every ring; returns records consumed or -errno. */
int fr_rings_consume(struct fr_rings *r);
/* Drains the rings in turn until this thread's CPU time reaches
 * @cpu_deadline_ns (CLOCK_THREAD_CPUTIME_ID; 0: no limit).  What is left
 * stays in the rings; *@exhausted says whether the deadline cut it short.
 * Returns records consumed or -errno. */
int fr_rings_consume_until(struct fr_rings *r, uint64_t cpu_deadline_ns, bool *exhausted);
/* This thread's CPU time in ns, the clock of the deadline above. */
uint64_t fr_rings_thread_cpu_ns(void);

/* Reads the counters of @src for every CPU into @out (ncpu entries). */
int fr_rings_read_counters(const struct fr_rings *r, unsigned src, struct fr_counters *out);

#endif
