/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The waker of each long wait, joined to the waiting thread's offcpu
 * record (issue 46).  The wakeup writes a struct fr_event_waker to the
 * ring of the CPU it ran on; the woken thread's offcpu record goes to the
 * ring of the CPU it next ran on, later, with FR_OFFCPU_WAKER when a waker
 * was written (bpf/sched.bpf.c).  A drain reads the rings one after the
 * other, so either may be read first: a waker is kept until its record
 * comes, and a record that says it has one and finds none is kept until
 * the end of the next drain (by then its waker, written before it, has
 * been read: a drain reads each ring to where it was when it got there),
 * then recorded without it, counted (the waker was dropped in a full
 * ring, or the drain was cut short).
 *
 * Bounded: FR_WAKERS_MAX wakers and as many records held, copies of the
 * events (up to 17 KiB with a user stack); a waker whose record never
 * came (dropped in its ring) leaves after FR_WAKERS_KEEP_NS; past a
 * bound the newcomer is refused, counted.
 */
#ifndef FR_WAKERS_H
#define FR_WAKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FR_WAKERS_MAX 1024
#define FR_WAKERS_KEEP_NS (5ULL * 1000000000ULL)

struct fr_event_waker;
struct fr_wakers;

int fr_wakers_new(struct fr_wakers **ret);
struct fr_wakers *fr_wakers_free(struct fr_wakers *w);

/* Keeps a copy of waker event @e (@size bytes, checked) read at @now
 * (CLOCK_MONOTONIC). */
void fr_wakers_add(struct fr_wakers *w, const struct fr_event_waker *e, size_t size, uint64_t now);

/* The waker of thread @tid's wait that began at @start, out of the
 * table: the caller frees it.  *@size: its bytes.  NULL: none (yet). */
struct fr_event_waker *fr_wakers_take(struct fr_wakers *w, uint32_t tid, uint64_t start, size_t *size);

/* Keeps a copy of offcpu event @data (@size bytes) of @cpu until its
 * waker comes; false when there is no room (record it without). */
bool fr_wakers_defer(struct fr_wakers *w, unsigned cpu, const void *data, size_t size);

/* At the end of a drain: hands each held record whose waker has come, or
 * that has waited through a whole drain since it was held (@all: every
 * one, the daemon stopping), to @fn (which records it, taking its waker
 * if there is one), and forgets wakers held longer than
 * FR_WAKERS_KEEP_NS at @now. */
void fr_wakers_release(struct fr_wakers *w, uint64_t now, bool all,
		       void (*fn)(void *userdata, unsigned cpu, const void *data, size_t size), void *userdata);

struct fr_wakers_stats {
	uint64_t events;   /* waker events read */
	uint64_t joined;   /* put into their wait's record */
	uint64_t deferred; /* records that came before their waker */
	uint64_t missing;  /* records recorded without the waker they said they had */
	uint64_t orphaned; /* wakers whose record never came (dropped in its ring) */
	uint64_t refused;  /* wakers or records not held: over the bound */
	uint64_t held;     /* held now: wakers and records */
};
void fr_wakers_get_stats(const struct fr_wakers *w, struct fr_wakers_stats *ret);

#endif
