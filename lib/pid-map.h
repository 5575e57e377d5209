/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A map from pid to a caller-owned pointer: open addressing, grows. */
#ifndef FR_PID_MAP_H
#define FR_PID_MAP_H

#include <stddef.h>
#include <stdint.h>

struct fr_pid_map {
	uint32_t *keys;
	void **vals;
	size_t cap, n; /* cap is a power of two; slots with vals NULL are free */
};

void *fr_pid_map_get(const struct fr_pid_map *m, uint32_t pid);
/* Sets (or replaces) the value; returns the previous one via *old. */
int fr_pid_map_put(struct fr_pid_map *m, uint32_t pid, void *val, void **old);
/* Removes and returns the value, or NULL. */
void *fr_pid_map_remove(struct fr_pid_map *m, uint32_t pid);
/* Iterates: *i starts at 0; returns NULL when done. */
void *fr_pid_map_next(const struct fr_pid_map *m, size_t *i, uint32_t *ret_pid);
void fr_pid_map_done(struct fr_pid_map *m);

#endif
