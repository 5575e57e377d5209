/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "../lib/macro.h"
#include "../lib/record.h"
#include "../lib/str-append.h"
#include "../lib/window.h"
#include "dump-formats.h"
#include "output-folded.h"
#include "output-perfetto.h"
#include "output-pprof.h"

/* perfetto: Trace Event Format JSON, streamed as it is added */
static void *perfetto_begin(const struct dump_format_ctx *c)
{
	return fr_perfetto_begin(c->out, fr_window_ncpu(c->w));
}
static bool every_record(void *state, const struct dump_format_ctx *c, const struct fr_record *r)
{
	return true;
}
static int perfetto_add(void *state, const struct dump_format_ctx *c, const struct fr_window_entry *e)
{
	fr_perfetto_add(state, c->w, e);
	return 0;
}
static int perfetto_finish(void *state, const struct dump_format_ctx *c, bool write)
{
	const struct fr_window *w = c->w;

	/* the trailer, that the document ends, even when abandoned */
	fr_perfetto_end(state, write && w->nchunks ? w->chunks[w->nchunks - 1].boot_id : NULL);
	return 0;
}

/* folded: the samples, or with --offcpu the off-CPU records that have a
 * stack, by their blocked time in microseconds */
static void *folded_begin(const struct dump_format_ctx *c)
{
	return fr_folded_new();
}
static bool folded_wants(void *state, const struct dump_format_ctx *c, const struct fr_record *r)
{
	if (c->offcpu)
		return r->type == FR_REC_OFFCPU && r->stack.kernel_frames + r->stack.user_frames > 0;
	return r->type == FR_REC_SAMPLE;
}
static int folded_add(void *state, const struct dump_format_ctx *c, const struct fr_window_entry *e)
{
	return fr_folded_add(state, c->w, e, c->offcpu ? MAX(e->r.sched.duration_ns / 1000, 1ULL) : 1);
}
static int folded_finish(void *state, const struct dump_format_ctx *c, bool write)
{
	if (write)
		(void)fr_folded_print(state, c->out);
	fr_folded_free(state);
	return 0;
}

/* pprof: a gzipped profile.proto */
static void *pprof_begin(const struct dump_format_ctx *c)
{
	return fr_pprof_new(c->offcpu, c->hz);
}
static bool pprof_wants(void *state, const struct dump_format_ctx *c, const struct fr_record *r)
{
	return fr_pprof_wants(state, r);
}
static int pprof_add(void *state, const struct dump_format_ctx *c, const struct fr_window_entry *e)
{
	(void)fr_pprof_add(state, c->w, e); /* a sample it cannot take is counted in the profile */
	return 0;
}
static int pprof_finish(void *state, const struct dump_format_ctx *c, bool write)
{
	int k = write ? fr_pprof_write(state, c->out) : 0;

	fr_pprof_free(state);
	return k;
}

const struct dump_format dump_formats[DUMP__MAX] = {
	[DUMP_TEXT] = { .name = "text", .help = "one line per record, for people (default)", .kind = DUMP_LINES,
			.sizes = true },
	[DUMP_JSON] = { .name = "json", .help = "JSON Lines, one record per line", .kind = DUMP_LINES,
			.need_exe = true, .sizes = true },
	[DUMP_PERFETTO] = {
		.name = "perfetto",
		.help = "Trace Event Format JSON for ui.perfetto.dev,\nchrome://tracing and speedscope",
		.kind = DUMP_RECORDS, .need_exe = true,
		.not_followed = "--format perfetto is one JSON document, complete only at its end",
		.begin = perfetto_begin, .wants = every_record, .add = perfetto_add, .finish = perfetto_finish,
	},
	[DUMP_FOLDED] = {
		.name = "folded",
		.help = "the CPU samples as collapsed stacks\n('comm;outer;...;leaf count'), for flame graphs",
		.kind = DUMP_RECORDS, .offcpu = true,
		.not_followed = "--format folded counts the stacks of a whole window",
		.begin = folded_begin, .wants = folded_wants, .add = folded_add, .finish = folded_finish,
	},
	[DUMP_BUNDLE] = {
		.name = "bundle",
		.help = "the window as one self-contained file (its\nchunks, processes, symbols, host), which\n"
			"every verb reads with --input on any machine",
		.kind = DUMP_WHOLE,
		.not_followed = "a bundle is a file written whole",
	},
	[DUMP_PPROF] = {
		.name = "pprof",
		.help = "the CPU samples as a gzipped pprof profile\n(go tool pprof, Pyroscope, Parca, Grafana):\n"
			"stacks with build ids, pid/tid/comm/cgroup\nlabels; binary: give -o FILE",
		.kind = DUMP_RECORDS, .binary = true, .offcpu = true,
		.not_followed = "a pprof profile is a file written whole",
		.begin = pprof_begin, .wants = pprof_wants, .add = pprof_add, .finish = pprof_finish,
	},
};

int dump_format_id(const char *name)
{
	for (int i = 0; i < DUMP__MAX; i++)
		if (!strcmp(name, dump_formats[i].name))
			return i;
	return -1;
}

const char *dump_format_names(void)
{
	static char buf[256];
	size_t at = 0;

	if (!buf[0])
		for (int i = 0; i < DUMP__MAX; i++)
			fr_str_append(buf, sizeof(buf), &at, "%s%s", i ? ", " : "", dump_formats[i].name);
	return buf;
}

const char *dump_format_names_if(bool (*pick)(const struct dump_format *f), char *buf, size_t len)
{
	size_t at = 0;
	int last = -1;

	for (int i = 0; i < DUMP__MAX; i++)
		if (pick(&dump_formats[i]))
			last = i;
	buf[0] = 0;
	for (int i = 0, k = 0; i < DUMP__MAX; i++)
		if (pick(&dump_formats[i]))
			fr_str_append(buf, len, &at, "%s%s", k++ == 0 ? "" : i == last ? " or " : ", ",
				      dump_formats[i].name);
	return buf;
}

const char *dump_formats_help(void)
{
	static char buf[2048];
	size_t at = 0;

	if (buf[0])
		return buf;
	for (int i = 0; i < DUMP__MAX; i++) {
		const char *h = dump_formats[i].help;
		size_t n = strcspn(h, "\n");

		fr_str_append(buf, sizeof(buf), &at, "%-22s%-10s%.*s\n", i ? "" : "  --format FMT", dump_formats[i].name,
			      (int)n, h);
		while (h[n] == '\n') {
			h += n + 1;
			n = strcspn(h, "\n");
			fr_str_append(buf, sizeof(buf), &at, "%32s%.*s\n", "", (int)n, h);
		}
	}
	return buf;
}
