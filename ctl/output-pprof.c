/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --format pprof: the window's samples as a pprof profile (profile.proto,
 * serialized by protobuf-c, gzipped by zlib), what `go tool pprof`,
 * Pyroscope, Parca and Grafana read.  Sample types: samples (count) and
 * cpu (nanoseconds: each sample stands for one sampling period, 1 s / hz);
 * with --offcpu, the off-CPU records that have a stack instead: waits
 * (count) and off-cpu (nanoseconds blocked).  Each stack is a list of
 * locations, leaf first; a location is a code address of a mapping (the
 * file, with its build id) and its functions, innermost first (inlined
 * ones, then the one whose code it is).  Labels: pid, tid, comm, cgroup.
 * Identical stacks with identical labels are one sample, their values
 * summed.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "output-pprof.h"
#include "profile.pb-c.h"

/* GLib's MIN and MAX give way to lib/macro.h's (the same definitions) */
#undef MIN
#undef MAX
#include "../lib/macro.h"

typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;

struct psample {
	uint64_t *loc;
	size_t nloc;
	int64_t v[2];
	int64_t pid, tid, comm, cgroup; /* comm, cgroup: string indexes */
};

struct fr_pprof {
	bool offcpu;
	uint64_t period_ns;
	uint64_t t0, t1;
	GPtrArray *strings;  /* of char *, [0] "" */
	GHashTable *string_ids; /* string -> index + 1 */
	GPtrArray *functions, *mappings, *locations; /* of the messages */
	GHashTable *function_ids, *mapping_ids, *location_ids; /* key -> id */
	GPtrArray *samples;  /* of struct psample */
	GHashTable *sample_ids; /* key -> index + 1 */
	uint64_t added;
};

static void free_function(gpointer p)
{
	g_free(p);
}

static void free_location(gpointer p)
{
	Location *l = p;
	for (size_t i = 0; i < l->n_line; i++)
		g_free(l->line[i]);
	g_free(l->line);
	g_free(l);
}

static void free_sample(gpointer p)
{
	struct psample *s = p;
	g_free(s->loc);
	g_free(s);
}

struct fr_pprof *fr_pprof_new(bool offcpu, uint32_t hz)
{
	struct fr_pprof *p = g_new0(struct fr_pprof, 1);

	p->offcpu = offcpu;
	p->period_ns = hz ? 1000000000ULL / hz : 0;
	p->strings = g_ptr_array_new_with_free_func(g_free);
	p->string_ids = g_hash_table_new(g_str_hash, g_str_equal);
	p->functions = g_ptr_array_new_with_free_func(free_function);
	p->mappings = g_ptr_array_new_with_free_func(g_free);
	p->locations = g_ptr_array_new_with_free_func(free_location);
	p->samples = g_ptr_array_new_with_free_func(free_sample);
	p->function_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->mapping_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->location_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->sample_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_ptr_array_add(p->strings, g_strdup(""));
	g_hash_table_insert(p->string_ids, p->strings->pdata[0], GUINT_TO_POINTER(1));
	return p;
}

struct fr_pprof *fr_pprof_free(struct fr_pprof *p)
{
	if (!p)
		return NULL;
	g_hash_table_destroy(p->string_ids); /* keys are the strings' */
	g_ptr_array_free(p->strings, TRUE);
	g_ptr_array_free(p->functions, TRUE);
	g_ptr_array_free(p->mappings, TRUE);
	g_ptr_array_free(p->locations, TRUE);
	g_ptr_array_free(p->samples, TRUE);
	g_hash_table_destroy(p->function_ids);
	g_hash_table_destroy(p->mapping_ids);
	g_hash_table_destroy(p->location_ids);
	g_hash_table_destroy(p->sample_ids);
	g_free(p);
	return NULL;
}

/* The index of @s (@len bytes, any bytes: made valid UTF-8, as protobuf
 * strings must be). */
