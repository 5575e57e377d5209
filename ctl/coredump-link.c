/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A crash's core dump, from the journal (coredump-link.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "../lib/macro.h"
#include "coredump-link.h"

/* Field @name's value of the current entry into @buf (cut, NUL-terminated);
 * false when it has none. */
static bool field(sd_journal *j, const char *name, char *buf, size_t len)
{
	const void *d;
	size_t l, n = strlen(name);

	if (sd_journal_get_data(j, name, &d, &l) < 0 || l <= n || ((const char *)d)[n] != '=')
		return false;
	snprintf(buf, len, "%.*s", (int)(l - n - 1), (const char *)d + n + 1);
	return true;
}

/* A decimal field's value, or false. */
static bool field_u64(sd_journal *j, const char *name, uint64_t *ret)
{
	char buf[32], *end;

	if (!field(j, name, buf, sizeof(buf)))
		return false;
	errno = 0;
	*ret = strtoull(buf, &end, 10);
	return errno == 0 && end != buf && !*end;
}

void frctl_coredumps_done(struct frctl_coredumps *c)
{
	if (c->j)
		sd_journal_close(c->j);
	*c = (struct frctl_coredumps){};
}

bool frctl_coredump_find(struct frctl_coredumps *c, const struct fr_window *w, const struct fr_window_entry *e,
			 struct frctl_coredump *ret)
{
	char boot[33], m[64], pid[16];
	uint64_t usec, sig, when, at = e->wall_ns / 1000;
	sd_journal *j;
	bool found = false;
	int k;

	*ret = (struct frctl_coredump){};
	if (e->r.type != FR_REC_SIGNAL || e->chunk >= w->nchunks)
		return false;
	if (!c->tried) {
		c->tried = true;
		if (sd_journal_open(&c->j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM) < 0)
			c->j = NULL;
	}
	if (!(j = c->j))
		return false;
	sd_journal_flush_matches(j);
	snprintf(m, sizeof(m), "COREDUMP_PID=%" PRIu32, e->r.pid);
	k = sd_journal_add_match(j, "MESSAGE_ID=" FR_COREDUMP_MESSAGE_ID, 0);
	if (k >= 0)
		k = sd_journal_add_match(j, m, 0);
	/* from a little before the signal (clocks), the first entries after */
	if (k >= 0)
		k = sd_journal_seek_realtime_usec(j, at > FR_COREDUMP_SLACK_USEC ? at - FR_COREDUMP_SLACK_USEC : 0);
	for (int i = 0; k >= 0 && i < 16 && sd_journal_next(j) > 0; i++) {
		if (sd_journal_get_realtime_usec(j, &usec) < 0 || usec * 1000 > e->wall_ns + FR_COREDUMP_WITHIN_NS)
			break;
		/* this crash's: its signal, dumped when it was raised (the
		 * kernel's time, in seconds), not another process's of the
		 * same pid.  The boot is the entry's: in a container the
		 * journal may have a boot id of its own. */
		if (!field_u64(j, "COREDUMP_SIGNAL", &sig) || sig != e->r.signal.sig ||
		    !field_u64(j, "COREDUMP_TIMESTAMP", &when) || when + FR_COREDUMP_SLACK_USEC < at ||
		    when > at + FR_COREDUMP_SLACK_USEC || !field(j, "COREDUMP_PID", pid, sizeof(pid)) ||
		    !field(j, "_BOOT_ID", boot, sizeof(boot)))
			continue;
		snprintf(ret->command, sizeof(ret->command), "coredumpctl debug COREDUMP_PID=%s _BOOT_ID=%s", pid, boot);
		if (!field(j, "COREDUMP_FILENAME", ret->storage, sizeof(ret->storage)))
			ret->storage[0] = 0;
		found = true;
		break;
	}
	return found;
}
