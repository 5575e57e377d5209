/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The offsets flightrec keeps for CPython 3.11 (lib/python-offsets.c)
 * against the structures of the installed 3.11 headers (python3.11-dev):
 * a field moved in a rebuild of the version is found here. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include "python-offsets.h"
#include "test.h"

int main(void)
{
	const struct fr_py_offsets *o = fr_py_offsets_of(PY_VERSION_HEX);
	char v[16];

	CHECK(o != NULL);
	if (!o)
		return 1;
	CHECK_STR(fr_py_version_str(PY_VERSION_HEX, v), "3.11");
	CHECK(fr_py_offsets_of(0x030a0000) == NULL);
	CHECK(fr_py_offsets_of(0x030c0000) == NULL);
	CHECK_EQ(o->runtime_interp_head, offsetof(_PyRuntimeState, interpreters.head));
	CHECK_EQ(o->interp_next, offsetof(PyInterpreterState, next));
	CHECK_EQ(o->interp_threads_head, offsetof(PyInterpreterState, threads.head));
	CHECK_EQ(o->tstate_next, offsetof(PyThreadState, next));
	CHECK_EQ(o->tstate_thread_id, offsetof(PyThreadState, thread_id));
	CHECK_EQ(o->tstate_cframe, offsetof(PyThreadState, cframe));
	CHECK_EQ(o->cframe_current_frame, offsetof(_PyCFrame, current_frame));
	CHECK_EQ(o->frame_code, offsetof(_PyInterpreterFrame, f_code));
	CHECK_EQ(o->frame_previous, offsetof(_PyInterpreterFrame, previous));
	CHECK_EQ(o->frame_prev_instr, offsetof(_PyInterpreterFrame, prev_instr));
	CHECK_EQ(o->frame_is_entry, offsetof(_PyInterpreterFrame, is_entry));
	CHECK_EQ(o->code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	CHECK_EQ(o->code_filename, offsetof(PyCodeObject, co_filename));
	CHECK_EQ(o->code_qualname, offsetof(PyCodeObject, co_qualname));
	CHECK_EQ(o->code_linetable, offsetof(PyCodeObject, co_linetable));
	CHECK_EQ(o->code_code, offsetof(PyCodeObject, co_code_adaptive));
	CHECK_EQ(o->unicode_length, offsetof(PyASCIIObject, length));
	CHECK_EQ(o->unicode_state, offsetof(PyASCIIObject, state));
	CHECK_EQ(o->unicode_ascii_data, sizeof(PyASCIIObject));
	CHECK_EQ(o->unicode_compact_data, sizeof(PyCompactUnicodeObject));
	CHECK_EQ(o->bytes_size, offsetof(PyVarObject, ob_size));
	CHECK_EQ(o->bytes_data, offsetof(PyBytesObject, ob_sval));
	/* what the BPF walk reads at once must hold the fields */
	CHECK(sizeof(_PyInterpreterFrame) >= 80);
	CHECK(offsetof(PyCodeObject, co_code_adaptive) + 8 <= 192);
	return test_failures ? 1 : 0;
}
