/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Config validation: each bad file gives one "file:line: message". */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "parse.h"
#include "syscall-names.h"
#include "test.h"

static int load(const char *text, char *err, size_t errlen, struct fr_conf *c)
{
	char path[] = "/tmp/fr-test-conf-XXXXXX";
	int fd = mkstemp(path), k;
	FILE *f = fdopen(fd, "w");

	fputs(text, f);
	fclose(f);
	fr_conf_init_defaults(c);
	k = fr_conf_load(c, path, true, err, errlen);
	/* make messages comparable: replace the temp name */
	if (k < 0 && strncmp(err, path, strlen(path)) == 0) {
		char rest[480];
		snprintf(rest, sizeof(rest), "%s", err + strlen(path));
		snprintf(err, errlen, "F%s", rest);
	}
	unlink(path);
	return k;
}

static void bad(const char *text, const char *expect)
{
	struct fr_conf c;
	char err[512] = "";

	CHECK_EQ(load(text, err, sizeof(err), &c), -EINVAL);
	CHECK_STR(err, expect);
	fr_conf_done(&c);
}

static bool same_rule(const struct fr_rule *a, const struct fr_rule *b)
{
	return !strcmp(a->name, b->name) && a->condition == b->condition && a->threshold_ns == b->threshold_ns &&
	       a->signals == b->signals && a->before_ns == b->before_ns && a->after_ns == b->after_ns &&
	       a->cooldown_ns == b->cooldown_ns && a->max_per_hour == b->max_per_hour &&
	       a->max_extend_ns == b->max_extend_ns && !a->comm == !b->comm && !a->cgroup == !b->cgroup &&
	       a->pid == b->pid && !a->exec == !b->exec;
}

/* The default rules: active without a triggers group, the same as the
 * shipped file's, none with "rules = ( )", and those of a source the file
 * switched off left out (they would never fire). */
