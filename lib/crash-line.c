/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fatal signal in one line (crash-line.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crash-line.h"
#include "macro.h"
#include "record-fields.h"
#include "str-append.h"

const char *fr_crash_title(const struct fr_record *r, char *buf, size_t len)
{
	const char *code = fr_signal_code_name((int)r->signal.sig, r->signal.code);
	char sig[32];
	size_t at = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	fr_str_append(buf, len, &at, "%.*s[%" PRIu32 "", (int)r->comm_len, r->comm, r->pid);
	if (r->tid != r->pid)
		fr_str_append(buf, len, &at, "/%" PRIu32, r->tid);
	fr_str_append(buf, len, &at, "] %s", fr_signal_name((int)r->signal.sig, sig, sizeof(sig)) ?: "signal 0");
	if (code && (r->flags & FR_REC_F_FAULT_ADDR))
		fr_str_append(buf, len, &at, " (%s, address 0x%" PRIx64 ")", code, r->signal.addr);
	else if (code)
		fr_str_append(buf, len, &at, " (%s)", code);
	else if (r->flags & FR_REC_F_FAULT_ADDR)
		fr_str_append(buf, len, &at, " (code %" PRId32 ", address 0x%" PRIx64 ")", r->signal.code, r->signal.addr);
	if (r->signal.sender_tid != r->tid)
		fr_str_append(buf, len, &at, " from %.*s[%" PRIu32 "]", (int)MIN(r->signal.sender_comm_len, 16u),
		    r->signal.sender_comm ? r->signal.sender_comm : "", r->signal.sender_pid);
	return buf;
}

int fr_crash_first_frame(const struct fr_record *r, int n)
{
	int nk = MIN((int)r->stack.kernel_frames, n);

	return nk < n ? nk : 0;
}

const char *fr_crash_line(const struct fr_record *r, const struct fr_frame *f, int n, unsigned max, char *buf,
			  size_t len)
{
	size_t at;
	int i = f ? fr_crash_first_frame(r, n) : n;
	unsigned shown = 0;
	char name[512];

	fr_crash_title(r, buf, len);
	at = strlen(buf);
	for (; i < n && shown < max; i++, shown++)
		fr_str_append(buf, len, &at, "%s%s", shown ? " ← " : " in ", fr_frame_name(&f[i], false, name, sizeof(name)));
	/* where a Python program was, when that is further out: its
	 * innermost Python frame */
	for (int j = i; j < n; j++)
		if (f[j].python && f[j].sym) {
			fr_str_append(buf, len, &at, "%s%s", j > i ? " ← … ← " : " ← ",
				      fr_frame_name(&f[j], false, name, sizeof(name)));
			i = j + 1;
			break;
		}
	if (i < n)
		fr_str_append(buf, len, &at, " ← …");
	return buf;
}
