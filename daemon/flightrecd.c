/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flightrecd: the always-on flight recorder.  One sd_event loop owns
 * everything: the ring-buffer epoll fd, the drain timer, the sync timer,
 * the io_uring completion eventfd, signals, the control socket and the
 * watchdog.  It never forks to daemonize (systemd style); it forks only to
 * run the exec actions of trigger rules.
 *
 * Long because every handler of that loop (start, drain, timers, control
 * verbs, reload, shutdown) works on the one struct daemon; what has a
 * concept of its own (recorder, sources, triggers, metrics, textfile,
 * control socket) lives in its own file.
 */
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "../lib/boot-host.h"
#include "../lib/clock.h"
#include "../lib/conf.h"
#include "../lib/ksyms.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/store-writer.h"
#include "../lib/store.h"
#include "annotate.h"
#include "control.h"
#include "disk-latency.h"
#include "metrics.h"
#include "mmap-tracker.h"
#include "pmu-counters.h"
#include "log.h"
#include "python.h"
#include "recorder.h"
#include "wakers.h"
#include "rings.h"
#include "sources.h"
#include "perf-map.h"
#include "proc-access.h"
#include "symbolizer.h"
#include "parser.h"
#include "unwinder.h"
#include "textfile.h"
#include "trigger.h"
#include "unix-socket.h"
#include <systemd/sd-id128.h>

int fr_log_debug;

/* Under a flood the daemon sheds load instead of following it: in each
 * drain window (recorder.drain_interval) the loop drains the rings only
 * until its thread has used recorder.drain_cpu (or --max-drain-cpu)
 * percent of one CPU in that window; the rest stays in the rings, which
 * overflow, and BPF counts the overflow as drops that become gap records.
 * Measured cost: ~0.1-0.2 µs of daemon CPU per record (RELIABILITY.md), so
 * the default 20 % is over a million records/s: a cap for pathological
 * floods, not a normal state. */

struct daemon {
	struct fr_conf conf;
	const char *config_path;
	bool config_explicit;
	char *store_override;
	char *socket_path;
	uint64_t status_interval_ns;
	unsigned drain_cpu_override; /* --max-drain-cpu, 0 if not given */

	sd_event *event;
	struct fr_store_writer *writer;
	struct fr_rings *rings;
	struct fr_sources *sources;
	struct fr_recorder *rec;
	struct fr_control *control;
	struct fr_annotate *annotate;
	char *annotate_path;
	sd_event_source *ring_src, *writer_src, *drain_timer, *sync_timer, *status_timer, *keyframe_timer,
		*metrics_timer, *textfile_timer;
	struct fr_metrics *metrics;
	struct fr_pmu_counters *pmu; /* NULL: no hardware counters */
	struct fr_triggers *triggers;
	struct fr_textfile *textfile;
	struct fr_disk_latency *disk_latency;
	struct fr_mmap_tracker *tracker; /* NULL: not tracking mappings */
	uint64_t last_top_mono;

	uint64_t start_mono;
	uint64_t drain_deadline;   /* thread CPU ns: the drain budget of this window */
	bool drain_cut;            /* this window's budget ran out */
	uint64_t drained_boot;     /* CLOCK_BOOTTIME ns (the records' clock):
				      when the last drain that emptied the
				      rings began */
	uint64_t windows_cut;      /* drain windows cut short, since start */
	bool running;              /* recorded: the accounting is worth logging at exit */
	bool shedding;             /* logged once when it starts, once when it ends */
	uint64_t shed_since;       /* windows_cut when the episode began */
	uint64_t rate_last_mono, rate_last_records;
	double records_per_s;

	pid_t self;         /* this process as BPF records it: the host's pid */
	bool private_pidns; /* /proc (getpid()) numbers processes otherwise */
};



static void help(void)
{
	printf("Usage: flightrecd [OPTIONS]\n"
	       "\n"
	       "Always-on flight recorder: records processes, slow system calls, scheduler\n"
	       "and block I/O latency, OOM kills, fatal signals, TCP trouble, annotations and\n"
	       "system metrics with BPF into a bounded, compressed, crash-safe store.\n"
	       "Runs in the foreground.\n"
	       "\n"
	       "  -c, --config FILE          configuration (default %s;\n"
	       "                             built-in defaults if that file does not exist)\n"
	       "  -s, --store DIR            store directory (overrides store.path); refused\n"
	       "                             if others own it or may write to it\n"
	       "      --socket PATH          control socket (default: DIR/control.sock with\n"
	       "                             --store, else control.socket from the config);\n"
	       "                             its directory root's (or ours), not writable by\n"
	       "                             others unless sticky\n"
	       "      --check-config         validate the configuration, print\n"
	       "                             \"configuration OK\" or the errors, and exit\n"
	       "      --status-interval DUR  log a status line every DUR (e.g. 5s)\n"
	       "      --max-drain-cpu PCT    share of one CPU (1-100) the daemon may spend\n"
	       "                             draining the rings; past it a flood is dropped\n"
	       "                             in the kernel and recorded as gaps (overrides\n"
	       "                             recorder.drain_cpu, default %d)\n"
	       "  -d, --debug                debug logging\n"
	       "  -h, --help                 this help\n"
	       "      --version              version\n"
	       "\n"
	       "Signals: SIGTERM/SIGINT flush and exit 0; SIGHUP reloads the configuration.\n"
	       "See flightrecd(8), flightrec.conf(5).\n",
	       FR_CONF_DEFAULT_PATH, FR_CONF_DRAIN_CPU_DEFAULT);
}

static int load_config(struct daemon *d, struct fr_conf *c)
{
	char err[512];
	int k;

	fr_conf_init_defaults(c);
	k = fr_conf_load(c, d->config_path, d->config_explicit, err, sizeof(err));
	if (k < 0) {
		fr_conf_done(c);
		log_error("%s", err);
		return k;
	}
	/* latency rules need their source's records: lower its threshold */
	fr_conf_lower_for_rules(c);
	/* the command line wins over the file, at start and at every reload */
	if (d->drain_cpu_override)
		c->drain_cpu_percent = d->drain_cpu_override;
	if (d->store_override) {
		free(c->store_path);
		c->store_path = strdup(d->store_override);
		if (!c->store_path)
			return -ENOMEM;
		/* a private instance (tests, a second recorder) does not
		 * write over the system's textfile unless its file says so */
		if (c->textfile && strcmp(c->textfile, FR_TEXTFILE_DEFAULT_PATH) == 0) {
			free(c->textfile);
			c->textfile = NULL;
		}
	}
	return 0;
}

/* Drains within this window's CPU budget.  Once it is spent, the rings'
 * fd is left unwatched until the next window: the rings fill and BPF
 * counts what does not fit. */
static int drain(struct daemon *d)
{
	uint64_t start = fr_now_ns(CLOCK_BOOTTIME);
	bool cut = false;
	int k;

	/* the mappings first: the records drained next may need them */
	fr_mmap_tracker_poll(d->tracker);
	k = fr_rings_consume_until(d->rings, d->drain_deadline, &cut);
	fr_recorder_drained(d->rec, false);
	if (k >= 0 && !cut)
		d->drained_boot = start;

	if (k < 0)
		log_warning_errno(k, "Failed to consume ring buffers: %m");
	if (cut && !d->drain_cut) {
		d->drain_cut = true;
		d->windows_cut++;
		(void)sd_event_source_set_enabled(d->ring_src, SD_EVENT_OFF);
	}
	return k;
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;

	(void)drain(d);
	fr_store_writer_submit(d->writer);
	return 0;
}

static int on_writer(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	return fr_store_writer_process(d->writer);
}

