/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --redact: the window is read from a copy of the source without what is
 * cut.  The chunks the window needs (those a bundle copies: the window,
 * the keyframe before it, the context between) are written through
 * lib/redact.c into an incident file in memory, which the source then
 * reads in place of the store or the file.  Every verb's output (a
 * bundle, the report page, each dump format) is made from the redacted
 * records and metadata: none can show what was cut, and the store and the
 * files read are not changed.  Memory: the window's compressed chunks, a
 * bundle's worth.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lib/incident.h"
#include "../lib/macro.h"
#include "../lib/redact.h"
#include "frctl-error.h"
#include "redact-source.h"

/* --redact=LIST, or the classes the configuration enables. */
static int redact_classes(struct frctl *f, const char *list, unsigned *ret)
{
	const char *bad;

	if (*list) {
		if (fr_redact_parse(list, ret, &bad) < 0) {
			frctl_error("--redact: unknown class \"%.*s\" (args, home, tcp, marks, urls; e.g. --redact=args,tcp)",
				    (int)strcspn(bad, ","), bad);
			return -EINVAL;
		}
		return 0;
	}
	*ret = (f->conf.redact_args ? FR_REDACT_ARGS : 0) | (f->conf.redact_home ? FR_REDACT_HOME : 0) |
	       (f->conf.redact_tcp ? FR_REDACT_TCP : 0) | (f->conf.redact_marks ? FR_REDACT_MARKS : 0) |
	       (f->conf.redact_urls ? FR_REDACT_URLS : 0);
	if (!*ret) {
		frctl_error("--redact: the redact group of %s cuts nothing; name the classes "
			    "(--redact=args,home,tcp,marks,urls)", f->config_path);
		return -EINVAL;
	}
	return 0;
}

struct copy {
	struct fr_redactor *rd;
	size_t chunks; /* read from the source (those that verified) */
};

static int redact_chunk(void *userdata, const uint8_t *chunk, size_t len, uint8_t **ret, size_t *ret_len)
{
	struct copy *c = userdata;

	c->chunks++;
	return fr_redact_chunk(c->rd, chunk, len, ret, ret_len);
}

int frctl_source_redact(struct frctl *f, const struct frctl_window_args *a, struct frctl_source *s)
{
	_cleanup_free_ struct fr_chunk_ref *refs = NULL;
	_cleanup_free_ char *meta = NULL;
	_cleanup_close_ int fd = -EBADF;
	struct fr_store_reader *r = NULL;
	struct fr_kernel_names_stats names;
	struct copy c = {};
	char path[64];
	unsigned classes;
	size_t n = 0;
	int64_t bytes;
	int k;

	if (redact_classes(f, a->redact, &classes) < 0)
		return EXIT_USAGE;
	k = fr_redactor_new(classes, &s->redactor);
	if (k < 0) {
		frctl_error("out of memory");
		return EXIT_FAILURE_;
	}
	if (s->meta)
		fr_redact_json(s->redactor, s->meta);
	k = fr_window_select(s->reader, &s->q, &refs, &n);
	if (k < 0) {
		frctl_error("cannot read %s: %s", s->name, strerror(-k));
		return EXIT_FAILURE_;
	}
	fd = memfd_create("frctl-redacted", MFD_CLOEXEC);
	if (fd < 0) {
		frctl_error("cannot redact %s: %m", s->name);
		return EXIT_FAILURE_;
	}
	c.rd = s->redactor;
	bytes = fr_incident_write_fd(fd, s->meta ? json_object_to_json_string_ext(s->meta, JSON_C_TO_STRING_PLAIN) : "{}",
				     s->reader, refs, n, redact_chunk, &c, &names);
	if (bytes < 0) {
		frctl_error("cannot redact %s: %s", s->name, strerror((int)-bytes));
		return EXIT_FAILURE_;
	}
	if (names.addrs_left_out)
		frctl_error("warning: %s: %" PRIu64 " kernel frame addresses left unnamed (more than %u distinct ones)",
			    s->name, names.addrs_left_out, FR_KERNEL_NAMES_ADDRS_MAX);
	/* the memory file read by its name, as any incident file */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	k = fr_store_reader_open_incident(path, &r, &meta);
	if (k < 0) {
		frctl_error("cannot read the redacted copy of %s: %s", s->name, strerror(-k));
		return EXIT_FAILURE_;
	}
	/* what the window would have reported damaged is not in the copy:
	 * frctl_source_check() says it */
	s->redact_lost = n - c.chunks + fr_redactor_counts(s->redactor)->chunks_left_out;
	fr_store_reader_free(s->reader);
	s->reader = r;
	return 0;
}
