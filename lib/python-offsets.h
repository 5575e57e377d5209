/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CPython versions whose frames flightrec reads, and where in their
 * structures the fields the BPF walk reads are (bpf/python.bpf.h): data
 * taken from each version's own headers (Include/internal/pycore_*.h,
 * x86-64), checked against them by tests/unit/test-python-offsets.c
 * where the headers are installed (Debian's python3.X-dev).
 */
#ifndef FR_PYTHON_OFFSETS_H
#define FR_PYTHON_OFFSETS_H

#include <stdint.h>

#include "../bpf/event.h"

/* The offsets of CPython @version (PY_VERSION_HEX, Py_Version: only its
 * major and minor count), or NULL for a version not known. */
const struct fr_py_offsets *fr_py_offsets_of(uint32_t version);

/* "3.11" of @version, into @buf. */
const char *fr_py_version_str(uint32_t version, char buf[16]);

#endif
