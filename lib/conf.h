/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration schema (flightrec.conf(5)), its defaults and its
 * validation.  Loading never logs: errors come back as "file:line: text".
 */
#ifndef FR_CONF_H
#define FR_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

#define FR_CONF_DEFAULT_PATH "/etc/flightrec/flightrec.conf"
#define FR_STORE_DEFAULT_PATH "/var/lib/flightrec"
#define FR_SOCKET_DEFAULT_PATH "/run/flightrec/control.sock"
#define FR_CONTROL_GROUP_DEFAULT "flightrec"
/* Debian's prometheus-node-exporter reads *.prom files from this directory
 * (its --collector.textfile.directory) */
#define FR_TEXTFILE_DEFAULT_PATH "/var/lib/prometheus/node-exporter/flightrec.prom"
/* recorder.drain_cpu: percent of one CPU the daemon may spend draining the
 * rings per drain window (see flightrecd.c) */
#define FR_CONF_DRAIN_CPU_DEFAULT 20

/* Must match FR_SYSCALL_MAX in bpf/event.h. */
#define FR_CONF_SYSCALL_MAX 512

struct fr_conf {
	char *store_path;
	uint64_t store_size; /* 0: "auto" (fr_store_auto_size()) */
	uint32_t store_segments;
	uint64_t sync_interval_ns;
	uint64_t keyframe_interval_ns;

	uint64_t ring_size;        /* per CPU */
	uint64_t chunk_size;       /* raw bytes that close a chunk */
	uint64_t chunk_age_ns;     /* age that closes a chunk */
	uint64_t drain_interval_ns;
	uint32_t drain_cpu_percent; /* of one CPU, per drain window */
	int zstd_level;

	bool proc_enabled;
	bool syscall_enabled;
	uint64_t syscall_threshold_ns;
	uint64_t syscall_exclude[FR_CONF_SYSCALL_MAX / 64];

	bool sched_enabled;
	bool offcpu_enabled;
	uint64_t offcpu_threshold_ns;
	bool offcpu_stacks;
	bool wakers;
	bool runq_enabled;
	uint64_t runq_threshold_ns;
	bool sched_full;
	bool block_enabled;
	uint64_t block_threshold_ns;
	bool oom_enabled;
	bool signal_enabled;
	uint64_t signal_mask;    /* bit n: signal n is recorded */
	bool tcp_enabled;
	bool sample_enabled;
	uint32_t sample_hz;
	char *debug_dir;        /* separate debug files: DIR/.build-id/xx/rest.debug */
	uint64_t parse_timeout_ns;  /* the longest the daemon waits for one stack's names */
	uint32_t parse_cpu_percent; /* of each second, the most spent waiting for them */
	uint64_t parse_memory;      /* the parser helper's heap, at most (bytes) */
	bool metrics_enabled;
	uint64_t metrics_interval_ns;
	uint64_t metrics_top_interval_ns;
	uint32_t metrics_top;

	char *socket_path;
	char *control_group;   /* may freeze and mark, with root (control.group) */

	char *textfile;              /* prometheus.textfile, NULL: off */
	uint64_t textfile_interval_ns;

	char *upload_url;            /* upload.url, NULL: off */
	uint32_t upload_queue;       /* newest incidents not yet uploaded that are tried */
	uint64_t upload_timeout_ns;  /* one transfer */
	char *upload_netrc;          /* upload.netrc: the server's credentials, NULL: none */

	bool redact_args;            /* --redact cuts: exec arguments past argv[0], */
	bool redact_home;            /* paths under /home and /root, */
	bool redact_tcp;             /* TCP peer addresses, */
	bool redact_marks;           /* mark and annotation texts, */
	bool redact_urls;            /* user, password and query of URLs in metadata */

	struct fr_rules rules;
};

void fr_conf_init_defaults(struct fr_conf *c);
void fr_conf_done(struct fr_conf *c);

/* Loads @path over the defaults.  When @must_exist is false a missing file
 * means "defaults".  On error returns -errno and writes one line to @err. */
int fr_conf_load(struct fr_conf *c, const char *path, bool must_exist, char *err, size_t errlen);

/* Lets each rule's records reach the trigger engine: the source threshold
 * its condition names (conditions.h, lowers) lowered to the rule's, its
 * signals added to the recorded ones.  Returns how many thresholds it
 * lowered. */
unsigned fr_conf_lower_for_rules(struct fr_conf *c);

static inline bool fr_conf_syscall_excluded(const struct fr_conf *c, unsigned nr)
{
	return nr < FR_CONF_SYSCALL_MAX && (c->syscall_exclude[nr / 64] >> (nr % 64)) & 1;
}

/* The largest chunk the recorder gives the store: recorder.chunk_size,
 * and room for its header and a frame that ran past it. */
static inline uint64_t fr_conf_max_chunk(const struct fr_conf *c)
{
	return c->chunk_size + 4096;
}

#endif
