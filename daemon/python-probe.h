/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Is an executable a CPython interpreter, and which: what the BPF walk
 * of Python frames needs from the file (bpf/python.bpf.h), read by the
 * sandboxed parser as it loads the file's symbols (symbolizer.c), and
 * sent to the daemon with the frames (parser-proto.h).
 */
#ifndef FR_PYTHON_PROBE_H
#define FR_PYTHON_PROBE_H

#include <libelf.h>
#include <stdint.h>

struct fr_py_probe {
	uint64_t runtime_rel; /* _PyRuntime less the lowest executable segment's address */
	uint32_t version;     /* Py_Version (PY_VERSION_HEX); 0: not said (before 3.11) */
	uint32_t found;       /* 1: it has _PyRuntime (a CPython interpreter) */
};

/* Fills @ret from @elf's symbol tables (.symtab, .dynsym): found is 0
 * for a file that is no CPython executable (a library, libpython among
 * them, is not read), or whose _PyRuntime cannot be placed. */
void fr_python_probe_elf(Elf *elf, struct fr_py_probe *ret);

#endif