static int rearm(sd_event_source *s, uint64_t interval_ns)
{
	int k = sd_event_source_set_time_relative(s, interval_ns / 1000);
	if (k < 0)
		return k;
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_drain(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	if (d->drain_cut && !d->shedding) {
		log_warning("Overloaded: draining the rings is capped at %u%% of a CPU; the rest is dropped in the kernel and recorded as gaps.",
			    d->conf.drain_cpu_percent);
		d->shedding = true;
		d->shed_since = d->windows_cut - 1;
	} else if (!d->drain_cut && d->shedding) {
		log_notice("Load back under the drain budget after %" PRIu64 " windows of shedding.",
			   d->windows_cut - d->shed_since);
		d->shedding = false;
	}
	/* a new window, a new budget */
	d->drain_deadline = fr_rings_thread_cpu_ns() + d->conf.drain_interval_ns * d->conf.drain_cpu_percent / 100;
	d->drain_cut = false;
	if (d->ring_src)
		(void)sd_event_source_set_enabled(d->ring_src, SD_EVENT_ON);
	(void)fr_sources_flush(d->sources);
	(void)drain(d);
	fr_recorder_tick(d->rec, fr_now_ns(CLOCK_MONOTONIC));
	fr_store_writer_submit(d->writer);
	return rearm(s, d->conf.drain_interval_ns);
}

static void update_rate(struct daemon *d)
{
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC), rec = fr_recorder_records(d->rec);

	if (d->rate_last_mono && now > d->rate_last_mono)
		d->records_per_s = (double)(rec - d->rate_last_records) * 1e9 /
				   (double)(now - d->rate_last_mono);
	d->rate_last_mono = now;
	d->rate_last_records = rec;
}

static uint64_t total_dropped(struct daemon *d)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < fr_rings_ncpu(d->rings); i++) {
		struct fr_recorder_cpu_stats st;
		fr_recorder_cpu_stats(d->rec, i, &st);
		sum += st.dropped + st.lost_write + st.lost_decode;
	}
	return sum;
}

static void status_line(struct daemon *d, char *buf, size_t len)
{
	struct fr_store_writer_stats ws;
	char a[32], b[32];

	fr_store_writer_get_stats(d->writer, &ws);
	snprintf(buf, len, "Recording: %.0f records/s, %" PRIu64 " records, %" PRIu64
		 " lost, %s written, store bound %s",
		 d->records_per_s, fr_recorder_records(d->rec), total_dropped(d),
		 fr_format_size(ws.bytes_written, a, sizeof(a)),
		 fr_format_size(fr_store_writer_size_bound(d->writer, NULL), b, sizeof(b)));
}

/* Closes open chunks and queues a sync: everything recorded before this
 * point is durable once the sync completes. */
static int on_sync(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	char line[256];
	int k;

	(void)drain(d);
	fr_recorder_flush(d->rec);
	k = fr_store_writer_sync(d->writer);
	if (k < 0)
		log_warning_errno(k, "Failed to queue store sync: %m");
	update_rate(d);
	status_line(d, line, sizeof(line));
	(void)sd_notifyf(false, "STATUS=%s", line);
	return rearm(s, d->conf.sync_interval_ns);
}

/* Names every live process from /proc.  Not in a private PID namespace:
 * there /proc/N is the namespace's N, another process than the records'
 * (host) N, and a wrong name is worse than none. */
static void keyframe(struct daemon *d)
{
	int k;

	if (d->private_pidns)
		return;
	k = fr_recorder_keyframe(d->rec);
	if (k < 0)
		log_warning_errno(k, "Failed to scan /proc for a keyframe: %m");
}

static int on_keyframe(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	keyframe(d);
	fr_store_writer_submit(d->writer);
	return rearm(s, d->conf.keyframe_interval_ns);
}

static int on_metrics(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);
	bool top = d->conf.metrics_top && now - d->last_top_mono >= d->conf.metrics_top_interval_ns;
	struct json_object *o = fr_metrics_sample(d->metrics, top, d->disk_latency ? fr_disk_latency_sample : NULL,
						  d->disk_latency);

	if (top)
		d->last_top_mono = now;
	if (o && d->pmu)
		fr_pmu_counters_sample(d->pmu, o);
	if (o) {
		const char *json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		/* system-wide: no process, like a gap */
		struct fr_record rec = { .type = FR_REC_METRICS, .ts = fr_now_ns(CLOCK_BOOTTIME) };
		rec.metrics.json = json;
		rec.metrics.json_len = (uint32_t)strlen(json);
		fr_recorder_add_user(d->rec, &rec);
		json_object_put(o);
	}
	return rearm(s, d->conf.metrics_interval_ns);
}

static int on_status(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	char line[256];

	status_line(d, line, sizeof(line));
	log_info("%s", line);
	return rearm(s, d->status_interval_ns);
}

/* Off-CPU records get stacks (sched.bpf.c)? */
static bool offcpu_stacks_on(const struct fr_conf *c)
{
	return c->sched_enabled && c->offcpu_enabled && c->offcpu_stacks;
}

/* Are there stacks to unwind and name: samples, off-CPU stacks, the
 * stacks of fatal signals? */
static bool wants_symbolizer(const struct fr_conf *c)
{
	return c->sample_enabled || offcpu_stacks_on(c) || c->signal_enabled;
}

static struct json_object *status_json(struct daemon *d)
{
	struct json_object *o = json_object_new_object(), *cpus = json_object_new_array(),
			   *srcs = json_object_new_object(), *store = json_object_new_object();
	struct fr_store_writer_stats ws;