static int64_t str_n(struct fr_pprof *p, const char *s, size_t len)
{
	gchar *v = g_utf8_make_valid(s ? s : "", s ? (gssize)len : 0);
	gpointer id = g_hash_table_lookup(p->string_ids, v);

	if (id) {
		g_free(v);
		return (int64_t)GPOINTER_TO_UINT(id) - 1;
	}
	g_ptr_array_add(p->strings, v);
	g_hash_table_insert(p->string_ids, v, GUINT_TO_POINTER(p->strings->len));
	return (int64_t)p->strings->len - 1;
}

static int64_t str(struct fr_pprof *p, const char *s)
{
	return str_n(p, s, s ? strlen(s) : 0);
}

/* The mapping of frame @f: its file and build id (kernel frames:
 * [kernel.kallsyms], its modules); 0 when the frame has no module. */
static uint64_t mapping_of(struct fr_pprof *p, const struct fr_frame *f)
{
	char buf[512], bid[2 * FR_BUILD_ID_MAX + 1] = "";
	const char *module = fr_frame_module(f, buf, sizeof(buf));
	gchar *key;
	gpointer id;
	Mapping *m;

	if (!module)
		return 0;
	if (f->build_id_len)
		(void)fr_format_hex(f->build_id, f->build_id_len, bid, sizeof(bid));
	key = g_strdup_printf("%s%c%s", module, 0x1f, bid);
	id = g_hash_table_lookup(p->mapping_ids, key);
	if (id) {
		g_free(key);
		return GPOINTER_TO_UINT(id);
	}
	m = g_new0(Mapping, 1);
	perftools__profiles__mapping__init(m);
	m->id = p->mappings->len + 1;
	m->filename = str(p, module);
	m->build_id = str(p, bid);
	/* the names are here: readers need not look for the binary */
	m->has_functions = true;
	m->has_inline_frames = true;
	g_ptr_array_add(p->mappings, m);
	g_hash_table_insert(p->mapping_ids, key, GUINT_TO_POINTER(m->id));
	return m->id;
}

static uint64_t function_of(struct fr_pprof *p, const struct fr_frame *f, int64_t filename)
{
	char buf[512];
	const char *name = fr_frame_name(f, false, buf, sizeof(buf));
	gchar *key;
	gpointer id;
	Function *fn;

	/* a Python function: its name; the file and line are the line's */
	if (f->python && f->sym) {
		snprintf(buf, sizeof(buf), "%.*s", (int)f->sym_len, f->sym);
		name = buf;
	}
	key = g_strdup_printf("%s%c%" PRId64, name, 0x1f, filename);
	id = g_hash_table_lookup(p->function_ids, key);

	if (id) {
		g_free(key);
		return GPOINTER_TO_UINT(id);
	}
	fn = g_new0(Function, 1);
	perftools__profiles__function__init(fn);
	fn->id = p->functions->len + 1;
	fn->name = fn->system_name = str(p, name);
	/* C++: the name as the binary has it (pprof's system name) */
	if (f->mangled)
		fn->system_name = str_n(p, f->mangled, strnlen(f->mangled, f->mangled_len));
	fn->filename = filename;
	g_ptr_array_add(p->functions, fn);
	g_hash_table_insert(p->function_ids, key, GUINT_TO_POINTER(fn->id));
	return fn->id;
}

/* The location of frames f[0..n): an address and its functions,
 * innermost first (those inlined there, then the one it is in). */
