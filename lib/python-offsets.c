/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "macro.h"
#include "python-offsets.h"

static const struct {
	uint32_t major_minor; /* PY_VERSION_HEX >> 16 */
	struct fr_py_offsets off;
} versions[] = {
	/* 3.11: frames are _PyInterpreterFrame, one C call of the loop
	 * running several (is_entry marks where one began) */
	{ 0x030b, {
		.runtime_interp_head = 40,
		.interp_next = 0,
		.interp_threads_head = 16,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_cframe = 56,
		.cframe_current_frame = 8,
		.frame_code = 32,
		.frame_previous = 48,
		.frame_prev_instr = 56,
		.frame_is_entry = 68,
		.code_firstlineno = 72,
		.code_filename = 112,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_code = 184,
		.unicode_length = 16,
		.unicode_state = 32,
		.unicode_ascii_data = 48,
		.unicode_compact_data = 72,
		.bytes_size = 16,
		.bytes_data = 32,
	} },
};

const struct fr_py_offsets *fr_py_offsets_of(uint32_t version)
{
	for (size_t i = 0; i < ELEMENTSOF(versions); i++)
		if (versions[i].major_minor == version >> 16)
			return &versions[i].off;
	return NULL;
}

const char *fr_py_version_str(uint32_t version, char buf[16])
{
	snprintf(buf, 16, "%u.%u", version >> 24, (version >> 16) & 0xff);
	return buf;
}
