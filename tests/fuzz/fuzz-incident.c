/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the input is an incident or bundle file, read the way
 * `frctl --input FILE` reads it: frctl itself (its main, renamed) runs
 * `dump --input FILE` in one of its formats or `report --input FILE` (text
 * or HTML), so
 * the header and metadata checks, the JSON metadata a verb looks into (a
 * bundle's window, an incident's rules and triggers), the chunk reader,
 * the decoders and every output writer all see the mutated bytes; half
 * the inputs through --redact (lib/redact.c: the chunks decoded, cut and
 * made again, the metadata cut) first.  Built
 * with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: checksum mismatches are
 * not fatal, so mutations get past the CRCs.  Output goes to /dev/null;
 * frctl's one-line errors go to stderr and are expected.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int frctl_main(int argc, char **argv);
#define main frctl_main
#include "../../ctl/frctl.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[PATH_MAX], conf[PATH_MAX];

static void setup(void)
{
	/* run-fuzzer.sh gives each run its own scratch directory and
	 * removes it; one file per process under it (-jobs forks) */
	const char *base = getenv("FR_FUZZ_SCRATCH");
	int fd;

	snprintf(path, sizeof(path), "%s/fr-fuzz-%d.fri", base ? base : "/dev/shm", getpid());
	snprintf(conf, sizeof(conf), "%s/fr-fuzz-%d.conf", base ? base : "/dev/shm", getpid());
	/* an empty configuration: built-in defaults, nothing of the host's */
	fd = open(conf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "fuzz-incident: cannot create %s: %m\n", conf);
		abort();
	}
	close(fd);
	/* what frctl prints is not looked at, only that it gets printed */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		fprintf(stderr, "fuzz-incident: cannot open /dev/null: %m\n");
		abort();
	}
	close(fd);
}

static void run(const char *verb, const char *format, bool redact)
{
	char *argv[] = { "frctl", "--config", conf, (char *)verb, "--input", path, NULL, NULL, NULL, NULL };
	int argc = 6;

	if (redact)
		argv[argc++] = "--redact";
	if (format) {
		argv[argc++] = "--format";
		argv[argc++] = (char *)format;
	}
	optind = 0; /* a fresh getopt, as at process start */
	(void)frctl_main(argc, argv);
	fflush(stdout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool redact = (size / 7) % 2;
	int fd;

	if (!path[0])
		setup();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		/* not a finding in the reader: the harness lost its scratch */
		fprintf(stderr, "fuzz-incident: cannot write %s: %m\n", path);
		abort();
	}
	close(fd);

	/* one reader per input, chosen by its length: reproducible, and a
	 * seventh of the time of running all seven on every input */
	switch (size % 7) {
	case 0: run("dump", "text", redact); break;
	case 1: run("dump", "json", redact); break;
	case 2: run("dump", "perfetto", redact); break;
	case 3: run("dump", "folded", redact); break;
	case 4: run("report", "html", redact); break;
	case 5: run("dump", "pprof", redact); break;
	default: run("report", NULL, redact); break;
	}
	return 0;
}