	/* what BPF counted as emitted should be delivered by now (unless the
	 * daemon is shedding load: then the drain budget decides) */
	(void)drain(d);
	json_object_object_add(o, "running", json_object_new_boolean(1));
	json_object_object_add(o, "pid", json_object_new_int64(getpid()));
	json_object_object_add(o, "pid_namespace", json_object_new_string(d->private_pidns ? "private" : "host"));
	json_object_object_add(o, "uptime_s",
			       json_object_new_double((double)(fr_now_ns(CLOCK_MONOTONIC) - d->start_mono) / 1e9));
	json_object_object_add(o, "records_per_s", json_object_new_double(d->records_per_s));
	json_object_object_add(o, "records", json_object_new_uint64(fr_recorder_records(d->rec)));
	for (unsigned i = 0; i < fr_rings_ncpu(d->rings); i++) {
		struct fr_recorder_cpu_stats st;
		struct json_object *c = json_object_new_object();

		fr_recorder_cpu_stats(d->rec, i, &st);
		json_object_object_add(c, "cpu", json_object_new_int(i));
		json_object_object_add(c, "emitted", json_object_new_uint64(st.emitted));
		json_object_object_add(c, "delivered", json_object_new_uint64(st.delivered));
		json_object_object_add(c, "dropped", json_object_new_uint64(st.dropped));
		json_object_object_add(c, "lost_write", json_object_new_uint64(st.lost_write));
		json_object_object_add(c, "lost_decode", json_object_new_uint64(st.lost_decode));
		json_object_object_add(c, "untracked", json_object_new_uint64(st.untracked));
		json_object_array_add(cpus, c);
	}
	json_object_object_add(o, "per_cpu", cpus);
	{
		/* load shedding: windows whose drain budget ran out */
		struct json_object *ov = json_object_new_object();
		json_object_object_add(ov, "drain_cpu_percent", json_object_new_int((int)d->conf.drain_cpu_percent));
		json_object_object_add(ov, "windows_cut", json_object_new_uint64(d->windows_cut));
		json_object_object_add(o, "overload", ov);
	}
	for (unsigned s = 0; s < FR_SRC__MAX; s++) {
		struct fr_source_state ss;
		struct json_object *j = json_object_new_object(), *per_cpu = json_object_new_array();
		uint64_t emitted, dropped, untracked, cpu_dropped[fr_rings_ncpu(d->rings)];

		fr_sources_state(d->sources, s, &ss);
		fr_recorder_source_stats(d->rec, s, &emitted, &dropped, &untracked, cpu_dropped);
		/* where a flood hit: the textfile's drops by CPU and source */
		for (unsigned i = 0; i < fr_rings_ncpu(d->rings); i++)
			json_object_array_add(per_cpu, json_object_new_uint64(cpu_dropped[i]));
		json_object_object_add(j, "enabled", json_object_new_boolean(ss.enabled));
		json_object_object_add(j, "attached", json_object_new_boolean(ss.attached));
		json_object_object_add(j, "records", json_object_new_uint64(emitted - dropped));
		json_object_object_add(j, "dropped", json_object_new_uint64(dropped));
		json_object_object_add(j, "untracked", json_object_new_uint64(untracked));
		json_object_object_add(j, "dropped_per_cpu", per_cpu);
		json_object_object_add(srcs, ss.name, j);
	}
	json_object_object_add(o, "sources", srcs);
	{
		unsigned hz;
		const char *ev = fr_sources_sampler_event(d->sources, &hz);
		struct json_object *smp = json_object_new_object();
		json_object_object_add(smp, "event", ev ? json_object_new_string(ev) : NULL);
		json_object_object_add(smp, "hz", json_object_new_int((int)hz));
		json_object_object_add(smp, "pmu_counters", json_object_new_boolean(d->pmu != NULL));
		json_object_object_add(smp, "kernel_stacks_unread", json_object_new_uint64(fr_recorder_kernel_stacks_unread(d->rec)));
		if (fr_recorder_symbolizer(d->rec)) {
			/* how well frames got names: unnamed ones still show their
			 * module and offset; unknown ones only an address */
			struct fr_symbolizer_stats ys, hs = {};
			struct fr_unwinder_stats us = {};
			struct fr_perf_maps_stats js = {};
			struct fr_parser_stats ps = {};
			struct fr_parser *parser = fr_recorder_parser(d->rec);
			struct json_object *sy = json_object_new_object();
			/* kernel frames are named here, user frames by the parser's helper */
			fr_symbolizer_get_stats(fr_recorder_symbolizer(d->rec), &ys);
			if (parser) {
				fr_parser_get_stats(parser, &ps, &hs, &us, &js);
				fr_add_counters((uint64_t *)&ys, (const uint64_t *)&hs, sizeof(ys) / sizeof(uint64_t));
			}
			json_object_object_add(sy, "kernel_symbols",
					       json_object_new_uint64(fr_ksyms_count(fr_symbolizer_ksyms(fr_recorder_symbolizer(d->rec)))));
			json_object_object_add(sy, "kernel_named", json_object_new_uint64(ys.kernel_named));
			json_object_object_add(sy, "kernel_unnamed", json_object_new_uint64(ys.kernel_unknown));
			json_object_object_add(sy, "kernel_by_snapshot", json_object_new_uint64(ys.kernel_by_snapshot));
			json_object_object_add(sy, "user_named", json_object_new_uint64(ys.frames_named));
			json_object_object_add(sy, "user_inlined", json_object_new_uint64(ys.frames_inlined));
			json_object_object_add(sy, "debug_info_trimmed", json_object_new_uint64(ys.dwarf_trimmed));
			json_object_object_add(sy, "debug_info_too_big", json_object_new_uint64(ys.dwarf_too_big));
			json_object_object_add(sy, "user_jit", json_object_new_uint64(ys.frames_jit));
			json_object_object_add(sy, "user_module_only", json_object_new_uint64(ys.frames_module));
			json_object_object_add(sy, "user_unknown", json_object_new_uint64(ys.frames_unknown));
			json_object_object_add(sy, "cached_processes", json_object_new_uint64(ys.processes));
			json_object_object_add(sy, "cached_files", json_object_new_uint64(ys.files));
			json_object_object_add(sy, "cache_bytes", json_object_new_uint64(ys.cache_bytes));
			json_object_object_add(sy, "maps_read", json_object_new_uint64(ys.maps_read));
			json_object_object_add(sy, "maps_taken", json_object_new_uint64(ys.maps_taken));
			json_object_object_add(sy, "maps_inherited", json_object_new_uint64(ys.maps_inherited));
			json_object_object_add(sy, "maps_capped", json_object_new_uint64(ys.maps_capped));
			json_object_object_add(sy, "files_unopened", json_object_new_uint64(ys.files_unopened));
			json_object_object_add(sy, "files_refused", json_object_new_uint64(ys.files_refused));
			json_object_object_add(smp, "symbols", sy);
			{
				/* JIT code named from perf maps, and the cache's bound */
				struct json_object *jo = json_object_new_object();
				json_object_object_add(jo, "files", json_object_new_uint64(js.files));
				json_object_object_add(jo, "lines", json_object_new_uint64(js.lines));
				json_object_object_add(jo, "lines_bad", json_object_new_uint64(js.lines_bad));
				json_object_object_add(jo, "refused", json_object_new_uint64(js.refused));
				json_object_object_add(jo, "held_bytes", json_object_new_uint64(js.held));
				json_object_object_add(jo, "evicted", json_object_new_uint64(js.evicted));
				json_object_object_add(jo, "trimmed", json_object_new_uint64(js.trimmed));
				json_object_object_add(smp, "perf_maps", jo);
			}
			if (parser) {
				/* how far user stacks got, and why the others stopped */
				struct json_object *uw = json_object_new_object();
				struct json_object *po = json_object_new_object();
				json_object_object_add(uw, "stacks", json_object_new_uint64(us.stacks));
				json_object_object_add(uw, "frames", json_object_new_uint64(us.frames));
				json_object_object_add(uw, "complete", json_object_new_uint64(us.complete));
				json_object_object_add(uw, "truncated", json_object_new_uint64(us.truncated));
				json_object_object_add(uw, "no_unwind_info", json_object_new_uint64(us.no_info));
				json_object_object_add(uw, "failed", json_object_new_uint64(us.failed));
				json_object_object_add(uw, "cached_processes", json_object_new_uint64(us.processes));
				json_object_object_add(uw, "maps_read", json_object_new_uint64(us.maps_read));
				json_object_object_add(uw, "maps_inherited", json_object_new_uint64(us.inherited));
				json_object_object_add(uw, "maps_capped", json_object_new_uint64(us.maps_capped));
				json_object_object_add(uw, "evicted", json_object_new_uint64(us.evicted));
				json_object_object_add(uw, "heap_trims", json_object_new_uint64(us.heap_trims));
				json_object_object_add(uw, "files", json_object_new_uint64(us.files));
				json_object_object_add(uw, "files_evicted", json_object_new_uint64(us.files_evicted));
				json_object_object_add(uw, "files_refused", json_object_new_uint64(us.files_refused));
				json_object_object_add(uw, "files_too_big", json_object_new_uint64(us.files_too_big));
				json_object_object_add(uw, "files_eh_by_table", json_object_new_uint64(us.files_eh_by_table));
				json_object_object_add(smp, "unwind", uw);
				/* the sandboxed helper that does both */
				json_object_object_add(po, "path", json_object_new_string(fr_parser_path(parser)));
				json_object_object_add(po, "pid", ps.pid ? json_object_new_int(ps.pid) : NULL);
				json_object_object_add(po, "starts", json_object_new_uint64(ps.starts));
				json_object_object_add(po, "crashes", json_object_new_uint64(ps.crashes));
				json_object_object_add(po, "timeouts", json_object_new_uint64(ps.timeouts));
				json_object_object_add(po, "bad_replies", json_object_new_uint64(ps.bad_replies));
				json_object_object_add(po, "start_failed", json_object_new_uint64(ps.start_failed));
				json_object_object_add(po, "stacks", json_object_new_uint64(ps.stacks));
				json_object_object_add(po, "skipped", json_object_new_uint64(ps.skipped));
				json_object_object_add(po, "over_budget", json_object_new_uint64(ps.over_budget));
				json_object_object_add(po, "files_handed", json_object_new_uint64(ps.files_handed));
				json_object_object_add(po, "needs_refused", json_object_new_uint64(ps.needs_refused));
				json_object_object_add(po, "quarantined", json_object_new_uint64(ps.quarantined));
				json_object_object_add(po, "quarantine_refused", json_object_new_uint64(ps.quarantine_refused));
				json_object_object_add(po, "descs_cut", json_object_new_uint64(ps.descs_cut));
				json_object_object_add(po, "wait_us_max", json_object_new_uint64(ps.wait_ns_max / 1000));
				json_object_object_add(po, "heap_bytes", json_object_new_uint64(ps.heap_bytes));
				json_object_object_add(smp, "parser", po);
			}
		}
		if (d->tracker) {
			/* what processes mapped, for the records of those gone */
			struct fr_mmap_tracker_stats ts;
			struct json_object *to = json_object_new_object();
			fr_mmap_tracker_get_stats(d->tracker, &ts);
			const struct {
				const char *name;
				uint64_t v;
			} counts[] = {
				{ "events", ts.events },       { "lost", ts.lost },       { "mmaps", ts.mmaps },
				{ "execs", ts.execs },         { "forks", ts.forks },     { "exits", ts.exits },
				{ "processes", ts.processes }, { "mappings", ts.mappings }, { "refused", ts.refused },
				{ "evicted", ts.evicted },     { "served", ts.served },
			};
			for (size_t i = 0; i < ELEMENTSOF(counts); i++)
				json_object_object_add(to, counts[i].name, json_object_new_uint64(counts[i].v));
			json_object_object_add(smp, "mappings", to);
		}
		json_object_object_add(o, "sampler", smp);
	}
	{
		/* offcpu records with stacks, by how their user stack went */
		static const char *const names[FR_OFFCPU_USER__MAX] = {
			[FR_OFFCPU_USER_COPIED] = "user_copied",
			[FR_OFFCPU_USER_KTHREAD] = "kernel_thread",
			[FR_OFFCPU_USER_NO_TASK_WORK] = "no_task_work",
			[FR_OFFCPU_USER_BUSY] = "busy",
			[FR_OFFCPU_USER_UNREADABLE] = "unreadable",
		};
		uint64_t n[FR_OFFCPU_USER__MAX], total = 0;
		struct json_object *os = json_object_new_object();
		fr_recorder_offcpu_stats(d->rec, n);
		for (unsigned i = 0; i < FR_OFFCPU_USER__MAX; i++)
			total += n[i];
		json_object_object_add(os, "enabled", json_object_new_boolean(offcpu_stacks_on(&d->conf)));
		json_object_object_add(os, "records", json_object_new_uint64(total));
		for (unsigned i = 0; i < FR_OFFCPU_USER__MAX; i++)
			json_object_object_add(os, names[i], json_object_new_uint64(n[i]));
		json_object_object_add(o, "offcpu_stacks", os);
	}
	{
		/* offcpu records' wakers: joined, by what woke them, and lost */
		static const char *const names[FR_WAKER_KINDS] = {
			[FR_WAKER_NONE] = "none", [FR_WAKER_IS_TASK] = "task", [FR_WAKER_IS_KTHREAD] = "kernel_thread",
			[FR_WAKER_IS_HARDIRQ] = "hardirq", [FR_WAKER_IS_SOFTIRQ] = "softirq", [FR_WAKER_IS_NMI] = "nmi",
			[FR_WAKER_IS_UNKNOWN] = "unknown",
		};
		uint64_t n[FR_WAKER_KINDS];
		struct fr_wakers_stats wk;
		struct json_object *wo = json_object_new_object(), *by = json_object_new_object();
		fr_recorder_waker_stats(d->rec, n, &wk);
		json_object_object_add(wo, "enabled", json_object_new_boolean(d->conf.sched_enabled &&
										  d->conf.offcpu_enabled && d->conf.wakers));
		for (unsigned i = FR_WAKER_IS_TASK; i < FR_WAKER_KINDS; i++)
			json_object_object_add(by, names[i], json_object_new_uint64(n[i]));
		json_object_object_add(wo, "by_context", by);
		json_object_object_add(wo, "events", json_object_new_uint64(wk.events));
		json_object_object_add(wo, "joined", json_object_new_uint64(wk.joined));
		json_object_object_add(wo, "deferred", json_object_new_uint64(wk.deferred));
		json_object_object_add(wo, "missing", json_object_new_uint64(wk.missing));
		json_object_object_add(wo, "orphaned", json_object_new_uint64(wk.orphaned));
		json_object_object_add(wo, "refused", json_object_new_uint64(wk.refused));
		json_object_object_add(wo, "dropped", json_object_new_uint64(fr_sources_waker_drops(d->sources)));
		json_object_object_add(wo, "held", json_object_new_uint64(wk.held));
		json_object_object_add(o, "wakers", wo);
	}
	{
		/* Python frames (python.h) */
		static const char *const walks[FR_PY__STATUS_MAX] = {
			[FR_PY_WALKED] = "walked", [FR_PY_CUT] = "cut", [FR_PY_NO_THREAD] = "no_thread",
			[FR_PY_NO_FRAME] = "no_frame", [FR_PY_UNREADABLE] = "unreadable",
		};
		struct fr_python_stats ps;
		struct json_object *po = json_object_new_object(), *by = json_object_new_object();
		fr_recorder_python_stats(d->rec, &ps);
		json_object_object_add(po, "executables", json_object_new_uint64(ps.exes));
		json_object_object_add(po, "executables_unknown_version", json_object_new_uint64(ps.exes_unknown));
		for (unsigned i = FR_PY_WALKED; i < FR_PY__STATUS_MAX; i++)
			json_object_object_add(by, walks[i], json_object_new_uint64(ps.stacks[i]));
		json_object_object_add(po, "stacks", by);
		json_object_object_add(po, "frames", json_object_new_uint64(ps.frames));
		json_object_object_add(po, "frames_unnamed", json_object_new_uint64(ps.frames_unnamed));
		json_object_object_add(po, "lines_unknown", json_object_new_uint64(ps.lines_unknown));
		json_object_object_add(po, "frames_unplaced", json_object_new_uint64(ps.frames_unplaced));
		json_object_object_add(po, "descriptions", json_object_new_uint64(ps.descriptions));
		json_object_object_add(po, "descriptions_over_budget", json_object_new_uint64(ps.names_over));
		json_object_object_add(po, "descriptions_dropped", json_object_new_uint64(fr_sources_py_drops(d->sources)));
		json_object_object_add(po, "codes", json_object_new_uint64(ps.codes));
		json_object_object_add(po, "bytes", json_object_new_uint64(ps.bytes));
		json_object_object_add(po, "processes", json_object_new_uint64(ps.procs));
		json_object_object_add(po, "evicted", json_object_new_uint64(ps.evicted));
		json_object_object_add(o, "python", po);
	}
	{
		/* signal records, by what their stack is */
		static const char *const names[FR_SIGNAL_STACK__MAX] = {
			[FR_SIGNAL_STACK_COPIED] = "taken",
			[FR_SIGNAL_STACK_KERNEL] = "kernel_thread",
			[FR_SIGNAL_STACK_SKIPPED] = "over_budget",
		};
		uint64_t n[FR_SIGNAL_STACK__MAX];
		struct json_object *ss = json_object_new_object();
		fr_recorder_signal_stats(d->rec, n);
		for (unsigned i = 0; i < FR_SIGNAL_STACK__MAX; i++)
			json_object_object_add(ss, names[i], json_object_new_uint64(n[i]));
		json_object_object_add(o, "signal_stacks", ss);
	}
	fr_store_writer_get_stats(d->writer, &ws);
	json_object_object_add(store, "path", json_object_new_string(d->conf.store_path));
	json_object_object_add(store, "bytes_bound", json_object_new_uint64(fr_store_writer_size_bound(d->writer, NULL)));
	json_object_object_add(store, "bound_auto", json_object_new_boolean(d->conf.store_size == 0));
	json_object_object_add(store, "bytes_written", json_object_new_uint64(ws.bytes_written));
	json_object_object_add(store, "chunks_written", json_object_new_uint64(ws.chunks_written));
	json_object_object_add(store, "chunks_failed", json_object_new_uint64(ws.chunks_failed));
	json_object_object_add(store, "syncs", json_object_new_uint64(ws.syncs));
	json_object_object_add(store, "syncs_failed", json_object_new_uint64(ws.syncs_failed));
	/* a slow disk shows here before it costs records: chunks wait in
	 * memory (up to 16 MiB) rather than stop the drain */
	json_object_object_add(store, "inflight", json_object_new_uint64(ws.inflight));
	json_object_object_add(store, "closes_inflight", json_object_new_uint64(ws.closes_inflight));
	json_object_object_add(store, "held_chunks", json_object_new_uint64(ws.held_chunks));
	json_object_object_add(store, "held_bytes", json_object_new_uint64(ws.held_bytes));
	if (ws.last_error < 0)
		json_object_object_add(store, "last_error", json_object_new_string(strerror(-ws.last_error)));
	json_object_object_add(o, "store", store);
	json_object_object_add(o, "triggers", fr_triggers_status(d->triggers));
	if (d->textfile)
		json_object_object_add(o, "textfile", fr_textfile_status(d->textfile, d->conf.textfile));
	return o;
}

