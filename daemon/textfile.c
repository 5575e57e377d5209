/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Prometheus textfile (textfile.h).  The figures come from the status
 * object the control socket serves, so the two cannot disagree; this file
 * only renames them by the Prometheus conventions (flightrec_ prefix, base
 * units in the name, _total for counters, one family per meaning with
 * labels for source, cpu, rule...) and adds what only a long-lived reader
 * wants: the store's size on disk and the age of its oldest record (the
 * retention actually held), and the daemon's own CPU time and memory.
 *
 * Written by hand: the exposition format is a few lines of text, and Debian
 * has no C client library for it.  Label values are escaped as the format
 * says (backslash, double quote, newline); rule and source names are the
 * only values that come from outside.
 *
 * Off the daemon's loop: the file is rendered and written, and the store's
 * headers read, on a thread started for each write, so that a file system
 * that stalls (the store's or the textfile's: NFS, FUSE, a dying disk)
 * stops this file, not the drain.  The loop hands the thread its status
 * object; the thread wakes the loop (an eventfd) when it is done, and the
 * loop takes the outcome.  A write that has not ended by the next interval
 * is left to end (that interval's is skipped, counted, said once).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/store-reader.h"
#include "log.h"
#include "textfile.h"

/* One write, on its thread: what it was given, and what came of it. */
struct job {
	pthread_t thread;
	char *path;
	char *old_path;           /* the file written before, to remove: NULL */
	struct json_object *status;
	bool up;
	int r;                    /* 0 or -errno */
	int old_r;                /* of removing old_path */
	int done_fd;              /* the textfile's, written when done */
	bool threaded;            /* (else it ran in the loop) */
	uint64_t cpu_ns;
	atomic_bool done;
};

struct fr_textfile {
	char *path;        /* the file last written, removed if the path changes */
	int last_error;    /* of the last failed write, 0 after a success */
	uint64_t written, failed;
	uint64_t skipped;  /* intervals whose write found the last one running */
	bool slow_said;    /* a write was found running at the next interval */
	bool skipped_last; /* the last interval was skipped */
	uint64_t cpu_ns;   /* thread CPU time spent on it, all writes */
	struct job *job;   /* the write under way, or ended and not yet taken */
	int done_fd;       /* eventfd: a write's thread ended */
	sd_event_source *done_src;
};

static void reap(struct fr_textfile *t, bool block);

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	eventfd_t n;

	(void)eventfd_read(fd, &n);
	reap(userdata, false);
	return 0;
}

int fr_textfile_new(sd_event *event, struct fr_textfile **ret)
{
	struct fr_textfile *t = calloc(1, sizeof(*t));
	int k;

	if (!t)
		return -ENOMEM;
	t->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->done_fd < 0) {
		k = -errno;
		free(t);
		return k;
	}
	k = sd_event_add_io(event, &t->done_src, t->done_fd, EPOLLIN, on_done, t);
	if (k < 0) {
		close(t->done_fd);
		free(t);
		return k;
	}
	*ret = t;
	return 0;
}

