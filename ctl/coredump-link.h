/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The core dump systemd-coredump kept of a crash a signal record shows:
 * its journal entry (MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1) for
 * the same pid and signal, dumped when the signal was raised (the
 * kernel's COREDUMP_TIMESTAMP, within seconds) and written within
 * minutes after, read with sd-journal from this machine's journal.  The
 * boot id is the entry's own (a container's journal has one of its own).  Found, frctl says so and
 * prints the coredumpctl command that opens it.
 */
#ifndef FRCTL_COREDUMP_LINK_H
#define FRCTL_COREDUMP_LINK_H

#include <stdbool.h>
#include <stddef.h>

#include "../lib/window.h"

#define FR_COREDUMP_MESSAGE_ID "fc2e22bc6ee647b6b90729ab34a250b1"
/* How long after the signal its core dump may be logged: writing a large
 * process's core takes a while */
#define FR_COREDUMP_WITHIN_NS (600ULL * 1000000000ULL)
/* How far the kernel's time of the dump (seconds) and the journal's clock
 * may be from the signal's time */
#define FR_COREDUMP_SLACK_USEC (5ULL * 1000000ULL)

struct frctl_coredump {
	char command[128];  /* "coredumpctl debug COREDUMP_PID=... _BOOT_ID=..." */
	char storage[256];  /* COREDUMP_FILENAME, or "" (in the journal, or not kept) */
};

/* The journal, opened at the first lookup and kept for the next ones (a
 * report looks up each of its fatal signals); zero-initialized, then
 * frctl_coredumps_done(). */
struct sd_journal;
struct frctl_coredumps {
	struct sd_journal *j;
	bool tried;
};
void frctl_coredumps_done(struct frctl_coredumps *c);

/* The core dump of the signal record @e's target, if the journal has one;
 * false when it has none (or cannot be read: another machine's window). */
bool frctl_coredump_find(struct frctl_coredumps *c, const struct fr_window *w, const struct fr_window_entry *e,
			 struct frctl_coredump *ret);

#endif