static void default_rules(const char *shipped)
{
	struct fr_conf c, d;
	char err[512] = "";

	fr_conf_init_defaults(&d);
	CHECK_EQ(d.rules.n, 3u);
	CHECK_STR(d.rules.v[0].name, "oom");
	CHECK_STR(d.rules.v[1].name, "crash");
	CHECK_STR(d.rules.v[2].name, "manual");
	CHECK(d.rules.v[1].signals & (1ULL << SIGSEGV));
	CHECK(d.rules.v[0].cooldown_ns > 0 && d.rules.v[1].cooldown_ns > 0);
	CHECK_EQ(d.rules.v[1].max_extend_ns, FR_RULE_EXTEND_AFTER);

	if (shipped) {
		fr_conf_init_defaults(&c);
		CHECK_EQ(fr_conf_load(&c, shipped, true, err, sizeof(err)), 0);
		CHECK_EQ(c.rules.n, d.rules.n);
		for (size_t i = 0; i < c.rules.n && i < d.rules.n; i++)
			CHECK(same_rule(&c.rules.v[i], &d.rules.v[i]));
		CHECK_EQ(c.rules.incidents_size, d.rules.incidents_size);
		CHECK_EQ(c.rules.incidents_max, d.rules.incidents_max);
		fr_conf_done(&c);
	}

	CHECK_EQ(load("store = { size = \"64M\"; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 3u);
	fr_conf_done(&c);
	CHECK_EQ(load("triggers = { rules = ( ); };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 0u);
	fr_conf_done(&c);
	CHECK_EQ(load("sources = { oom = { enabled = false; }; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 2u);
	CHECK_STR(c.rules.v[0].name, "crash");
	fr_conf_done(&c);
	/* written out, a rule on a source switched off is an error */
	bad("sources = { oom = { enabled = false; }; };\n"
	    "triggers = { rules = ( { name = \"oom\"; condition = \"oom\"; } ); };\n",
	    "F:2: rule 'oom' (oom) needs sources.oom.enabled = true: it would never fire");
	/* max_extend: a duration up to an hour */
	CHECK_EQ(load("triggers = { rules = ( { name = \"a\"; condition = \"oom\"; max_extend = \"0s\"; } ); };\n",
		      err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.v[0].max_extend_ns, 0u);
	fr_conf_done(&c);
	bad("triggers = { rules = ( { name = \"a\"; condition = \"oom\";\n max_extend = \"2h\"; } ); };\n",
	    "F:2: 'max_extend' = \"2h\" is out of range [0ns, 3600.000s]");
	fr_conf_done(&d);
}

int main(int argc, char **argv)
{
	struct fr_conf c;
	char err[512];

	default_rules(argc > 1 ? argv[1] : NULL);

	/* defaults */
	fr_conf_init_defaults(&c);
	CHECK_EQ(c.syscall_threshold_ns, 100 * NSEC_PER_MSEC);
	CHECK(fr_conf_syscall_excluded(&c, (unsigned)fr_syscall_number("epoll_wait")));
	CHECK(!fr_conf_syscall_excluded(&c, (unsigned)fr_syscall_number("read")));
	CHECK_EQ(c.drain_cpu_percent, FR_CONF_DRAIN_CPU_DEFAULT);
	CHECK(!c.syscall_enabled); /* every syscall hooked: opt in */
	CHECK(c.sched_enabled && c.offcpu_enabled);
	CHECK_EQ(c.store_size, 0); /* "auto": the store's file system decides */
	fr_conf_done(&c);
	CHECK_EQ(load("store = { size = \"auto\"; segments = 2; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.store_size, 0);
	fr_conf_done(&c);

	/* a good file */
	CHECK_EQ(load("store = { size = \"64M\"; segments = 8; };\n"
		      "sources = { syscall = { threshold = \"5ms\"; exclude = [ \"read\" ]; }; };\n",
		      err, sizeof(err), &c), 0);
	CHECK_EQ(c.store_size, 64ULL << 20);
	CHECK_EQ(c.store_segments, 8);
	CHECK_EQ(c.syscall_threshold_ns, 5 * NSEC_PER_MSEC);
	CHECK(fr_conf_syscall_excluded(&c, (unsigned)fr_syscall_number("read")));
	CHECK(!fr_conf_syscall_excluded(&c, (unsigned)fr_syscall_number("epoll_wait")));
	fr_conf_done(&c);

	/* the drain budget, both ends of its range */
	CHECK_EQ(load("recorder = { drain_cpu = 5; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.drain_cpu_percent, 5);
	fr_conf_done(&c);
	CHECK_EQ(load("recorder = { drain_cpu = 100; drain_interval = \"50ms\"; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.drain_cpu_percent, 100);
	fr_conf_done(&c);
	CHECK_EQ(load("recorder = { drain_cpu = 1; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.drain_cpu_percent, 1);
	fr_conf_done(&c);

	bad("store = {\n  sise = \"1G\";\n};\n", "F:2: unknown setting 'sise' in 'store'");
	bad("stor = { size = \"1G\"; };\n", "F:1: unknown section 'stor'");
	bad("store = {\n size = 5;\n};\n", "F:2: 'size' must be a string such as \"256M\" or \"auto\"");
	bad("store = { size = \"12Q\"; };\n", "F:1: 'size': invalid size \"12Q\" (a size such as \"1G\", or \"auto\")");
	bad("store = { size = \"Auto\"; };\n", "F:1: 'size': invalid size \"Auto\" (a size such as \"1G\", or \"auto\")");
	bad("\n\nsources = { syscall = { threshold = \"fast\"; }; };\n",
	    "F:3: 'threshold': invalid duration \"fast\"");
	bad("sources = { syscall = { exclude = [ \"read\",\n \"nosuchcall\" ]; }; };\n",
	    "F:2: 'exclude': unknown system call \"nosuchcall\"");
	bad("recorder = { zstd_level = 40; };\n", "F:1: 'zstd_level' = 40 is out of range [1, 19]");
	/* libconfig reads these as 50 (32 bits kept): the value written counts */
	bad("recorder = { drain_cpu = 4294967346; };\n", "F:1: 'drain_cpu' = 4294967346 is out of range [1, 100]");
	bad("recorder = {\n  zstd_level = 3; drain_cpu:0x100000032; };\n",
	    "F:2: 'drain_cpu' = 4294967346 is out of range [1, 100]");
	bad("recorder = { drain_cpu = 99999999999999999999; };\n",
	    "F:1: 'drain_cpu' = 9223372036854775807 is out of range [1, 100]");
	/* as written (a comment naming it with another value) */
	CHECK_EQ(load("recorder = { drain_cpu = 50; }; # not drain_cpu = 4294967346\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.drain_cpu_percent, 50);
	fr_conf_done(&c);
	bad("sources = { proc = { enabled = 1; }; };\n", "F:1: 'enabled' must be true or false");
	bad("store = { size = = \"1M\"; };\n", "F:1: syntax error");
	bad("recorder = { ring_size = \"3M\"; };\n", "F:1: 'ring_size' must be a power of two (such as \"1M\")");
	bad("store = { sync_interval = \"1ms\"; };\n",
	    "F:1: 'sync_interval' = \"1ms\" is out of range [10.000ms, 60.000s]");
	/* hostile values: huge, zero, negative, the wrong kind (libconfig
	 * itself truncates an integer literal past 32 bits without 'L') */
	bad("store = { size = \"99999T\"; };\n",
	    "F:1: 'size' = \"99999T\" is out of range [1.0M, 4.0T]");
	bad("store = { size = \"0\"; };\n",
	    "F:1: 'size' = \"0\" is out of range [1.0M, 4.0T]");
	bad("store = { size = \"-1G\"; };\n",
	    "F:1: 'size': invalid size \"-1G\" (a size such as \"1G\", or \"auto\")");
	bad("store = { segments = 0; };\n",
	    "F:1: 'segments' = 0 is out of range [2, 1024]");
	bad("store = { segments = 99999999999L; };\n",
	    "F:1: 'segments' = 99999999999 is out of range [2, 1024]");
	bad("store = { keyframe_interval = \"-5s\"; };\n",
	    "F:1: 'keyframe_interval': invalid duration \"-5s\"");
	bad("recorder = { chunk_age = \"0s\"; };\n",
	    "F:1: 'chunk_age' = \"0s\" is out of range [10.000ms, 60.000s]");
	bad("recorder = { drain_interval = \"100d\"; };\n",
	    "F:1: 'drain_interval' = \"100d\" is out of range [1.000ms, 10.000s]");
	bad("recorder = { zstd_level = \"3\"; };\n",
	    "F:1: 'zstd_level' must be an integer");
	bad("recorder = {\n  drain_cpu = 0;\n};\n",
	    "F:2: 'drain_cpu' = 0 is out of range [1, 100]");
	bad("recorder = { drain_cpu = 101; };\n",
	    "F:1: 'drain_cpu' = 101 is out of range [1, 100]");
	bad("recorder = { drain_cpu = -20; };\n",
	    "F:1: 'drain_cpu' = -20 is out of range [1, 100]");
	bad("recorder = { drain_cpu = \"20%\"; };\n",
	    "F:1: 'drain_cpu' must be an integer");
	bad("recorder = { drain_cpu = 20.5; };\n",
	    "F:1: 'drain_cpu' must be an integer");
	bad("sources = { sample = { hz = 100000; }; };\n",
	    "F:1: 'hz' = 100000 is out of range [1, 1000]");
	bad("metrics = { top = -1; };\n",
	    "F:1: 'top' = -1 is out of range [0, 100]");
	bad("sources = { signal = { signals = [ \"SIGNOPE\" ]; }; };\n",
	    "F:1: 'signals': unknown signal \"SIGNOPE\" (names such as \"SIGSEGV\")");
	bad("store = { size = \"1M\"; segments = 1024; };\n",
	    "F:1: store.size / store.segments (1024 bytes) must be at least 4 x recorder.chunk_size + 4K");
	bad("triggers = { rules = 5; };\n",
	    "F:1: 'rules' must be a list: ( { ... }, { ... } )");
	bad("triggers = { incidents = { max = 0; }; };\n",
	    "F:1: 'max' = 0 is out of range [1, 100000]");
	bad("control = { socket = 7; };\n",
	    "F:1: 'socket' must be a string");

	/* trigger rules */
	CHECK_EQ(load("sources = { syscall = { enabled = true; }; };\n"
		      "triggers = { rules = (\n"
		      "  { name = \"slow\"; condition = \"syscall_latency\"; threshold = \"2s\"; comm = \"post*\";\n"
		      "    syscalls = [ \"fsync\" ]; before = \"30s\"; after = \"5s\"; cooldown = \"1m\"; },\n"
		      "  { name = \"crash\"; condition = \"signal\"; signals = [ \"SIGSEGV\" ];\n"
		      "    exec = [ \"/usr/local/bin/ticket\", \"--attach\" ]; },\n"
		      "  { name = \"oom\"; condition = \"oom\"; }\n"
		      "); incidents = { size = \"2G\"; max = 50; }; };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 3);
	CHECK_STR(c.rules.v[0].name, "slow");
	CHECK_EQ(c.rules.v[0].threshold_ns, 2 * NSEC_PER_SEC);
	CHECK_EQ(c.rules.v[0].before_ns, 30 * NSEC_PER_SEC);
	CHECK(!c.rules.v[0].any_syscall);
	CHECK_EQ(c.rules.v[1].condition, FR_COND_SIGNAL);
	CHECK_STR(c.rules.v[1].exec[1], "--attach");
	CHECK(c.rules.v[1].exec[2] == NULL);
	CHECK_EQ(c.rules.v[2].after_ns, 10 * NSEC_PER_SEC); /* default */
	CHECK_EQ(c.rules.incidents_size, 2ULL << 30);
	CHECK_EQ(c.rules.incidents_max, 50);
	fr_conf_done(&c);
	/* a rule on a source that is off would never fire */
	bad("triggers = { rules = (\n { name = \"oom\"; condition = \"oom\"; },\n"
	    " { name = \"fsync\"; condition = \"syscall_latency\"; threshold = \"1s\"; }\n); };\n",
	    "F:3: rule 'fsync' (syscall_latency) needs sources.syscall.enabled = true: it would never fire");
	bad("sources = { sched = { offcpu = false; }; };\ntriggers = { rules = (\n"
	    " { name = \"x\"; condition = \"offcpu_latency\"; threshold = \"1s\"; }\n); };\n",
	    "F:3: rule 'x' (offcpu_latency) needs sources.sched.enabled = true and sources.sched.offcpu = true: it would never fire");
	bad("sources = { oom = { enabled = false; }; };\ntriggers = { rules = (\n"
	    " { name = \"x\"; condition = \"oom\"; }\n); };\n",
	    "F:3: rule 'x' (oom) needs sources.oom.enabled = true: it would never fire");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"disk_full\"; }\n); };\n",
	    "F:2: unknown condition \"disk_full\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"syscall_latency\"; }\n); };\n",
	    "F:2: rule 'x': a latency condition needs a 'threshold'");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\";\n colour = 1; }\n); };\n",
	    "F:3: unknown setting 'colour' in a rule");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"syscall_latency\"; threshold = \"soon\"; }\n); };\n",
	    "F:2: 'threshold': invalid duration \"soon\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; },\n { name = \"x\"; condition = \"manual\"; }\n); };\n",
	    "F:3: a rule named 'x' exists already (line 2)");
	bad("triggers = { rules = (\n { name = \"a/b c\"; condition = \"oom\"; }\n); };\n",
	    "F:2: rule name \"a/b c\": use at most 64 letters, digits, '_', '-' and '.' (not first)");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; exec = [ \"ticket\" ]; }\n); };\n",
	    "F:2: 'exec': the program must be an absolute path (no shell, no PATH search)");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"syscall_latency\"; threshold = \"1s\";\n syscalls = [ \"nosuch\" ]; }\n); };\n",
	    "F:3: 'syscalls': unknown system call \"nosuch\"");
	/* offcpu records say which call a thread was blocked in: offcpu
	 * rules filter on it too; other conditions have no call */
	CHECK_EQ(load("triggers = { rules = (\n"
		      "  { name = \"blocked-fsync\"; condition = \"offcpu_latency\"; threshold = \"2s\";\n"
		      "    syscalls = [ \"fsync\", \"read\" ]; }\n"
		      "); };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 1);
	CHECK(!c.rules.v[0].any_syscall);
	CHECK(c.rules.v[0].syscalls[fr_syscall_number("fsync") / 64] & (1ULL << (fr_syscall_number("fsync") % 64)));
	CHECK(c.rules.v[0].syscalls[fr_syscall_number("read") / 64] & (1ULL << (fr_syscall_number("read") % 64)));
	CHECK(!(c.rules.v[0].syscalls[fr_syscall_number("write") / 64] & (1ULL << (fr_syscall_number("write") % 64))));
	fr_conf_done(&c);
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"runq_latency\"; threshold = \"1s\";\n syscalls = [ \"read\" ]; }\n); };\n",
	    "F:3: 'syscalls' applies to syscall_latency and offcpu_latency only");

	/* pressure (PSI): its own settings, parsed by its entry of the
	 * condition table (lib/conditions.c) */
	CHECK_EQ(load("triggers = { rules = (\n"
		      "  { name = \"mem\"; condition = \"pressure\"; resource = \"memory\"; kind = \"full\";\n"
		      "    threshold = \"12.5%\"; over = \"30s\"; cgroup = \"/system.slice/db.service\"; },\n"
		      "  { name = \"io\"; condition = \"pressure\"; resource = \"io\"; threshold = \"20%\"; }\n"
		      "); };\n", err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 2);
	CHECK_EQ(c.rules.v[0].condition, FR_COND_PRESSURE);
	CHECK_EQ(c.rules.v[0].pressure.resource, FR_PRESSURE_MEMORY);
	CHECK(c.rules.v[0].pressure.full);
	CHECK_EQ(c.rules.v[0].pressure.ppm, 125000);
	CHECK_EQ(c.rules.v[0].pressure.over_ns, 30 * NSEC_PER_SEC);
	CHECK_STR(c.rules.v[0].cgroup, "/system.slice/db.service");
	CHECK_EQ(c.rules.v[1].pressure.resource, FR_PRESSURE_IO);
	CHECK(!c.rules.v[1].pressure.full);
	CHECK_EQ(c.rules.v[1].pressure.over_ns, 10 * NSEC_PER_SEC); /* the default window */
	CHECK(c.rules.v[1].cgroup == NULL);
	fr_conf_done(&c);
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\"; }\n); };\n",
	    "F:2: rule 'x': a pressure condition needs a 'threshold' such as \"20%\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\";\n threshold = \"2s\"; }\n); };\n",
	    "F:3: a pressure 'threshold' is a share of 'over' such as \"20%\", above 0% and at most 100%");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\"; threshold = \"101%\"; }\n); };\n",
	    "F:2: a pressure 'threshold' is a share of 'over' such as \"20%\", above 0% and at most 100%");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\"; threshold = \"5%\";\n resource = \"disk\"; }\n); };\n",
	    "F:3: 'resource' must be \"memory\", \"io\" or \"cpu\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\"; threshold = \"5%\"; over = \"100ms\"; }\n); };\n",
	    "F:2: 'over' = \"100ms\" is out of range [500.000ms, 3600.000s]");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\"; threshold = \"5%\";\n comm = \"db\"; }\n); };\n",
	    "F:3: 'comm' filters records: condition \"pressure\" fires on none");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"pressure\"; threshold = \"5%\"; cgroup = \"../etc\"; }\n); };\n",
	    "F:2: a pressure 'cgroup' is a cgroup's path below the cgroup2 mount, such as \"/system.slice/postgresql.service\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\";\n over = \"10s\"; }\n); };\n",
	    "F:3: 'over' applies to pressure only");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; threshold = \"1s\"; }\n); };\n",
	    "F:2: 'threshold' applies to syscall_latency, block_latency, runq_latency, offcpu_latency and pressure only");

	/* hostile rule values: each refused with its line, none taken as is */
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\";\n exec = [ \"/bin/true\" ]; exec_timeout = \"0s\"; }\n); };\n",
	    "F:3: 'exec_timeout' = \"0s\" is out of range [1.000s, 3600.000s]");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; exec_timeout = \"30d\"; }\n); };\n",
	    "F:2: 'exec_timeout' = \"30d\" is out of range [1.000s, 3600.000s]");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; exec_timeout = \"-1s\"; }\n); };\n",
	    "F:2: 'exec_timeout': invalid duration \"-1s\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"syscall_latency\";\n threshold = \"0s\"; }\n); };\n",
	    "F:3: 'threshold' = \"0s\" is out of range [1.000us, 3600.000s]");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"block_latency\"; threshold = \"-5ms\"; }\n); };\n",
	    "F:2: 'threshold': invalid duration \"-5ms\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\";\n before = \"99999h\"; }\n); };\n",
	    "F:3: 'before' = \"99999h\" is out of range [0ns, 3600.000s]");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; after = \"-10s\"; }\n); };\n",
	    "F:2: 'after': invalid duration \"-10s\"");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; cooldown = \"400d\"; }\n); };\n",
	    "F:2: 'cooldown' = \"400d\" is out of range [0ns, 86400.000s]");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; max_per_hour = 0; }\n); };\n",
	    "F:2: 'max_per_hour' must be an integer from 1 to 3600");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; pid = -1; }\n); };\n",
	    "F:2: 'pid' must be a positive integer");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; pid = 4294967297; }\n); };\n",
	    "F:2: 'pid' must be a positive integer");
	bad("triggers = { rules = (\n { name = \"x\"; condition = \"oom\"; max_per_hour = 4294967306; }\n); };\n",
	    "F:2: 'max_per_hour' must be an integer from 1 to 3600");
	bad("triggers = { incidents = { size = \"999999T\"; }; };\n",
	    "F:1: 'size' = \"999999T\" is out of range [1.0M, 4.0T]");
	/* the built-in manual rule's name is taken; one manual rule at most */
	bad("triggers = { rules = (\n { name = \"manual\"; condition = \"oom\"; }\n); };\n",
	    "F:2: rule name \"manual\" is reserved for the rule of frctl freeze: use it with condition = \"manual\" only");
	bad("triggers = { rules = (\n { name = \"m1\"; condition = \"manual\"; },\n { name = \"m2\"; condition = \"manual\"; }\n); };\n",
	    "F:3: rule 'm2': only one rule may have condition \"manual\" ('m1', line 2)");
	CHECK_EQ(load("triggers = { rules = ( { name = \"manual\"; condition = \"manual\"; before = \"0s\"; } ); };\n",
		      err, sizeof(err), &c), 0);
	CHECK_EQ(c.rules.n, 1);
	CHECK_EQ(c.rules.v[0].before_ns, 0);
	fr_conf_done(&c);

	/* thousands of rules: refused at once with the bound; the bound
	 * itself loads, and quickly (every rule checked against the others) */
	{
		size_t cap = 5000 * 80 + 64, len = 0;
		char *text = malloc(cap);
		struct timespec t0, t1;

		CHECK(text != NULL);
		len += (size_t)snprintf(text + len, cap - len, "triggers = { rules = (\n");
		for (int i = 0; i < 5000; i++)
			len += (size_t)snprintf(text + len, cap - len, "%s{ name = \"r%d\"; condition = \"oom\"; }\n",
						i ? "," : "", i);
		snprintf(text + len, cap - len, "); };\n");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		bad(text, "F:1: 'rules': 5000 rules, at most 256 are allowed");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 2000000000L);

		len = (size_t)snprintf(text, cap, "triggers = { rules = (\n");
		for (int i = 0; i < FR_RULES_MAX; i++)
			len += (size_t)snprintf(text + len, cap - len, "%s{ name = \"r%d\"; condition = \"oom\"; }\n",
						i ? "," : "", i);
		snprintf(text + len, cap - len, "); };\n");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(load(text, err, sizeof(err), &c), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK_EQ(c.rules.n, FR_RULES_MAX);
		CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 2000000000L);
		fr_conf_done(&c);
		free(text);
	}

	/* control.group: a name, not empty; the default is documented */
	fr_conf_init_defaults(&c);
	CHECK_STR(c.control_group, "flightrec");
	fr_conf_done(&c);
	CHECK_EQ(load("control = { group = \"wheel\"; };\n", err, sizeof(err), &c), 0);
	CHECK_STR(c.control_group, "wheel");
	fr_conf_done(&c);
	bad("control = {\n group = \"\"; };\n", "F:2: 'group' must not be empty");
	bad("control = { group = 0; };\n", "F:1: 'group' must be a string");

	/* a missing file: error only when asked for explicitly */
	fr_conf_init_defaults(&c);
	CHECK_EQ(fr_conf_load(&c, "/nonexistent/fr.conf", false, err, sizeof(err)), 0);
	CHECK_EQ(fr_conf_load(&c, "/nonexistent/fr.conf", true, err, sizeof(err)), -ENOENT);
	CHECK_STR(err, "/nonexistent/fr.conf: No such file or directory");
	fr_conf_done(&c);
	return TEST_DONE();
}
