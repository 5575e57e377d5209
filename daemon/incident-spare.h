/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spare incident file, incidents/.spare.  Writing an incident the
 * plain way (a new file, fsync, rename, fsync of the directory) waits for
 * two journal commits on ext4: the new file's blocks and size, then its
 * name.  Instead a spare is made ahead of time, off the incident's path:
 * zeros written over its whole size (real blocks, not unwritten extents),
 * fdatasync, fsync of the directory, all through io_uring.  The trigger
 * engine writes an incident that fits over it in place (sealed: its
 * header holds the file's length and the crc32 of its chunk area) and
 * fdatasync()s it: the blocks and the size do not change, so that is a
 * data write and a cache flush, no journal commit.  The incident is
 * durable then, and fr_spare_publish() cuts it to its length and renames
 * it to ID.fri, queueing the directory's fsync.
 *
 * Until that fsync completes, a power cut leaves the incident under
 * .spare: at the next start it is checked whole and renamed (never over a
 * file: ID-2.fri when ID.fri exists).  A spare that does not verify (never
 * used, or torn by a crash mid-write) holds no incident: it is made again
 * over its own blocks, or removed; nothing unsealed ever gets an
 * incident's name.  One that cannot be checked or renamed is kept,
 * stranded: never written over, tried again at the next incident.
 */
#ifndef FR_INCIDENT_SPARE_H
#define FR_INCIDENT_SPARE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#define FR_SPARE_NAME ".spare"

struct fr_spare;

/* Whether the file name @id.fri is taken by an incident not yet written. */
typedef bool (*fr_spare_taken_cb)(const char *id, void *userdata);

struct fr_spare_params {
	sd_event *event;
	int dir_fd;        /* incidents/, borrowed: open until fr_spare_free */
	const char *dir;   /* its path, for the log */
	uint64_t budget;   /* triggers.incidents.size: a spare takes at most an eighth */
	fr_spare_taken_cb taken;
	void *userdata;
};

/* Sets up its io_uring (without one there is no spare: logged), recovers
 * or reuses a spare left from before, and starts making one.  -ENOMEM. */
int fr_spare_new(const struct fr_spare_params *p, struct fr_spare **ret);
/* Waits for its I/O in flight (a spare still being made is made again at
 * the next start). */
struct fr_spare *fr_spare_free(struct fr_spare *s);

/* The incidents budget changed (reload). */
void fr_spare_set_budget(struct fr_spare *s, uint64_t budget);

/* The fd of the ready spare, *ret_size its size; -EBADF when there is
 * none ready.  The caller writes over it; the fd stays the spare's. */
int fr_spare_fd(const struct fr_spare *s, uint64_t *ret_size);
/* An incident needs @need bytes: the next spare made holds twice that. */
void fr_spare_want(struct fr_spare *s, uint64_t need);
/* Writing over the spare failed: what it holds is unknown and no
 * incident; it is removed (a new one is made after the next incident). */
void fr_spare_drop(struct fr_spare *s);
/* The incident @id, @len bytes, is durable in the spare: cut to its
 * length and renamed to the first free name of ID.fri, ID-2.fri, ...
 * (ID.fri was reserved for it; the others are checked with the taken
 * callback too), *name getting it.  0, or -errno: then it stays in the
 * spare, stranded, renamed by a later fr_spare_retry() or start. */
int fr_spare_publish(struct fr_spare *s, const char *id, uint64_t len, char *name, size_t size);
/* At an incident: a stranded spare is renamed if it can be now. */
void fr_spare_retry(struct fr_spare *s);
/* After an incident: starts making a spare when there is none. */
void fr_spare_make(struct fr_spare *s);
/* No new spare from now on (the daemon stops). */
void fr_spare_stop(struct fr_spare *s);
/* Whether a stranded spare holds the incident @id (its name is taken). */
bool fr_spare_holds(const struct fr_spare *s, const char *id);
/* Counts an incident written over the spare. */
void fr_spare_count_use(struct fr_spare *s);

/* For status: {state, bytes, made, used, error}. */
struct json_object *fr_spare_status(const struct fr_spare *s);

#endif