struct fr_textfile *fr_textfile_free(struct fr_textfile *t)
{
	if (t) {
		reap(t, true);
		sd_event_source_disable_unref(t->done_src);
		close(t->done_fd);
		free(t->path);
	}
	free(t);
	return NULL;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static uint64_t u64(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v ? json_object_get_uint64(v) : 0;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void label_value(FILE *f, const char *v)
{
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

/* name{k="v",...} value; @labels: NULL-terminated name, value pairs */
static void sample_labels(FILE *f, const char *name, const char *const *labels, const char *value)
{
	fputs(name, f);
	for (size_t i = 0; labels && labels[i]; i += 2) {
		fprintf(f, "%s%s=", i ? "," : "{", labels[i]);
		label_value(f, labels[i + 1]);
		if (!labels[i + 2])
			fputc('}', f);
	}
	fprintf(f, " %s\n", value);
}

static void sample_u64(FILE *f, const char *name, const char *const *labels, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	sample_labels(f, name, labels, buf);
}

static void sample_double(FILE *f, const char *name, const char *const *labels, double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.17g", v);
	sample_labels(f, name, labels, buf);
}

/* A family with one sample and no labels. */
static void single(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	sample_u64(f, name, NULL, v);
}

/* A family of @key of each member of the object @group, labelled
 * @label="member name". */
static void per_member(FILE *f, struct json_object *group, const char *key, const char *name, const char *type,
		       const char *label, const char *help)
{
	if (!json_object_is_type(group, json_type_object))
		return;
	family(f, name, type, help);
	json_object_object_foreach(group, member, o)
		sample_u64(f, name, (const char *const[]){ label, member, NULL }, u64(o, key));
}

/* A family of several keys of one object, labelled @label="what": the
 * parts of one whole, like frames by how they were named. */
static void per_key(FILE *f, struct json_object *o, const char *name, const char *const *fixed, const char *label,
		    const char *const *keys, const char *const *values)
{
	if (!o)
		return;
	for (size_t i = 0; keys[i]; i++) {
		const char *labels[8];
		size_t n = 0;
		for (; fixed && fixed[n]; n++)
			labels[n] = fixed[n];
		labels[n++] = label;
		labels[n++] = values[i];
		labels[n] = NULL;
		sample_u64(f, name, labels, u64(o, keys[i]));
	}
}

static void sources(FILE *f, struct json_object *srcs)
{
	char cpu[24];

	per_member(f, srcs, "records", "flightrec_records_total", "counter", "source",
		   "Records the source emitted in the kernel and the daemon received.");
	family(f, "flightrec_dropped_records_total", "counter",
	       "Records lost in the kernel because the CPU's ring buffer was full (samples and switch records: 7/8 full); dumps show them as gap records.");
	json_object_object_foreach(srcs, name, o) {
		struct json_object *per_cpu = get(o, "dropped_per_cpu");
		for (size_t i = 0; i < json_object_array_length(per_cpu); i++) {
			snprintf(cpu, sizeof(cpu), "%zu", i);
			sample_u64(f, "flightrec_dropped_records_total",
				   (const char *const[]){ "source", name, "cpu", cpu, NULL },
				   json_object_get_uint64(json_object_array_get_idx(per_cpu, i)));
		}
	}
	per_member(f, srcs, "untracked", "flightrec_untimed_syscalls_total", "counter", "source",
		   "System calls that could not be timed (no per-thread slot free).");
	family(f, "flightrec_source_enabled", "gauge", "1 if the configuration enables the source.");
	json_object_object_foreach(srcs, n1, o1)
		sample_u64(f, "flightrec_source_enabled", (const char *const[]){ "source", n1, NULL },
			   json_object_get_boolean(get(o1, "enabled")));
	family(f, "flightrec_source_attached", "gauge",
	       "1 if the source's programs are attached; enabled but 0 means the kernel refused them.");
	json_object_object_foreach(srcs, n2, o2)
		sample_u64(f, "flightrec_source_attached", (const char *const[]){ "source", n2, NULL },
			   json_object_get_boolean(get(o2, "attached")));
}

static void cpus(FILE *f, struct json_object *per_cpu)
{
	char cpu[24];

	family(f, "flightrec_daemon_lost_records_total", "counter",
	       "Records the daemon received but could not keep: the store failed (write) or they did not decode.");
	for (size_t i = 0; i < json_object_array_length(per_cpu); i++) {
		struct json_object *c = json_object_array_get_idx(per_cpu, i);
		snprintf(cpu, sizeof(cpu), "%" PRIu64, u64(c, "cpu"));
		sample_u64(f, "flightrec_daemon_lost_records_total",
			   (const char *const[]){ "cpu", cpu, "reason", "write", NULL }, u64(c, "lost_write"));
		sample_u64(f, "flightrec_daemon_lost_records_total",
			   (const char *const[]){ "cpu", cpu, "reason", "decode", NULL }, u64(c, "lost_decode"));
	}
}

/* The first chunk of the oldest segment: its records are the oldest the
 * store holds (to within a chunk's age, recorder.chunk_age). */
static int first_chunk(const struct fr_chunk_ref *ref, void *userdata)
{
	uint64_t *oldest = userdata;
	*oldest = ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
	return 1;
}

static void store(FILE *f, struct json_object *st)
{
	const char *path = json_object_get_string(get(st, "path"));
	struct fr_store_reader *r = NULL;
	struct fr_store_reader_stats rs = {};
	uint64_t oldest = 0;

	single(f, "flightrec_store_written_bytes_total", "counter", "Bytes of chunks written to the store.",
	       u64(st, "bytes_written"));
	single(f, "flightrec_store_chunks_written_total", "counter", "Chunks written to the store.",
	       u64(st, "chunks_written"));
	single(f, "flightrec_store_chunk_write_failures_total", "counter",
	       "Chunks the store could not write; their records count as lost (reason write).",
	       u64(st, "chunks_failed"));
	single(f, "flightrec_store_syncs_total", "counter", "fdatasync() calls that made the store durable.",
	       u64(st, "syncs"));
	single(f, "flightrec_store_sync_failures_total", "counter",
	       "fdatasync() calls that failed; the chunks written since the sync before count as failed.",
	       u64(st, "syncs_failed"));
	single(f, "flightrec_store_limit_bytes", "gauge", "The store's bound on disk (store.size).",
	       u64(st, "bytes_bound"));
	single(f, "flightrec_store_held_bytes", "gauge",
	       "Chunks waiting in memory for a slow disk (up to 16 MiB, then records drop).",
	       u64(st, "held_bytes"));
	/* a few headers: the segment files and the oldest one's first chunk */
	if (path && fr_store_reader_open(path, &r) >= 0) {
		(void)fr_store_reader_foreach(r, first_chunk, &oldest);
		fr_store_reader_get_stats(r, &rs);
		fr_store_reader_free(r);
		single(f, "flightrec_store_size_bytes", "gauge", "Bytes the store takes on disk now.",
		       rs.bytes_on_disk);
	}
	if (oldest) {
		double now = (double)fr_now_ns(CLOCK_REALTIME) / 1e9;
		family(f, "flightrec_store_oldest_record_timestamp_seconds", "gauge",
		       "Wall time of the oldest record the store holds.");
		sample_double(f, "flightrec_store_oldest_record_timestamp_seconds", NULL, (double)oldest / 1e9);
		family(f, "flightrec_store_retention_seconds", "gauge",
		       "How far back the store reaches now: the age of its oldest record.");
		sample_double(f, "flightrec_store_retention_seconds", NULL, MAX(now - (double)oldest / 1e9, 0.0));
	}
}

static void triggers(FILE *f, struct json_object *tr)
{
	struct json_object *rules = get(tr, "rules");

	per_member(f, rules, "fired", "flightrec_incidents_total", "counter", "rule",
		   "Incidents the rule opened (a trigger that joins an open incident is counted as joined).");
	per_member(f, rules, "joined", "flightrec_triggers_joined_total", "counter", "rule",
		   "Triggers of the rule that joined an incident already open.");
	per_member(f, rules, "suppressed", "flightrec_triggers_suppressed_total", "counter", "rule",
		   "Triggers of the rule not frozen: cooldown, hourly limit or incident budget.");
	single(f, "flightrec_incident_files_written_total", "counter", "Incident files written.",
	       u64(tr, "written"));
	single(f, "flightrec_incident_write_failures_total", "counter", "Incident files that could not be written.",
	       u64(tr, "failed"));
	single(f, "flightrec_incidents_open", "gauge", "Incidents waiting for the end of their window.",
	       u64(tr, "open"));
}

static void sampler(FILE *f, struct json_object *smp)
{
	struct json_object *sy = get(smp, "symbols"), *uw = get(smp, "unwind");

	if (sy) {
		family(f, "flightrec_sampler_frames_total", "counter",
		       "Stack frames by how they were named: named (function), jit (perf map), module_only (file and "
		       "offset), unknown/unnamed (address only).");
		per_key(f, sy, "flightrec_sampler_frames_total", (const char *const[]){ "space", "kernel", NULL },
			"result", (const char *const[]){ "kernel_named", "kernel_unnamed", NULL },
			(const char *const[]){ "named", "unnamed", NULL });
		per_key(f, sy, "flightrec_sampler_frames_total", (const char *const[]){ "space", "user", NULL },
			"result",
			(const char *const[]){ "user_named", "user_jit", "user_module_only", "user_unknown", NULL },
			(const char *const[]){ "named", "jit", "module_only", "unknown", NULL });
	}
	if (uw) {
		family(f, "flightrec_unwound_stacks_total", "counter",
		       "User stacks unwound, by how far they got: complete (to the first frame), truncated (frame "
		       "limit), no_unwind_info, failed.");
		per_key(f, uw, "flightrec_unwound_stacks_total", NULL, "result",
			(const char *const[]){ "complete", "truncated", "no_unwind_info", "failed", NULL },
			(const char *const[]){ "complete", "truncated", "no_unwind_info", "failed", NULL });
	}
}

static void offcpu(FILE *f, struct json_object *os)
{
	if (!os || !json_object_get_boolean(get(os, "enabled")))
		return;
	family(f, "flightrec_offcpu_stacks_total", "counter",
	       "Off-CPU records with stacks, by what became of the user stack.");
	per_key(f, os, "flightrec_offcpu_stacks_total", NULL, "user_stack",
		(const char *const[]){ "user_copied", "kernel_thread", "no_task_work", "busy", "unreadable", NULL },
		(const char *const[]){ "copied", "kernel_thread", "no_task_work", "busy", "unreadable", NULL });
}

static void wakers(FILE *f, struct json_object *wo)
{
	if (!wo || !json_object_get_boolean(get(wo, "enabled")))
		return;
	family(f, "flightrec_wakers_total", "counter",
	       "Wakers of off-CPU waits: joined to their wait's record, or lost (missing: the record went without "
	       "the waker it said it had; orphaned: the waker without its record; refused: over the bound; "
	       "dropped: in the kernel, the ring full).");
	per_key(f, wo, "flightrec_wakers_total", NULL, "outcome",
		(const char *const[]){ "joined", "missing", "orphaned", "refused", "dropped", NULL },
		(const char *const[]){ "joined", "missing", "orphaned", "refused", "dropped", NULL });
}

/* The daemon's own cost, as node_exporter's process collector would name
 * it for a process it watched (prefixed: node_exporter has process_* of
 * its own). */
static void self(FILE *f)
{
	struct rusage ru;
	unsigned long pages = 0, resident = 0;
	FILE *statm;

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		family(f, "flightrec_process_cpu_seconds_total", "counter",
		       "CPU time flightrecd used, user and system (BPF programs run in the traced tasks and are not in it).");
		sample_double(f, "flightrec_process_cpu_seconds_total", NULL,
			      (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
				      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	}
	statm = fopen("/proc/self/statm", "re");
	if (statm && fscanf(statm, "%lu %lu", &pages, &resident) == 2)
		single(f, "flightrec_process_resident_memory_bytes", "gauge", "flightrecd's resident memory.",
		       (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE));
	if (statm)
		fclose(statm);
}

static void render(FILE *f, struct json_object *s, bool up)
{
	struct json_object *ov = get(s, "overload"), *ctl = get(s, "control"), *an = get(s, "annotations");
	double now = (double)fr_now_ns(CLOCK_REALTIME) / 1e9;

	single(f, "flightrec_up", "gauge", "1 while flightrecd records; 0 in the file it leaves at a clean stop.", up);
	family(f, "flightrec_build_info", "gauge", "flightrecd's version, as a label.");
	sample_u64(f, "flightrec_build_info", (const char *const[]){ "version", FR_VERSION, NULL }, 1);
	family(f, "flightrec_start_time_seconds", "gauge", "When this flightrecd started (wall time).");
	sample_double(f, "flightrec_start_time_seconds", NULL,
		      now - json_object_get_double(get(s, "uptime_s")));
	sources(f, get(s, "sources"));
	cpus(f, get(s, "per_cpu"));
	single(f, "flightrec_overload_windows_total", "counter",
	       "Drain windows cut short by recorder.drain_cpu: the daemon was shedding a flood.",
	       u64(ov, "windows_cut"));
	store(f, get(s, "store"));
	triggers(f, get(s, "triggers"));
	sampler(f, get(s, "sampler"));
	offcpu(f, get(s, "offcpu_stacks"));
	wakers(f, get(s, "wakers"));
	if (ctl)
		single(f, "flightrec_control_denied_total", "counter",
		       "Requests to freeze, mark or annotate refused: the peer was neither root nor in control.group.",
		       u64(ctl, "denied"));
	if (an) {
		single(f, "flightrec_annotations_received_total", "counter", "Annotations received on annotate.sock.",
		       u64(an, "received"));
		single(f, "flightrec_annotations_cut_total", "counter", "Annotations cut to 1024 bytes.",
		       u64(an, "cut"));
	}
	self(f);
}

/* PATH.tmp (not *.prom: node_exporter reads only those), then renamed
 * over PATH.  Mode 0644 whatever the umask: node_exporter runs as its
 * own user.  Not fsync'ed: after a power cut an empty or old file is
 * harmless, the next interval writes it again. */
static int write_file(const char *path, const char *data, size_t len)
{
	_cleanup_free_ char *tmp = NULL;
	int fd, k = 0;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0)
		k = -errno;
	for (size_t off = 0; k == 0 && off < len;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			k = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (close(fd) < 0 && k == 0)
		k = -errno;
	if (k == 0 && rename(tmp, path) < 0)
		k = -errno;
	if (k < 0)
		(void)unlink(tmp);
	return k;
}

static void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->path);
	free(j->old_path);
	json_object_put(j->status);
	free(j);
}

static void job_write(struct job *j)
{
	_cleanup_free_ char *buf = NULL;
	uint64_t t0 = fr_now_ns(CLOCK_THREAD_CPUTIME_ID);
	size_t len = 0;
	FILE *f;

	if (j->old_path && unlink(j->old_path) < 0 && errno != ENOENT)
		j->old_r = -errno;
	if (j->path) {
		f = open_memstream(&buf, &len);
		if (!f)
			j->r = -ENOMEM;
		else {
			render(f, j->status, j->up);
			j->r = fclose(f) != 0 ? -ENOMEM : write_file(j->path, buf, len);
		}
	}
	j->cpu_ns = fr_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	atomic_store(&j->done, true);
}

static void *job_run(void *userdata)
{
	struct job *j = userdata;

	job_write(j);
	(void)eventfd_write(j->done_fd, 1);
	return NULL;
}

/* Takes the outcome of the last write if it ended (waiting for it if
 * @block), logging what went wrong once per kind. */
static void reap(struct fr_textfile *t, bool block)
{
	struct job *j = t->job;

	if (!j || (!block && !atomic_load(&j->done)))
		return;
	if (j->threaded)
		(void)pthread_join(j->thread, NULL);
	t->job = NULL;
	t->cpu_ns += j->cpu_ns;
	if (j->old_r < 0)
		log_warning_errno(j->old_r, "Failed to remove the old textfile %s: %m", j->old_path);
	if (j->path && j->r < 0) {
		t->failed++;
		/* once per kind of failure: a missing directory stays missing */
		if (j->r != t->last_error)
			log_warning_errno(j->r, "Failed to write the Prometheus textfile %s (tried again every prometheus.interval): %m",
					  j->path);
		t->last_error = j->r;
	} else if (j->path) {
		if (t->last_error)
			log_info("Writing the Prometheus textfile %s again.", j->path);
		t->last_error = 0;
		t->written++;
	}
	job_free(j);
}

int fr_textfile_write(struct fr_textfile *t, const char *path, struct json_object *status, bool up)
{
	struct job *j;
	int k;

	reap(t, false);
	if (t->job) {
		t->skipped++;
		if (!t->slow_said)
			log_warning("The Prometheus textfile's last write has not ended after an interval (a file system "
				    "that does not answer?); the figures wait for it to end.");
		t->slow_said = t->skipped_last = true;
		return -EBUSY;
	}
	/* said again only once a whole interval went by unskipped */
	if (t->slow_said && !t->skipped_last) {
		log_info("The Prometheus textfile's writes keep up again.");
		t->slow_said = false;
	}
	t->skipped_last = false;
	if (!path && !t->path)
		return 0;
	j = calloc(1, sizeof(*j));
	if (!j)
		return log_oom();
	j->up = up;
	j->done_fd = t->done_fd;
	j->status = json_object_get(status);
	if (path && !(j->path = strdup(path))) {
		job_free(j);
		return log_oom();
	}
	/* a write to another path removes the last one, so a reload that
	 * moves the file leaves no stale copy to be scraped */
	if (t->path && (!path || strcmp(t->path, path) != 0))
		j->old_path = TAKE_PTR(t->path);
	if (path && !t->path)
		t->path = strdup(path); /* out of memory: only a stale file later */
	k = pthread_create(&j->thread, NULL, job_run, j);
	j->threaded = k == 0;
	if (k != 0) {
		/* no thread (the tasks limit): here, as before */
		job_write(j);
		t->job = j;
		reap(t, true);
		return 0;
	}
	t->job = j;
	return 0;
}

struct json_object *fr_textfile_status(const struct fr_textfile *t, const char *path)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "path", path ? json_object_new_string(path) : NULL);
	json_object_object_add(o, "written", json_object_new_uint64(t->written));
	json_object_object_add(o, "failed", json_object_new_uint64(t->failed));
	json_object_object_add(o, "skipped", json_object_new_uint64(t->skipped));
	json_object_object_add(o, "cpu_ns", json_object_new_uint64(t->cpu_ns));
	json_object_object_add(o, "error", t->last_error ? json_object_new_string(strerror(-t->last_error)) : NULL);
	return o;
}
