/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_OUTPUT_FILE_H
#define FR_CTL_OUTPUT_FILE_H

#include <stdio.h>

/* -o FILE (output-file.c): a temporary file beside @path (*ret_tmp, the
 * caller frees), renamed over it by frctl_output_commit() once complete;
 * on failure the caller unlinks it.  Both print one line and return
 * -errno on failure. */
int frctl_output_open(const char *path, char **ret_tmp, FILE **ret);
int frctl_output_commit(FILE *f, const char *tmp, const char *path);

#endif
