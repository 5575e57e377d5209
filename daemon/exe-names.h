/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pid -> executable, as the records tell it while they are recorded:
 * exec records (the file executed), fork records (the child runs its
 * parent's), keyframe process records (/proc/PID/exe).  The trigger
 * engine names the executable of the process a rule fired on with it,
 * also when that process is gone by then (a crash, an OOM kill), as
 * readers of the store name it from the same records.
 */
#ifndef FR_EXE_NAMES_H
#define FR_EXE_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "../lib/record.h"

struct fr_exe_names;

int fr_exe_names_new(struct fr_exe_names **ret);
struct fr_exe_names *fr_exe_names_free(struct fr_exe_names *x);
/* Takes what an exec, fork, exit or process record says, unless a newer
 * record named the process already (records come out of order across
 * CPUs).  Returns whether it named the process. */
bool fr_exe_names_on_record(struct fr_exe_names *x, const struct fr_record *rec);
/* Forgets processes that exited before @before (CLOCK_BOOTTIME ns). */
void fr_exe_names_prune(struct fr_exe_names *x, uint64_t before);
/* The executable of @pid (NUL-terminated), or NULL when not known. */
const char *fr_exe_names_get(const struct fr_exe_names *x, uint32_t pid);

#endif
