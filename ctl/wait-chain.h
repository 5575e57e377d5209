/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chains of waits (issue 46): a wait's waker may itself have been
 * waiting until just before, woken by a third, and so on ("the client
 * waited on the front end, which waited on the database, which waited on
 * the disk").  The window's off-CPU waits are indexed by thread, so that
 * from a wait's waker (its offcpu record's waker, at the time it woke
 * it) the waker's own wait that overlapped it is found: the last of that
 * thread's waits to end between the first wait's start and the wakeup.
 */
#ifndef FR_CTL_WAIT_CHAIN_H
#define FR_CTL_WAIT_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/window.h"

/* steps followed at most: a chain longer than that is cut, said so */
#define FR_WAIT_CHAIN_MAX 6

struct fr_wait_ref {
	uint32_t tid;
	uint64_t end;  /* wall ns */
	size_t item;   /* index in the window */
};

struct fr_waits {
	struct fr_wait_ref *v;
	size_t n, cap;
	bool sorted, failed; /* failed: out of memory, chains not followed */
};

/* Adds offcpu record @e, item @i of its window. */
void fr_waits_add(struct fr_waits *x, size_t i, const struct fr_window_entry *e);
void fr_waits_done(struct fr_waits *x);

/* The waker of @e (an offcpu record with one, woken by a thread: not an
 * interrupt, fr_waker_context()) was waiting itself until it woke @e:
 * that wait, into @ret, when the window has it (true). */
bool fr_waits_waker_wait(struct fr_waits *x, struct fr_window *w, const struct fr_window_entry *e,
			 struct fr_window_entry *ret);

#endif