static struct json_object *reply_error(const char *msg)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

static struct json_object *verb_status(struct daemon *d, const struct fr_control_request *req,
				       const struct fr_control_peer *peer)
{
	struct json_object *o = status_json(d), *ctl = json_object_new_object();

	/* who may change state, and how often someone else tried */
	json_object_object_add(ctl, "group", json_object_new_string(d->conf.control_group));
	json_object_object_add(ctl, "denied", json_object_new_uint64(fr_control_denied(d->control)));
	json_object_object_add(ctl, "rate_limited", json_object_new_uint64(fr_control_rate_limited(d->control)));
	json_object_object_add(o, "control", ctl);
	if (d->annotate) {
		struct fr_annotate_stats as;
		struct json_object *an = json_object_new_object();
		fr_annotate_get_stats(d->annotate, &as);
		json_object_object_add(an, "received", json_object_new_uint64(as.received));
		json_object_object_add(an, "cut", json_object_new_uint64(as.cut));
		json_object_object_add(o, "annotations", an);
	}
	return o;
}

static struct json_object *verb_freeze(struct daemon *d, const struct fr_control_request *req,
				       const struct fr_control_peer *peer)
{
	struct json_object *o = fr_triggers_freeze(d->triggers, req->text, (uint32_t)peer->pid);

	return o ? o : reply_error("out of memory");
}

