/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source line of an instruction of a CPython code object, from its
 * line table (co_linetable, the "location table" of CPython 3.11 and
 * later, Objects/locations.md of CPython's source): entries of one start
 * byte (bit 7 set; bits 3-6 the kind; bits 0-2 the code units covered
 * less one) and their varints, each moving the line by a delta.
 */
#ifndef FR_PYTHON_LINES_H
#define FR_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The line of code unit @lasti of a code object whose co_firstlineno is
 * @first and whose line table is @tab[0..len): > 0; 0 when the table does
 * not say (an instruction without a line, one past the table, which may
 * be one cut short, or a table that does not parse).  @lasti < 0 (a frame
 * not yet started) is the first line. */
uint32_t fr_py_line(const uint8_t *tab, size_t len, int32_t first, int32_t lasti);

#endif
