/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the input is a configuration file, loaded the way
 * flightrecd and frctl load /etc/flightrec/flightrec.conf (libconfig's
 * parser, then every setting's range and type checks, the trigger rules
 * and their conditions), then lowered for the rules as the daemon does.
 * A bad file must give one error line, never a crash or a leak.  The
 * seeds are the shipped file and the tests' configurations.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[PATH_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_conf c;
	char err[512];
	int fd;

	if (!path[0]) {
		/* run-fuzzer.sh's scratch directory; a file per process */
		const char *base = getenv("FR_FUZZ_SCRATCH");
		snprintf(path, sizeof(path), "%s/fr-fuzz-%d.conf", base ? base : "/dev/shm", getpid());
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	fr_conf_init_defaults(&c);
	if (fr_conf_load(&c, path, true, err, sizeof(err)) == 0)
		(void)fr_conf_lower_for_rules(&c);
	fr_conf_done(&c);
	return 0;
}
