/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the input is a decompressed chunk payload, a stream of
 * encoded records; decode until the end or the first malformed record, as
 * a chunk of each format would be read (without and with the chunk flags
 * that add fields). */
#include <stdint.h>
#include <stddef.h>

#include "record.h"
#include "store-format.h"
#include "symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_all(const uint8_t *data, size_t size, uint32_t incompat_flags)
{
	struct fr_codec_state st = { .incompat_flags = incompat_flags };
	struct fr_symtab t = {};
	struct fr_record r;
	size_t pos = 0;

	/* first pass: the code descriptions, as a reader collects them */
	while (pos < size && fr_record_decode(&st, data, size, &pos, &r) == 0)
		(void)fr_symtab_add(&t, &r);
	fr_symtab_finish(&t);
	st = (struct fr_codec_state){ .incompat_flags = incompat_flags };
	pos = 0;
	while (pos < size && fr_record_decode(&st, data, size, &pos, &r) == 0) {
		/* touch what a printer would read */
		volatile char sink = 0;
		if (r.type == FR_REC_EXEC && r.exec.filename_len)
			sink ^= r.exec.filename[r.exec.filename_len - 1];
		if (r.type == FR_REC_PROCESS && r.process.args_len)
			sink ^= r.process.args[r.process.args_len - 1];
		if (r.type == FR_REC_SAMPLE) {
			uint64_t addr[FR_SAMPLE_FRAMES_MAX];
			int n = fr_sample_frames(&r, addr, FR_SAMPLE_FRAMES_MAX);
			char buf[512];
			for (int i = 0; i < n; i++) {
				struct fr_frame f;
				fr_symtab_resolve(&t, NULL, &r, (unsigned)i, addr[i], &f);
				sink ^= fr_frame_name(&f, true, buf, sizeof(buf))[0];
				if (fr_frame_module(&f, buf, sizeof(buf)))
					sink ^= buf[0];
			}
		}
		if (r.type == FR_REC_OFFCPU && r.sched.syscall_nr < -1)
			__builtin_trap(); /* the decoder refuses those */
		(void)sink;
	}
	fr_symtab_done(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode_all(data, size, 0);
	decode_all(data, size, FR_CHUNK_INCOMPAT_KNOWN);
	return 0;
}
