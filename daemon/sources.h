/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BPF sources: one skeleton per concern (bpf/<name>.bpf.c), all sharing
 * the rings and counters.  A source that fails to load or attach is logged
 * and reported as not attached; the others keep recording.
 */
#ifndef FR_SOURCES_H
#define FR_SOURCES_H

#include <stdbool.h>
#include <sys/types.h>

#include "../lib/conf.h"
#include "rings.h"

struct fr_sources;

struct fr_source_state {
	const char *name;
	bool enabled;  /* by config */
	bool attached; /* really recording */
};

/* The daemon's tgid as the kernel's initial PID namespace numbers it: the
 * pid BPF records (bpf_get_current_pid_tgid()), and @self below.  Not
 * getpid() when the daemon runs in a child PID namespace (a container
 * without the host's).  Returns 0 or -errno (BPF unavailable). */
int fr_kernel_tgid(pid_t *ret);

/* @self: the daemon's tgid from fr_kernel_tgid(); its events are not
 * recorded. */
int fr_sources_start(const struct fr_conf *c, const struct fr_rings *rings, pid_t self,
		     struct fr_sources **ret);
struct fr_sources *fr_sources_free(struct fr_sources *s);

/* Applies tunables that live in BPF globals, without re-attaching. */
void fr_sources_apply(struct fr_sources *s, const struct fr_conf *c);
/* Reload: starts the sources @c enables that are not running (also those
 * that failed before), stops those it disables, moves the sampler to a
 * new frequency, and applies the tunables of the rest, which stay
 * attached.  Returns a bit (1 << source) per source started, stopped or
 * re-attached. */
unsigned fr_sources_update(struct fr_sources *s, const struct fr_conf *c);

/* State of source @src (enum fr_source). */
void fr_sources_state(const struct fr_sources *s, unsigned src, struct fr_source_state *ret);
unsigned fr_sources_attached(const struct fr_sources *s);
/* The sampler's event ("cycles", "cpu-clock") and frequency, or NULL. */
const char *fr_sources_sampler_event(const struct fr_sources *s, unsigned *hz);
/* Has every CPU write what its sources hold back (switch batches) to its
 * ring, before a drain.  Returns the records that could not be. */
unsigned fr_sources_flush(struct fr_sources *s);
/* Whether some source holds records back from its rings (switch batches:
 * the sched source in full mode). */
bool fr_sources_hold_back(const struct fr_sources *s);
/* Waker events the rings had no room for (sched.bpf.c), since the sched
 * source started. */
/* Descriptions of Python code objects the rings had no room for
 * (bpf/python.bpf.h). */
uint64_t fr_sources_py_drops(const struct fr_sources *s);
uint64_t fr_sources_waker_drops(const struct fr_sources *s);
/* The block source's per-device latency histograms, or -1 if not running. */
int fr_sources_block_hist_fd(const struct fr_sources *s);
/* The stack parser's helper is @pid (0: none runs): its samples and
 * waits are not recorded, as the daemon's are not. */
void fr_sources_set_helper(struct fr_sources *s, pid_t pid);

const char *fr_source_name(unsigned src);

#endif
