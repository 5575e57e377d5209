/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the input is one datagram sent to flightrecd's control
 * socket, which any local user may connect to, parsed and checked as the
 * daemon does (lib/control-request.c) before any verb runs.  A request is
 * either refused with one line for its sender, or comes out with a known
 * verb and a text within its bounds; never a crash or a leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control-request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_control_request r;
	const char *why = NULL;
	volatile char sum = 0;

	if (fr_control_request_parse((const char *)data, size, &r, &why) < 0) {
		if (!why || !*why)
			abort();
		return 0;
	}
	if (!fr_control_verb_name(r.verb))
		abort();
	switch (r.verb) {
	case FR_VERB_STATUS:
	case FR_VERB__MAX:
		break;
	case FR_VERB_FREEZE:
		if (r.text && (strlen(r.text) != r.len || r.len > FR_CONTROL_TEXT_MAX))
			abort();
		break;
	case FR_VERB_MARK:
		if (!r.text || r.len == 0 || r.len > FR_CONTROL_TEXT_MAX)
			abort();
		break;
	}
	/* every byte the daemon will read is there (ASan) */
	for (size_t i = 0; i < r.len; i++)
		sum ^= r.text[i];
	(void)sum;
	fr_control_request_done(&r);
	return 0;
}
