/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * -o FILE of dump and report: written to a temporary file beside it and
 * renamed over it once complete, so that a failure (a damaged source, a
 * full disk) leaves no half-written file, and an earlier one stays whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "frctl-error.h"
#include "output-file.h"

int frctl_output_open(const char *path, char **ret_tmp, FILE **ret)
{
	_cleanup_free_ char *tmp = NULL;
	int fd;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		int k = negative_errno();
		frctl_error("cannot create %s: %s", path, strerror(-k));
		return k;
	}
	(void)fchmod(fd, 0640);
	*ret = fdopen(fd, "w");
	if (!*ret) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	*ret_tmp = TAKE_PTR(tmp);
	return 0;
}

int frctl_output_commit(FILE *f, const char *tmp, const char *path)
{
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0 || rename(tmp, path) < 0) {
		int k = errno ? -errno : -EIO;
		frctl_error("cannot write %s: %s", path, strerror(-k));
		return k;
	}
	return 0;
}