static uint64_t location_of(struct fr_pprof *p, const struct fr_frame *f, size_t n)
{
	uint64_t mid = mapping_of(p, &f[n - 1]), fids[FR_FRAMES_EXPANDED_MAX];
	/* an address in its file where it is known, as pprof's mappings say */
	uint64_t addr = f[n - 1].has_offset ? f[n - 1].offset : f[n - 1].addr;
	int64_t filename = mid ? ((Mapping *)p->mappings->pdata[mid - 1])->filename : 0;
	/* a Python frame: in its source file, at its line */
	if (f[n - 1].python)
		filename = f[n - 1].file ? str_n(p, f[n - 1].file, f[n - 1].file_len) : 0;
	GString *key = g_string_new(NULL);
	gpointer id;
	Location *l;

	g_string_append_printf(key, "%" PRIu64 ":%" PRIx64, mid, addr);
	for (size_t i = 0; i < n; i++) {
		fids[i] = function_of(p, &f[i], filename);
		g_string_append_printf(key, ",%" PRIu64, fids[i]);
	}
	id = g_hash_table_lookup(p->location_ids, key->str);
	if (id) {
		g_string_free(key, TRUE);
		return GPOINTER_TO_UINT(id);
	}
	l = g_new0(Location, 1);
	perftools__profiles__location__init(l);
	l->id = p->locations->len + 1;
	l->mapping_id = mid;
	l->address = addr;
	l->n_line = n;
	l->line = g_new0(Line *, n);
	for (size_t i = 0; i < n; i++) {
		l->line[i] = g_new0(Line, 1);
		perftools__profiles__line__init(l->line[i]);
		l->line[i]->function_id = fids[i];
		if (f[i].python)
			l->line[i]->line = f[i].line;
	}
	g_ptr_array_add(p->locations, l);
	g_hash_table_insert(p->location_ids, g_string_free(key, FALSE), GUINT_TO_POINTER(l->id));
	return l->id;
}

bool fr_pprof_wants(const struct fr_pprof *p, const struct fr_record *r)
{
	if (p->offcpu)
		return r->type == FR_REC_OFFCPU && r->stack.kernel_frames + r->stack.user_frames > 0;
	return r->type == FR_REC_SAMPLE;
}

int fr_pprof_add(struct fr_pprof *p, struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_frame f[FR_FRAMES_EXPANDED_MAX];
	uint64_t loc[FR_FRAMES_EXPANDED_MAX];
	int n = fr_window_frames(w, e, f, FR_FRAMES_EXPANDED_MAX);
	size_t nloc = 0;
	int64_t comm, cg;
	GString *key;
	gpointer id;
	struct psample *s;

	if (n < 0)
		return n;
	if (!p->t0 || e->wall_ns < p->t0)
		p->t0 = e->wall_ns;
	p->t1 = MAX(p->t1, e->wall_ns + fr_record_duration_ns(&e->r));
	/* leaf first; an inlined frame shares its location with the frame
	 * after it, down to the one that is not inlined */
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && f[j].inlined)
			j++;
		loc[nloc++] = location_of(p, &f[i], (size_t)(j - i + 1));
		i = j + 1;
	}
	comm = str_n(p, e->r.comm, e->r.comm_len);
	cg = e->cgroup ? str_n(p, e->cgroup, e->cgroup_len) : 0;
	key = g_string_new(NULL);
	g_string_append_printf(key, "%u:%u:%" PRId64 ":%" PRId64, e->r.pid, e->r.tid, comm, cg);
	for (size_t i = 0; i < nloc; i++)
		g_string_append_printf(key, ",%" PRIu64, loc[i]);
	id = g_hash_table_lookup(p->sample_ids, key->str);
	if (id) {
		s = p->samples->pdata[GPOINTER_TO_UINT(id) - 1];
		g_string_free(key, TRUE);
	} else {
		s = g_new0(struct psample, 1);
		s->loc = g_memdup2(loc, nloc * sizeof(*loc));
		s->nloc = nloc;
		s->pid = e->r.pid;
		s->tid = e->r.tid;
		s->comm = comm;
		s->cgroup = cg;
		g_ptr_array_add(p->samples, s);
		g_hash_table_insert(p->sample_ids, g_string_free(key, FALSE), GUINT_TO_POINTER(p->samples->len));
	}
	s->v[0]++;
	s->v[1] += p->offcpu ? (int64_t)e->r.sched.duration_ns : (int64_t)p->period_ns;
	p->added++;
	return 0;
}

static Label *label(Label *l, int64_t key, int64_t s, int64_t num)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = s;
	l->num = num;
	return l;
}

