/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the input is a decompressed chunk payload, a stream of
 * encoded records; decode until the end or the first malformed record. */
#include <stdint.h>
#include <stddef.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_codec_state st = {};
	struct fr_record r;
	size_t pos = 0;

	while (pos < size && fr_record_decode(&st, data, size, &pos, &r) == 0) {
		/* touch what a printer would read */
		volatile char sink = 0;
		if (r.type == FR_REC_EXEC && r.exec.filename_len)
			sink ^= r.exec.filename[r.exec.filename_len - 1];
		if (r.type == FR_REC_PROCESS && r.process.args_len)
			sink ^= r.process.args[r.process.args_len - 1];
		(void)sink;
	}
	return 0;
}