static struct json_object *verb_mark(struct daemon *d, const struct fr_control_request *req,
				     const struct fr_control_peer *peer)
{
	struct json_object *o;

	fr_recorder_mark(d->rec, (uint32_t)peer->pid, req->text, req->len);
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

/* What each verb does; who may use it is control-request.c's table. */
static struct json_object *(*const verbs[FR_VERB__MAX])(struct daemon *d, const struct fr_control_request *req,
							 const struct fr_control_peer *peer) = {
	[FR_VERB_STATUS] = verb_status,
	[FR_VERB_FREEZE] = verb_freeze,
	[FR_VERB_MARK] = verb_mark,
};

static struct json_object *on_control(const struct fr_control_request *req, const struct fr_control_peer *peer,
				      void *userdata)
{
	struct daemon *d = userdata;

	if (fr_control_verb_changes_state(req->verb) && !peer->privileged)
		return fr_control_deny(d->control, peer, fr_control_verb_name(req->verb));
	return verbs[req->verb](d, req, peer);
}

static void on_annotation(uint32_t pid, const char *text, size_t len, void *userdata)
{
	struct daemon *d = userdata;
	fr_recorder_mark(d->rec, pid, text, len);
}

/* Room for the records' clock drifting from CLOCK_REALTIME since the
 * chunks' offsets were read */
#define FLUSH_SLACK_NS (10 * NSEC_PER_MSEC)

/* Everything recorded so far into the store: queued, written (readable)
 * or synced, and waited for (see fr_triggers_flush_cb). */
static void flush_store(enum fr_flush how, uint64_t until_wall, void *userdata)
{
	struct daemon *d = userdata;
	struct fr_clock_offsets off;
	uint64_t until = 0;

	if (until_wall) {
		/* to the records' clock, as a chunk's header converts it, with
		 * room for the clocks' drift since the chunks' offsets were read */
		(void)fr_clock_offsets_read(&off, NULL);
		until = until_wall + FLUSH_SLACK_NS - (uint64_t)off.realtime;
	}
	/* An incident written ahead needs the records of its window only: a
	 * drain that began past its end and emptied the rings (the periodic
	 * one, 100 ms by default, ran in the 200 ms the trigger waits) took
	 * every record stamped up to then that the kernel had written, so
	 * its incident is not made to wait for the stacks of records after
	 * it to be unwound (~0.3 ms of its ~0.9 ms durable time here).
	 * Records stamped in the window and written later (a wait that
	 * began in it) are in it only if they were written before that
	 * drain.  Switch batches hold records back: drained always. */
	if (!(how == FR_FLUSH_QUEUED && until && !fr_sources_hold_back(d->sources) && d->drained_boot >= until)) {
		(void)fr_sources_flush(d->sources);
		(void)drain(d);
	}
	if (until)
		fr_recorder_flush_until(d->rec, until);
	else
		fr_recorder_flush(d->rec);
	if (how == FR_FLUSH_SYNCED) {
		(void)fr_store_writer_sync(d->writer);
		(void)fr_store_writer_drain(d->writer);
		return;
	}
	(void)fr_store_writer_submit(d->writer);
	if (how == FR_FLUSH_WRITTEN)
		(void)fr_store_writer_wait_written(d->writer);
}

static void on_chunk(const void *chunk, size_t len, void *userdata)
{
	struct daemon *d = userdata;
	fr_triggers_on_chunk(d->triggers, chunk, len);
}

static void record_user(const struct fr_record *rec, void *userdata)
{
	struct daemon *d = userdata;
	fr_recorder_add_user(d->rec, rec);
}

/* @what: FR_MARK_STARTED or FR_MARK_STOPPED */
static void lifecycle_mark(struct daemon *d, const char *what)
{
	char text[128];
	int n = snprintf(text, sizeof(text), "%s(pid %d)", what, (int)d->self);

	/* pid 0, like metrics: the store holds no record of the daemon's own
	 * pid (its pid is in the text) */
	fr_recorder_mark(d->rec, 0, text, (size_t)MIN(n, (int)sizeof(text) - 1));
}

/* What status says, for Prometheus (prometheus.textfile); @up false for
 * the last file, written at a clean stop. */
static void write_textfile(struct daemon *d, bool up)
{
	struct json_object *o;

	if (!d->textfile)
		return;
	o = verb_status(d, NULL, NULL);
	(void)fr_textfile_write(d->textfile, d->conf.textfile, o, up); /* logs */
	json_object_put(o);
}

static int on_textfile(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	write_textfile(d, true);
	return rearm(s, d->conf.textfile_interval_ns);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	log_info("Received %s, flushing and exiting.", strsignal((int)si->ssi_signo));
	(void)sd_notify(false, "STOPPING=1");
	return sd_event_exit(d->event, 0);
}

/* sd-event's default accuracy is 250 ms; timers here get 10 % of their
 * interval, except the sync timer, whose interval is a durability promise
 * (see on_sync) and gets 1 ms. */
static int add_timer(struct daemon *d, sd_event_source **s, uint64_t interval_ns,
		     sd_event_time_handler_t cb)
{
	uint64_t accuracy_us = cb == on_sync ? 1000 : MAX(interval_ns / 10000, 1000ULL);

	return sd_event_add_time_relative(d->event, s, CLOCK_MONOTONIC, interval_ns / 1000, accuracy_us, cb, d);
}

/* The host this boot records on, beside the segments: readers of the
 * store elsewhere and later name it, not their own. */
static void save_boot_host(struct daemon *d, const uint8_t boot_id[16])
{
	struct fr_boot_host h;
	int k = fr_boot_host_current(&h);

	if (k >= 0)
		k = fr_boot_host_save(fr_store_writer_dir_fd(d->writer), boot_id, &h);
	if (k < 0)
		log_warning_errno(k, "Failed to save this boot's host and kernel into %s, readers will not know "
				  "which machine recorded it: %m", d->conf.store_path);
}

/* Kernel symbols for sample frames, saved into the store once per boot;
 * without them (kptr_restrict) kernel frames show addresses only. */
static int tracker_maps(void *userdata, uint32_t pid, uint64_t *exe_ino)
{
	return fr_mmap_tracker_maps(userdata, pid, exe_ino);
}

/* A stack parser's helper started: its stacks are not taken, as ours are
 * not (each would be another stack for it to parse). */
static void parser_started(void *userdata, pid_t pid)
{
	struct daemon *d = userdata;

	fr_sources_set_helper(d->sources, pid);
}

static void start_symbolizer(struct daemon *d)
{
	struct fr_ksyms *ks = NULL, *snap = NULL;
	struct fr_symbolizer *s;
	struct fr_parser *p;
	char boot[SD_ID128_STRING_MAX];
	sd_id128_t id;
	int k;

	if (fr_recorder_symbolizer(d->rec))
		return;
	k = fr_ksyms_load_proc(&ks);
	if (k < 0)
		log_warning_errno(k, "Kernel symbols unavailable, kernel frames stay unnamed: %m");
	else if (sd_id128_get_boot(&id) >= 0) {
		_cleanup_close_ int dfd = open(d->conf.store_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		k = dfd < 0 ? -errno : fr_ksyms_save(ks, dfd, sd_id128_to_string(id, boot));
		if (k < 0)
			log_warning_errno(k, "Failed to save kernel symbols into %s, chunks describe kernel frames: %m",
					  d->conf.store_path);
		else if (k > 0) {
			log_info("Saved %zu kernel symbols for this boot into the store.", fr_ksyms_count(ks));
			snap = ks;
		} else if (fr_ksyms_load_snapshot(dfd, boot, &snap) < 0)
			log_warning("Failed to read this boot's kernel symbols in %s, chunks describe kernel frames.",
				    d->conf.store_path);
		else if (fr_ksyms_same_functions(ks, snap)) {
			fr_ksyms_free(snap);
			snap = ks;
		} else
			/* saved by an earlier run of this boot, before a module
			 * came or went: what differs is described */
			log_info("This boot's kernel symbols in the store differ from the kernel's now (a module came or went since they were saved): chunks describe the functions they name differently.");
	}
	fr_access_set_debug_dir(d->conf.debug_dir);
	k = fr_symbolizer_new(ks, &s);
	if (k < 0) {
		if (snap != ks)
			fr_ksyms_free(snap);
		fr_ksyms_free(ks);
		log_warning_errno(k, "Failed to set up symbol resolution, frames stay unnamed: %m");
		return;
	}
	fr_symbolizer_set_snapshot(s, snap);
	if (d->triggers)
		fr_triggers_lend_ksyms(d->triggers, snap);
	fr_recorder_set_symbolizer(d->rec, s);
	/* user frames are named and unwound from /proc/PID: the namespace's
	 * PID, another process than the records' (see keyframe()) */
	if (d->private_pidns) {
		fr_symbolizer_set_user_frames(s, false);
		return;
	}
	fr_symbolizer_set_user_frames(s, false); /* the parser's helper names them */
	k = fr_parser_new(&p);
	if (k == -ENOMEM)
		log_oom();
	else if (k >= 0) {
		fr_parser_set_limits(p, d->conf.parse_timeout_ns, d->conf.parse_cpu_percent,
				     d->conf.parse_memory);
		fr_parser_on_start(p, parser_started, d);
		fr_recorder_set_parser(d->rec, p);
	}
	/* what processes map, for the records of those that are gone */
	if (!d->tracker) {
		k = fr_mmap_tracker_new(fr_rings_ncpu(d->rings), &d->tracker);
		if (k < 0)
			log_warning_errno(k, "Failed to track mappings (perf side-band events): processes that exit before their records are read keep their leaf frame only: %m");
		else
			fr_access_set_gone_maps(tracker_maps, d->tracker);
	}
}

/* The metrics sampler and its timer; the per-disk latencies come from the
 * block source's histograms when it runs. */
static int start_metrics(struct daemon *d)
{
	int k = fr_metrics_new(d->conf.metrics_top, &d->metrics);

	if (k < 0)
		return log_error_errno(k, "Failed to set up metrics: %m");
	k = fr_pmu_counters_open(fr_rings_ncpu(d->rings), &d->pmu);
	if (k < 0)
		log_info_errno(k, "No hardware performance counters (%m): metrics without cycles and instructions.");
	if (fr_sources_block_hist_fd(d->sources) >= 0 &&
	    fr_disk_latency_new(fr_sources_block_hist_fd(d->sources), fr_rings_ncpu(d->rings), &d->disk_latency) < 0)
		return log_oom();
	/* first sample now: rates need a previous one */
	json_object_put(fr_metrics_sample(d->metrics, true, d->disk_latency ? fr_disk_latency_sample : NULL,
					  d->disk_latency));
	d->last_top_mono = fr_now_ns(CLOCK_MONOTONIC);
	k = add_timer(d, &d->metrics_timer, d->conf.metrics_interval_ns, on_metrics);
	if (k < 0)
		return log_error_errno(k, "Failed to set up the metrics timer: %m");
	return 0;
}

static void stop_metrics(struct daemon *d)
{
	d->metrics_timer = sd_event_source_disable_unref(d->metrics_timer);
	d->metrics = fr_metrics_free(d->metrics);
	d->pmu = fr_pmu_counters_free(d->pmu);
	d->disk_latency = fr_disk_latency_free(d->disk_latency);
}

/* Settings a reload cannot change in place: they size or name what was
 * created at start (store, rings, chunk builders, socket). */
static void warn_restart_only(const struct fr_conf *o, const struct fr_conf *c)
{
	const struct {
		const char *name;
		bool changed;
	} keys[] = {
		{ "store.path", strcmp(o->store_path, c->store_path) != 0 },
		{ "store.size", o->store_size != c->store_size },
		{ "store.segments", o->store_segments != c->store_segments },
		{ "recorder.ring_size", o->ring_size != c->ring_size },
		{ "recorder.chunk_size", o->chunk_size != c->chunk_size },
		{ "control.socket", strcmp(o->socket_path, c->socket_path) != 0 },
	};

	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (keys[i].changed)
			log_warning("%s changed: it takes effect at the next restart; the running value is kept.",
				    keys[i].name);
}

/* SIGHUP: parse first; swap only if valid.  Thresholds, rules, intervals
 * and the compression level apply at once; sources start and stop
 * without touching the ones that did not change; the metrics sampler
 * starts or stops.  What was recorded stays.  Settings that size the
 * store, rings or chunks are kept until the next restart (logged). */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	struct fr_conf c;
	unsigned changed;
	int k;

	(void)sd_notify(false, "RELOADING=1");
	if (load_config(d, &c) < 0) {
		log_error("Configuration reload failed; keeping the running configuration.");
		(void)sd_notify(false, "READY=1");
		return 0;
	}
	warn_restart_only(&d->conf, &c);
	/* what sizes or names things made at start keeps its running value
	 * (the strings are swapped: the same pointers stay in use) */
	SWAP(c.store_path, d->conf.store_path);
	SWAP(c.socket_path, d->conf.socket_path);
	c.store_size = d->conf.store_size;
	c.store_segments = d->conf.store_segments;
	c.ring_size = d->conf.ring_size;
	c.chunk_size = d->conf.chunk_size;
	if (c.zstd_level != d->conf.zstd_level && fr_recorder_set_zstd_level(d->rec, c.zstd_level) < 0)
		c.zstd_level = d->conf.zstd_level;
	/* metrics off, or a new top count: stopped now, started again below */
	if (d->metrics && (!c.metrics_enabled || c.metrics_top != d->conf.metrics_top))
		stop_metrics(d);
	/* the disk latencies read the block source's map: let go of it first */
	if (d->disk_latency && !c.block_enabled)
		d->disk_latency = fr_disk_latency_free(d->disk_latency);
	/* the new configuration becomes the running one: what lives in BPF
	 * globals or in the loop reads it from here on */
	SWAP(c, d->conf);
	if (d->control)
		fr_control_set_group(d->control, d->conf.control_group);
	if (d->annotate && (k = fr_annotate_apply_group(d->annotate)) < 0)
		log_warning_errno(k, "Failed to give the annotation socket %s to group '%s' (not a socket of ours "
				  "now, left alone): %m", d->annotate_path, d->conf.control_group);
	if (fr_recorder_parser(d->rec))
		fr_parser_set_limits(fr_recorder_parser(d->rec), d->conf.parse_timeout_ns, d->conf.parse_cpu_percent,
				     d->conf.parse_memory);
	changed = fr_sources_update(d->sources, &d->conf);
	if (changed & (1u << FR_SRC_SAMPLE | 1u << FR_SRC_SCHED) && wants_symbolizer(&d->conf))
		start_symbolizer(d);
	if (d->conf.metrics_enabled && !d->metrics)
		(void)start_metrics(d); /* logs */
	else if (d->metrics && !d->disk_latency && fr_sources_block_hist_fd(d->sources) >= 0 &&
		 fr_disk_latency_new(fr_sources_block_hist_fd(d->sources), fr_rings_ncpu(d->rings), &d->disk_latency) < 0)
		log_oom();
	if (fr_triggers_set_rules(d->triggers, &d->conf.rules) < 0)
		log_warning("Failed to apply the new trigger rules; keeping the old ones.");
	fr_conf_done(&c); /* the old one */
	log_info("Configuration reloaded from %s.", d->config_path);
	(void)sd_notify(false, "READY=1");
	return 0;
}

static int run(struct daemon *d)
{
	struct fr_store_params sp = {
		.size = d->conf.store_size,
		.nsegments = d->conf.store_segments,
		.max_chunk = fr_conf_max_chunk(&d->conf),
	};
	sigset_t mask;
	int k, ncpu;

	d->start_mono = fr_now_ns(CLOCK_MONOTONIC);
	k = sd_event_default(&d->event);
	if (k < 0)
		return log_error_errno(k, "Failed to create event loop: %m");

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* sd_event_add_child() (trigger actions) needs SIGCHLD blocked */
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((k = sd_event_add_signal(d->event, NULL, SIGTERM, on_exit_signal, d)) < 0 ||
	    (k = sd_event_add_signal(d->event, NULL, SIGINT, on_exit_signal, d)) < 0 ||
	    (k = sd_event_add_signal(d->event, NULL, SIGHUP, on_reload, d)) < 0)
		return log_error_errno(k, "Failed to set up signal handling: %m");

	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return log_error_errno(ncpu < 0 ? ncpu : -EINVAL, "Failed to count possible CPUs: %m");
	k = fr_recorder_new(&d->conf, (unsigned)ncpu, &d->rec);
	if (k < 0)
		return log_error_errno(k, "Failed to set up the recorder: %m");
	k = fr_rings_new(d->conf.ring_size, fr_recorder_on_event, d->rec, &d->rings);
	if (k < 0)
		return log_error_errno(k, "Failed to create per-CPU ring buffers (%" PRIu64 " bytes each): %m",
				       d->conf.ring_size);
	fr_recorder_set_rings(d->rec, d->rings);

	{
		/* before anything is written into it: a store someone else may
		 * write to is refused, not repaired (as PostgreSQL refuses its
		 * data directory): they could have left anything in it */
		char why[PATH_MAX + 128];
		k = fr_store_check_dirs(d->conf.store_path, geteuid(), why, sizeof(why));
		if (k == -EPERM)
			return log_error_errno(k, "Refusing the store: %s; the store, its directories and its "
					       "segments must be the daemon's (uid %u) and not writable by group or "
					       "others, or others could aim its writes.", why, (unsigned)geteuid());
		if (k < 0) /* not a directory, not readable: as the writer would say */
			return log_error_errno(k, "Failed to open store %s: %m", d->conf.store_path);
		k = fr_unix_socket_check_dir(d->socket_path, why, sizeof(why));
		if (k == -EPERM)
			return log_error_errno(k, "Refusing the socket directory: %s; others could put their own "
					       "socket or a symbolic link in the daemon's place.", why);
		if (k < 0)
			return log_error_errno(k, "Failed to check the socket directory: %s", why);
	}
	k = fr_store_writer_open(d->conf.store_path, &sp, fr_recorder_on_write_loss, d->rec, &d->writer);
	if (k == -EBUSY)
		return log_error_errno(k, "Store %s is in use by another flightrecd.", d->conf.store_path);
	if (k == -EPROTONOSUPPORT)
		return log_error_errno(k, "Store %s was written in a newer format than this flightrecd knows; refusing to overwrite it.",
				       d->conf.store_path);
	if (k < 0)
		return log_error_errno(k, "Failed to open store %s: %m", d->conf.store_path);
	fr_recorder_set_writer(d->rec, d->writer);
	if (d->conf.store_size == 0) {
		uint64_t fs, bound = fr_store_writer_size_bound(d->writer, &fs);
		char a[32], b[32];
		log_info("Store bound %s: store.size \"auto\" is 2G, at most %d%% of the %s file system the store "
			 "is on, at least what %u segments need.", fr_format_size(bound, a, sizeof(a)),
			 FR_STORE_AUTO_PERCENT, fr_format_size(fs, b, sizeof(b)), d->conf.store_segments);
	}
	{
		struct fr_store_writer_stats ws;
		fr_store_writer_get_stats(d->writer, &ws);
		if (ws.segments_trimmed || ws.segments_removed)
			log_warning("The store was made smaller (store.size or store.segments): the %u oldest segments "
				    "were emptied and %u removed to keep within the bound.",
				    ws.segments_trimmed, ws.segments_removed);
	}

	{
		sd_id128_t boot;
		struct fr_triggers_params tp = {
			.event = d->event, .store_dir = d->conf.store_path, .config_path = d->config_path,
			.flush = flush_store, .record = record_user, .userdata = d,
			.cgroup_fd = fr_recorder_cgroup_fd(d->rec),
		};
		if (sd_id128_get_boot(&boot) < 0)
			memset(&boot, 0, sizeof(boot));
		tp.boot_id = boot.bytes;
		save_boot_host(d, boot.bytes);
		k = fr_triggers_new(&tp, &d->conf.rules, &d->triggers);
		if (k < 0)
			return log_error_errno(k, "Failed to set up triggers in %s/incidents: %m", d->conf.store_path);
		fr_recorder_set_triggers(d->rec, d->triggers);
		fr_store_writer_set_chunk_cb(d->writer, on_chunk, d);
	}

	/* who the daemon is to BPF, before the sources that leave it out */
	k = fr_kernel_tgid(&d->self);
	if (k < 0) {
		log_warning_errno(k, "Failed to learn this process's pid in the host's PID namespace, taking getpid(): %m");
		d->self = getpid();
	}
	d->private_pidns = d->self != getpid();
	if (d->private_pidns)
		log_warning("flightrecd runs in a private PID namespace (pid %d here, %d on the host): /proc is not the "
			    "host's, so processes are not named from it and user stacks are neither unwound nor named. "
			    "Run it in the host's PID namespace: docker/podman --pid=host, Kubernetes hostPID: true.",
			    (int)getpid(), (int)d->self);
	k = fr_sources_start(&d->conf, d->rings, d->self, &d->sources);
	if (k < 0)
		return log_error_errno(k, "Failed to start sources: %m");
	/* after the probes are loaded: kallsyms then names them too */
	if (wants_symbolizer(&d->conf))
		start_symbolizer(d);
	if (fr_sources_attached(d->sources) == 0)
		return log_error_errno(-ENOENT, "No source could be started; nothing to record.");

	if ((k = sd_event_add_io(d->event, &d->ring_src, fr_rings_epoll_fd(d->rings), EPOLLIN, on_ring, d)) < 0 ||
	    (k = sd_event_add_io(d->event, &d->writer_src, fr_store_writer_fd(d->writer), EPOLLIN, on_writer, d)) < 0 ||
	    (k = add_timer(d, &d->drain_timer, d->conf.drain_interval_ns, on_drain)) < 0 ||
	    (k = add_timer(d, &d->sync_timer, d->conf.sync_interval_ns, on_sync)) < 0 ||
	    (k = add_timer(d, &d->keyframe_timer, d->conf.keyframe_interval_ns, on_keyframe)) < 0)
		return log_error_errno(k, "Failed to set up event sources: %m");
	if (d->conf.metrics_enabled && (k = start_metrics(d)) < 0)
		return k;
	if (d->status_interval_ns &&
	    (k = add_timer(d, &d->status_timer, d->status_interval_ns, on_status)) < 0)
		return log_error_errno(k, "Failed to set up status timer: %m");
	k = sd_event_set_watchdog(d->event, true);
	if (k < 0)
		log_warning_errno(k, "Failed to enable watchdog: %m");

	k = fr_control_new(d->event, d->socket_path, on_control, d, &d->control);
	if (k < 0)
		return log_error_errno(k, "Failed to listen on control socket %s: %m", d->socket_path);
	fr_control_set_group(d->control, d->conf.control_group);
	k = fr_annotate_new(d->event, d->annotate_path, d->control, on_annotation, d, &d->annotate);
	if (k < 0)
		return log_error_errno(k, "Failed to open annotation socket %s: %m", d->annotate_path);

	/* the first keyframe names everything that ran before us */
	keyframe(d);
	/* the store says when recording began and ended, so the time the daemon
	 * was down reads as such in a dump, not as a quiet machine */
	lifecycle_mark(d, FR_MARK_STARTED);

	log_info("Recording to %s (bound %" PRIu64 " bytes, %u CPUs, %u sources); control socket %s.",
		 d->conf.store_path, fr_store_writer_size_bound(d->writer, NULL), fr_rings_ncpu(d->rings),
		 fr_sources_attached(d->sources), d->socket_path);
	/* the textfile from the start: a scrape soon after boot finds the
	 * recorder up; a reload may turn it on, so the timer always runs */
	if ((k = fr_textfile_new(d->event, &d->textfile)) < 0)
		return log_error_errno(k, "Failed to set up the textfile: %m");
	if ((k = add_timer(d, &d->textfile_timer, d->conf.textfile_interval_ns, on_textfile)) < 0)
		return log_error_errno(k, "Failed to set up the textfile timer: %m");
	write_textfile(d, true);

	(void)sd_notify(false, "READY=1\nSTATUS=Recording");
	d->running = true;

	k = sd_event_loop(d->event);
	if (k < 0)
		log_error_errno(k, "Event loop failed: %m");
	/* while the sources still answer: flightrec_up 0 says "stopped", not
	 * "gone silent" (a crash leaves the file to age instead) */
	write_textfile(d, false);

	/* detach first, so nothing is emitted after the last drain; then
	 * drain what the kernel still holds (all of it: no budget now) and
	 * make it durable */
	d->sources = fr_sources_free(d->sources);
	(void)fr_rings_consume(d->rings);
	fr_recorder_drained(d->rec, true);
	lifecycle_mark(d, FR_MARK_STOPPED);
	fr_recorder_finish(d->rec);
	/* incidents still open are written with what there is */
	fr_triggers_flush_pending(d->triggers);
	return k;
}

/* The last word on losses, once nothing can change them: per CPU, what
 * BPF emitted = what the daemon received + what BPF dropped, and what of
 * the received the daemon lost itself.  Tests and operators read it. */
static void log_accounting(struct daemon *d)
{
	if (!d->rec || !d->rings)
		return;
	for (unsigned i = 0; i < fr_rings_ncpu(d->rings); i++) {
		struct fr_recorder_cpu_stats st;

		fr_recorder_cpu_stats(d->rec, i, &st);
		log_info("CPU %u: %" PRIu64 " records emitted, %" PRIu64 " delivered, %" PRIu64
			 " dropped in the kernel, %" PRIu64 " lost in the daemon.",
			 i, st.emitted, st.delivered, st.dropped, st.lost_write + st.lost_decode);
	}
}

static void daemon_done(struct daemon *d)
{
	fr_control_free(d->control);
	fr_annotate_free(d->annotate);
	free(d->annotate_path);
	sd_event_source_disable_unref(d->ring_src);
	sd_event_source_disable_unref(d->writer_src);
	sd_event_source_disable_unref(d->drain_timer);
	sd_event_source_disable_unref(d->sync_timer);
	sd_event_source_disable_unref(d->status_timer);
	sd_event_source_disable_unref(d->keyframe_timer);
	sd_event_source_disable_unref(d->metrics_timer);
	sd_event_source_disable_unref(d->textfile_timer);
	fr_metrics_free(d->metrics);
	fr_pmu_counters_free(d->pmu);
	fr_disk_latency_free(d->disk_latency);
	fr_access_set_gone_maps(NULL, NULL);
	fr_mmap_tracker_free(d->tracker);
	/* detach probes before the rings go away */
	fr_sources_free(d->sources);
	fr_store_writer_close(d->writer); /* syncs */
	/* its last write (flightrec_up 0) ends here, after the store is
	 * safe: a textfile on a file system that stalls delays only the exit */
	fr_textfile_free(d->textfile);
	if (d->running)
		log_accounting(d);
	if (d->triggers)
		fr_triggers_lend_ksyms(d->triggers, NULL); /* the recorder's symbolizer has it */
	fr_recorder_free(d->rec);
	fr_triggers_free(d->triggers); /* after the recorder that calls it */
	fr_rings_free(d->rings);
	sd_event_unref(d->event);
	fr_conf_done(&d->conf);
	free(d->socket_path);
	free(d->store_override);
}

int main(int argc, char **argv)
{
	enum { OPT_SOCKET = 256, OPT_CHECK, OPT_STATUS, OPT_VERSION, OPT_DRAIN_CPU };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "store", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "status-interval", required_argument, NULL, OPT_STATUS },
		{ "max-drain-cpu", required_argument, NULL, OPT_DRAIN_CPU },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{},
	};
	struct daemon d = { .config_path = FR_CONF_DEFAULT_PATH };
	bool check = false;
	int c, k;

	opterr = 0; /* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, "c:s:dh", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			d.config_path = optarg;
			d.config_explicit = true;
			break;
		case 's':
			free(d.store_override);
			d.store_override = strdup(optarg);
			break;
		case OPT_SOCKET:
			free(d.socket_path);
			d.socket_path = strdup(optarg);
			break;
		case OPT_CHECK:
			check = true;
			break;
		case OPT_STATUS:
			if (fr_parse_duration(optarg, &d.status_interval_ns) < 0 || !d.status_interval_ns) {
				fprintf(stderr, "flightrecd: --status-interval: invalid duration \"%s\" (e.g. 5s)\n", optarg);
				return 2;
			}
			break;
		case OPT_DRAIN_CPU: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 100) {
				fprintf(stderr, "flightrecd: --max-drain-cpu: \"%s\" is not a percentage from 1 to 100\n", optarg);
				return 2;
			}
			d.drain_cpu_override = (unsigned)v;
			break;
		}
		case 'd':
			fr_log_debug = 1;
			break;
		case 'h':
			help();
			return 0;
		case OPT_VERSION:
			printf("flightrecd " FR_VERSION "\n");
			return 0;
		default:
			fprintf(stderr, "flightrecd: %s option '%s'. Try 'flightrecd --help'.\n",
				/* getopt sets optopt to the option's value when its
				 * argument is missing, 0 for an unknown long option */
				optopt >= OPT_SOCKET || (optopt && strchr("cs", optopt)) ?
					"missing argument for" : "unrecognized",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "flightrecd: unexpected argument '%s'. Try 'flightrecd --help'.\n", argv[optind]);
		return 2;
	}
	/* the daemon writes what the journal reads: line by line */
	setvbuf(stderr, NULL, _IOLBF, 0);

	if (load_config(&d, &d.conf) < 0) {
		free(d.socket_path);
		free(d.store_override);
		return 1;
	}
	if (check) {
		printf("configuration OK\n");
		daemon_done(&d);
		return 0;
	}
	if (!d.socket_path) {
		if (d.store_override) {
			if (asprintf(&d.socket_path, "%s/control.sock", d.store_override) < 0)
				return 1;
		} else
			d.socket_path = strdup(d.conf.socket_path);
	}
	/* the annotation socket lives beside the control socket */
	{
		const char *slash = strrchr(d.socket_path, '/');
		int dir = slash ? (int)(slash - d.socket_path) : 0;
		if (asprintf(&d.annotate_path, "%.*s%sannotate.sock", dir, d.socket_path, slash ? "/" : "") < 0)
			return 1;
	}
	k = run(&d);
	daemon_done(&d);
	return k < 0 ? 1 : 0;
}