/* The profile, serialized and gzipped, to @out; 0 or -errno. */
int fr_pprof_write(struct fr_pprof *p, FILE *out)
{
	Perftools__Profiles__Profile pr;
	ValueType types[2], *type_ptrs[2], period;
	Sample *samples = g_new0(Sample, p->samples->len), **sample_ptrs = g_new0(Sample *, p->samples->len);
	Label *labels = g_new0(Label, (size_t)p->samples->len * 4), **label_ptrs = g_new0(Label *, (size_t)p->samples->len * 4);
	int64_t k_pid = str(p, "pid"), k_tid = str(p, "tid"), k_comm = str(p, "comm"), k_cg = str(p, "cgroup");
	uint8_t *buf = NULL, *gz = NULL;
	size_t len;
	z_stream z = {};
	int r = 0;

	perftools__profiles__profile__init(&pr);
	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&types[i]);
		type_ptrs[i] = &types[i];
	}
	types[0].type = str(p, p->offcpu ? "waits" : "samples");
	types[0].unit = str(p, "count");
	types[1].type = str(p, p->offcpu ? "off-cpu" : "cpu");
	types[1].unit = str(p, "nanoseconds");
	perftools__profiles__value_type__init(&period);
	period.type = types[1].type;
	period.unit = types[1].unit;
	pr.n_sample_type = 2;
	pr.sample_type = type_ptrs;
	pr.period_type = &period;
	pr.period = p->offcpu ? 0 : (int64_t)p->period_ns;
	pr.default_sample_type = types[1].type;
	pr.time_nanos = (int64_t)p->t0;
	pr.duration_nanos = p->t1 > p->t0 ? (int64_t)(p->t1 - p->t0) : 0;
	for (size_t i = 0; i < p->samples->len; i++) {
		struct psample *s = p->samples->pdata[i];
		Label **lp = &label_ptrs[i * 4];
		Sample *x = &samples[i];

		perftools__profiles__sample__init(x);
		x->n_location_id = s->nloc;
		x->location_id = s->loc;
		x->n_value = 2;
		x->value = s->v;
		lp[0] = label(&labels[i * 4], k_pid, 0, s->pid);
		lp[1] = label(&labels[i * 4 + 1], k_tid, 0, s->tid);
		lp[2] = label(&labels[i * 4 + 2], k_comm, s->comm, 0);
		lp[3] = label(&labels[i * 4 + 3], k_cg, s->cgroup, 0);
		x->n_label = s->cgroup ? 4 : 3;
		x->label = lp;
		sample_ptrs[i] = x;
	}
	pr.n_sample = p->samples->len;
	pr.sample = sample_ptrs;
	pr.n_mapping = p->mappings->len;
	pr.mapping = (Mapping **)p->mappings->pdata;
	pr.n_location = p->locations->len;
	pr.location = (Location **)p->locations->pdata;
	pr.n_function = p->functions->len;
	pr.function = (Function **)p->functions->pdata;
	pr.n_string_table = p->strings->len;
	pr.string_table = (char **)p->strings->pdata;

	len = perftools__profiles__profile__get_packed_size(&pr);
	buf = malloc(MAX(len, (size_t)1));
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&pr, buf);
	/* gzip, as pprof files are (windowBits 15 + 16: a gzip wrapper) */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		r = -ENOMEM;
		goto out;
	}
	gz = malloc(deflateBound(&z, len));
	if (!gz) {
		deflateEnd(&z);
		r = -ENOMEM;
		goto out;
	}
	z.next_in = buf;
	z.avail_in = (uInt)len;
	z.next_out = gz;
	z.avail_out = (uInt)deflateBound(&z, len);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		r = -EIO;
	else if (fwrite(gz, 1, z.total_out, out) != z.total_out)
		r = -(errno ? errno : EIO);
	deflateEnd(&z);
out:
	free(gz);
	free(buf);
	g_free(samples);
	g_free(sample_ptrs);
	g_free(labels);
	g_free(label_ptrs);
	return r;
}

uint64_t fr_pprof_count(const struct fr_pprof *p)
{
	return p->added;
}
