/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the input is one segment file.  The store reader walks
 * it (headers, resync after damage), loads every chunk it finds
 * (decompression) and decodes every record, as frctl dump would.  Built
 * with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which makes checksum
 * mismatches non-fatal so mutated inputs reach the decoders.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-reader.h"
#include "store.h"
#include "window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[PATH_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_store_reader *r;
	struct fr_window *w;
	char path[PATH_MAX + 32];
	int fd;

	if (!dir[0]) {
		/* run-fuzzer.sh gives each run its own scratch directory
		 * and removes it; one per process under it (-jobs forks) */
		const char *base = getenv("FR_FUZZ_SCRATCH");

		snprintf(dir, sizeof(dir), "%s/fr-fuzz-%d", base ? base : "/dev/shm", getpid());
		if (fr_store_create_dirs(dir) < 0) {
			fprintf(stderr, "fuzz-segment: cannot create scratch store %s\n", dir);
			abort();
		}
	}
	snprintf(path, sizeof(path), "%s/segments/0000.frs", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		/* not a finding in the reader: the harness lost its scratch */
		fprintf(stderr, "fuzz-segment: cannot write %s: %m\n", path);
		abort();
	}
	close(fd);

	if (fr_store_reader_open(dir, &r) < 0)
		return 0;
	if (fr_window_load(r, &(struct fr_window_query){ .until_ns = UINT64_MAX, .no_threads = true }, &w) == 0)
		fr_window_free(w);
	fr_store_reader_free(r);
	return 0;
}
