/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fatal signal said in one line, the way every output opens a crash
 * with it (frctl report, the HTML page, the incident's journal entry):
 *   python3[1234] SIGSEGV (SEGV_MAPERR, address 0x0) in __strlen_avx2 ← PyBytes_FromString ← …
 * a Python program's innermost Python frame after them when it is
 * further out:
 *   python3[1234] SIGSEGV (SEGV_MAPERR, address 0x0) in __strlen_avx2 ← _ctypes….so+0xe17b ← libffi.so.8+0x6f7a ← … ← render_page (app.py:3) ← …
 * and for a signal another process sent, who sent it and from where:
 *   sleep[88] SIGSEGV (SI_USER) from bash[87] in kill ← kill_builtin ← …
 * The frames are the record's (lib/symtab.h), the user frames when there
 * are any (where the program was), else the kernel's.
 */
#ifndef FR_CRASH_LINE_H
#define FR_CRASH_LINE_H

#include <stddef.h>

#include "record.h"
#include "symtab.h"

/* "python3[1234] SIGSEGV (SEGV_MAPERR, address 0x0)", and " from
 * bash[87]" when another thread sent it, into @buf (NUL-terminated, cut
 * to @len); returns @buf.  Names are the record's bytes: the caller makes
 * them safe for where they go. */
const char *fr_crash_title(const struct fr_record *r, char *buf, size_t len);

/* The first frame fr_crash_line() names, of f[0..n): the first user one,
 * or 0 when there are none. */
int fr_crash_first_frame(const struct fr_record *r, int n);

/* The title, " in ", and the names of at most @max frames from
 * fr_crash_first_frame() on, " ← " between them, then the first named
 * Python frame after them (" ← … ← " when frames are skipped to it),
 * " ← …" when more follow ("" when there are no frames); cut to @len. */
const char *fr_crash_line(const struct fr_record *r, const struct fr_frame *f, int n, unsigned max, char *buf,
			  size_t len);

#endif
