/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A crash's core dump, from the journal (coredump-link.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "../lib/macro.h"
#include "../lib/record-fields.h"
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

bool frctl_coredump_find(const struct fr_window *w, const struct fr_window_entry *e, struct frctl_coredump *ret)
{
	char boot[33], m[64], pid[16];
	sd_journal *j = NULL;
	bool found = false;
	uint64_t usec;
	int k;

	*ret = (struct frctl_coredump){};
	if (e->r.type != FR_REC_SIGNAL || e->chunk >= w->nchunks)
		return false;
	fr_format_boot_id(w->chunks[e->chunk].boot_id, boot, sizeof(boot));
	if (sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM) < 0)
		return false;
	snprintf(m, sizeof(m), "COREDUMP_PID=%" PRIu32, e->r.pid);
	k = sd_journal_add_match(j, "MESSAGE_ID=" FR_COREDUMP_MESSAGE_ID, 0);
	if (k >= 0)
		k = sd_journal_add_match(j, m, 0);
	snprintf(m, sizeof(m), "_BOOT_ID=%s", boot);
	if (k >= 0)
		k = sd_journal_add_match(j, m, 0);
	/* from a little before the signal (clocks), the first entries after */
	if (k >= 0)
		k = sd_journal_seek_realtime_usec(j, e->wall_ns / 1000 > 5000000 ? e->wall_ns / 1000 - 5000000 : 0);
	for (int i = 0; k >= 0 && i < 16 && sd_journal_next(j) > 0; i++) {
		if (sd_journal_get_realtime_usec(j, &usec) < 0 || usec * 1000 > e->wall_ns + FR_COREDUMP_WITHIN_NS)
			break;
		if (!field(j, "COREDUMP_PID", pid, sizeof(pid)))
			continue;
		snprintf(ret->command, sizeof(ret->command), "coredumpctl debug COREDUMP_PID=%s _BOOT_ID=%s", pid, boot);
		if (!field(j, "COREDUMP_FILENAME", ret->storage, sizeof(ret->storage)))
			ret->storage[0] = 0;
		found = true;
		break;
	}
	sd_journal_close(j);
	return found;
}
