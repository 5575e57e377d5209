/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Triggers and incidents.  Every event record the recorder stores is
 * checked against the rules (records reach user space only above the
 * sources' thresholds, which are lowered to the rules' thresholds, so this
 * costs nothing per syscall).  A rule that fires writes a 'trigger' record,
 * syncs the store, and opens an incident over [now - before, now + after];
 * triggers inside an open incident's window join it; governance (cooldown,
 * max per hour) counts what it suppresses.  When the window has been
 * recorded, the incident is written as a self-contained file under
 * incidents/, announced in the journal, and the rule's exec action runs.
 */
#ifndef FR_TRIGGER_H
#define FR_TRIGGER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "../lib/conf.h"
#include "../lib/record.h"

/* MESSAGE_ID of the journal entry written for each incident. */
#define FR_INCIDENT_MESSAGE_ID "7c1d8b3e5a6f4e2d9b0a1c3e5f7a9b2d"

struct fr_triggers;

/* Puts everything recorded so far into the store (drain the rings, close
 * the chunks, queue their writes) and waits until it is: */
enum fr_flush {
	FR_FLUSH_QUEUED,  /* queued (the incident written ahead takes the new
			     chunks as they are queued: fr_triggers_on_chunk) */
	FR_FLUSH_WRITTEN, /* written, readable: before the window is selected
			     and copied (the incident file is made durable by
			     itself) */
	FR_FLUSH_SYNCED,  /* synced: when a rule fires, the moments before are
			     kept whatever happens next */
};
/* @until_wall: only the records of that time (CLOCK_REALTIME ns) or before
 * are needed, so the open chunks holding none stay open; 0: all of them. */
typedef void (*fr_triggers_flush_cb)(enum fr_flush how, uint64_t until_wall, void *userdata);
/* Records a user-space event (the trigger record) into the store. */
typedef void (*fr_triggers_record_cb)(const struct fr_record *rec, void *userdata);

struct fr_triggers_params {
	sd_event *event;
	const char *store_dir;
	const char *config_path; /* its text goes into each incident */
	const uint8_t *boot_id;
	int cgroup_fd; /* the cgroup2 mount (-1: none): pressure rules on cgroups */
	fr_triggers_flush_cb flush;
	fr_triggers_record_cb record;
	void *userdata;
};

int fr_triggers_new(const struct fr_triggers_params *p, const struct fr_rules *rules, struct fr_triggers **ret);
struct fr_triggers *fr_triggers_free(struct fr_triggers *t);
/* New rules (reload): governance state of rules that keep their name stays. */
/* @ks names this boot's kernel frames as the store's snapshot of it does
 * (NULL: none): incidents look their kernel names up in it rather than
 * load the snapshot, ~20 ms of the event loop at each.  Lent: set NULL
 * before it is freed. */
struct fr_ksyms;
void fr_triggers_lend_ksyms(struct fr_triggers *t, const struct fr_ksyms *ks);
int fr_triggers_set_rules(struct fr_triggers *t, const struct fr_rules *rules);

/* Checks an event record; @cgroup is its cgroup path, @exe its process's
 * executable, each NULL when not known; @frames[0..nframes) its stack,
 * named (a fatal signal's: the incident says where it crashed), or NULL. */
/* Whether a rule looks at records of @type at all: the recorder asks
 * before it finds a record's cgroup path for fr_triggers_on_record(). */
bool fr_triggers_may_match(const struct fr_triggers *t, uint16_t type);
struct fr_frame;
void fr_triggers_on_record(struct fr_triggers *t, const struct fr_record *rec, const char *cgroup,
			   const char *exe, const struct fr_frame *frames, int nframes);
/* @exec's process runs @exe from @exec's time on: the open incidents'
 * triggers of that pid on records from then on, which fired before the
 * exec record was handled (it came later, from another CPU's ring), name
 * it instead of the image before (or none). */
void fr_triggers_on_exe(struct fr_triggers *t, const struct fr_record *exec, const char *exe);
/* A chunk the store has queued for writing (its bytes as they will be
 * stored): the incident written ahead takes its window's last chunks
 * from here. */
void fr_triggers_on_chunk(struct fr_triggers *t, const void *chunk, size_t len);
/* frctl freeze: returns the incident it opened or joined (a JSON object
 * with id, path, end), or an error object. */
struct json_object *fr_triggers_freeze(struct fr_triggers *t, const char *reason, uint32_t pid);
/* Writes every open incident now (at shutdown); no spare file is made
 * from then on. */
void fr_triggers_flush_pending(struct fr_triggers *t);

/* For status: per rule {fired, joined, suppressed}, and incident files. */
struct json_object *fr_triggers_status(struct fr_triggers *t);

#endif
