/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording path (recorder.h).  Long because every record passes here
 * once, and what must see each one (decoding, the chunk builders, triggers,
 * frames to name and unwind, the loss accounting that turns drops into gap
 * records) is kept in one pass rather than spread over callbacks.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-id128.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "../lib/clock.h"
#include "../lib/chunk.h"
#include "../lib/demangle.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/symtab.h"
#include "cgroup-names.h"
#include "exe-names.h"
#include "keyframe.h"
#include "log.h"
#include "parser.h"
#include "recorder.h"
#include "symbolizer.h"
#include "trigger.h"
#include "python.h"
#include "wakers.h"

struct cpu_state {
	struct fr_chunk_builder *b;
	uint64_t delivered;
	uint64_t lost_reported; /* BPF drops already written as gaps */
	uint64_t lost_write;    /* records lost in failed writes, total */
	uint64_t lost_write_reported;
	uint64_t rereport;      /* counts from gap records that were lost */
	uint64_t lost_decode;   /* delivered but malformed: too short, unknown type */
	uint64_t lost_decode_reported;
	uint64_t open_events;   /* events in the open chunk: lost if it can
				   never be compressed */
};

struct fr_recorder {
	const struct fr_conf *conf;
	unsigned ncpu;
	struct cpu_state *cpu;
	struct fr_chunk_builder *meta; /* keyframes: chunks with cpu FR_CPU_META */
	ZSTD_CCtx *cctx;
	struct fr_store_writer *w;
	struct fr_rings *rings;
	struct fr_triggers *triggers;
	struct fr_cgroup_names *cg;
	struct fr_exe_names *exes; /* for the triggers' records */
	struct fr_symbolizer *sym;
	struct fr_parser *parser; /* user stacks unwound and named (NULL: leaf frames only) */
	uint64_t uframes[FR_SAMPLE_FRAMES_MAX]; /* the sample being recorded */
	struct fr_frame_desc udesc[FR_SAMPLE_FRAMES_MAX]; /* its user frames' descriptions */
	/* an offcpu record's waker's user frames, and theirs */
	uint64_t wuframes[FR_SAMPLE_FRAMES_MAX];
	struct fr_frame_desc wudesc[FR_SAMPLE_FRAMES_MAX];
	/* all its frames', as recorded (add_stacked()): the record's own
	 * (ndesc of them), then its waker's */
	struct fr_frame_desc desc[2 * FR_SAMPLE_FRAMES_MAX];
	unsigned ndesc;
	struct fr_wakers *wakers;
	struct fr_python *py;
	uint64_t waker_context[FR_WAKER_KINDS]; /* offcpu records, by their waker's context */
	struct fr_demangler *demangler; /* for the names triggers are given */
	bool udesc_set; /* udesc is for the sample being recorded */
	uint64_t offcpu_user[FR_OFFCPU_USER__MAX]; /* offcpu records with stacks, by enum fr_offcpu_user */
	uint64_t signal_stack[FR_SIGNAL_STACK__MAX]; /* signal records, by enum fr_signal_stack */
	uint64_t kstacks_unread; /* samples taken in the kernel whose kernel stack the kernel did not give */
	sd_id128_t boot_id;
	uint64_t records;
	struct fr_counters *scratch; /* ncpu counters, for reads */
	bool warned_encode, warned_decode;
	bool compress_failing;     /* logged once on entering */
	bool write_failing;        /* logged once on entering, once on leaving */
	uint64_t written_at_failure;
	uint64_t synced_at_failure;
	uint64_t syncs_failed_seen;
};


int fr_recorder_new(const struct fr_conf *c, unsigned ncpu, struct fr_recorder **ret)
{
	struct fr_recorder *r = calloc(1, sizeof(*r));
	int k = -ENOMEM;

	if (!r)
		return -ENOMEM;
	r->conf = c;
	r->ncpu = ncpu;
	r->cpu = calloc(ncpu, sizeof(*r->cpu));
	r->scratch = calloc(ncpu, sizeof(*r->scratch));
	r->cctx = ZSTD_createCCtx();
	if (!r->cpu || !r->scratch || !r->cctx)
		goto fail;
	/* built once, reused for every chunk */
	k = fr_recorder_set_zstd_level(r, c->zstd_level);
	if (k < 0)
		goto fail;
	for (unsigned i = 0; i < ncpu; i++) {
		k = fr_chunk_builder_new(i, c->chunk_size, &r->cpu[i].b);
		if (k < 0)
			goto fail;
	}
	k = fr_chunk_builder_new(FR_CPU_META, c->chunk_size, &r->meta);
	if (k < 0)
		goto fail;
	k = sd_id128_get_boot(&r->boot_id);
	if (k < 0)
		goto fail;
	k = fr_cgroup_names_new(&r->cg);
	if (k < 0)
		goto fail;
	k = fr_exe_names_new(&r->exes);
	if (k < 0)
		goto fail;
	k = fr_demangler_new(&r->demangler);
	if (k < 0)
		goto fail;
	k = fr_python_new(&r->py);
	if (k < 0)
		goto fail;
	k = fr_wakers_new(&r->wakers);
	if (k < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	fr_recorder_free(r);
	return k;
}

struct fr_recorder *fr_recorder_free(struct fr_recorder *r)
{
	if (!r)
		return NULL;
	if (r->cpu)
		for (unsigned i = 0; i < r->ncpu; i++)
			fr_chunk_builder_free(r->cpu[i].b);
	free(r->cpu);
	fr_chunk_builder_free(r->meta);
	free(r->scratch);
	ZSTD_freeCCtx(r->cctx);
	fr_cgroup_names_free(r->cg);
	fr_exe_names_free(r->exes);
	fr_demangler_free(r->demangler);
	fr_wakers_free(r->wakers);
	fr_python_free(r->py);
	fr_symbolizer_free(r->sym);
	fr_parser_free(r->parser);
	free(r);
	return NULL;
}

void fr_recorder_set_writer(struct fr_recorder *r, struct fr_store_writer *w)
{
	r->w = w;
}

/* At level 3, the default, zstd's match tables for a chunk's ~256 KiB
 * have 2^17 + 2^16 entries (768 KiB), which the drain's other work evicts
 * from the cache between chunks: at 2^15 each (256 KiB), sched chunks
 * compressed in 20 % less time (~8 ns a record) for 0.24 % more bytes.
 * Levels 1 and 2 use 2^14 or so already; higher levels are chosen for
 * their ratio and keep zstd's tables. */
#define ZSTD_TABLE_LEVEL 3
#define ZSTD_TABLE_LOG 15

int fr_recorder_set_zstd_level(struct fr_recorder *r, int level)
{
	ZSTD_CCtx *z = r->cctx;

	/* parameters set by hand stick across a change of level: start over */
	if (ZSTD_isError(ZSTD_CCtx_reset(z, ZSTD_reset_parameters)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level)) ||
	    /* the frame checksum lets any zstd tool verify a payload alone */
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	if (level == ZSTD_TABLE_LEVEL &&
	    (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_hashLog, ZSTD_TABLE_LOG)) ||
	     ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_chainLog, ZSTD_TABLE_LOG))))
		return -EINVAL;
	return 0;
}

void fr_recorder_set_rings(struct fr_recorder *r, struct fr_rings *rings)
{
	r->rings = rings;
	fr_python_set_exes_fd(r->py, rings ? fr_rings_py_exes_fd(rings) : -EBADF);
}

void fr_recorder_set_symbolizer(struct fr_recorder *r, struct fr_symbolizer *s)
{
	fr_symbolizer_free(r->sym);
	r->sym = s;
}

struct fr_symbolizer *fr_recorder_symbolizer(struct fr_recorder *r)
{
	return r->sym;
}

void fr_recorder_set_parser(struct fr_recorder *r, struct fr_parser *p)
{
	fr_parser_free(r->parser);
	r->parser = p;
}

struct fr_parser *fr_recorder_parser(struct fr_recorder *r)
{
	return r->parser;
}

int fr_recorder_cgroup_fd(const struct fr_recorder *r)
{
	return fr_cgroup_names_mount_fd(r->cg);
}

void fr_recorder_set_triggers(struct fr_recorder *r, struct fr_triggers *t)
{
	r->triggers = t;
}

/* A closed chunk that will never be written: its events are the CPU's
 * write losses, and the counts its gap records carried are due again.
 * (Keyframe chunks hold no events and no gaps.) */
static void count_chunk_loss(struct fr_recorder *r, uint32_t cpu, uint64_t records, uint64_t gap_lost)
{
	if (cpu >= r->ncpu)
		return;
	r->cpu[cpu].lost_write += records;
	r->cpu[cpu].rereport += gap_lost;
}

/* Compresses and queues @b's open chunk.  If compressing fails (out of
 * memory: zstd's workspace or the output buffer), the builder keeps its
 * records and the next close tries again; meanwhile records that do not
 * fit are counted where they are added.  Once compressed, a chunk that
 * cannot be queued or written is counted through the writer's loss
 * callback, out of memory included. */
static void close_builder(struct fr_recorder *r, struct fr_chunk_builder *b, struct cpu_state *c)
{
	uint32_t n = fr_chunk_builder_count(b);
	void *buf;
	size_t len;
	int k;

	if (n == 0)
		return;
	k = fr_chunk_builder_close(b, r->cctx, 0, r->boot_id.bytes, &buf, &len);
	if (k < 0) {
		/* once per episode: with memory short this repeats per record */
		if (!r->compress_failing)
			log_error_errno(k, "Failed to compress a chunk of %u records, keeping them for the next try: %m", n);
		r->compress_failing = true;
		return;
	}
	r->compress_failing = false;
	if (c)
		c->open_events = 0;
	if (!r->w) {
		const struct fr_chunk_header *h = buf;

		count_chunk_loss(r, le32toh(h->cpu), le32toh(h->nevents), le64toh(h->gap_lost));
		free(buf);
		return;
	}
	log_debug("chunk of %u records, %zu bytes encoded, %zu on disk", n,
		  fr_chunk_builder_last_raw(b), len);
	/* on failure the writer reports the loss through the callback */
	(void)fr_store_writer_append(r->w, buf, len);
}

static void close_chunk(struct fr_recorder *r, unsigned cpu)
{
	close_builder(r, r->cpu[cpu].b, &r->cpu[cpu]);
}

/* Size of the code descriptions @d[0..n) not yet in @b's open chunk. */
static size_t code_need(struct fr_chunk_builder *b, const struct fr_frame_desc *d, unsigned n)
{
	size_t need = 0;

	for (unsigned i = 0; i < n; i++) {
		if (d[i].mapping.type && !fr_chunk_builder_described(b, &d[i].mapping))
			need += fr_record_max_encoded_size(&d[i].mapping);
		if (d[i].symbol.type && !fr_chunk_builder_described(b, &d[i].symbol))
			need += fr_record_max_encoded_size(&d[i].symbol);
		if (d[i].inl.type && !fr_chunk_builder_described(b, &d[i].inl))
			need += fr_record_max_encoded_size(&d[i].inl);
		if (d[i].py.type && !fr_chunk_builder_described(b, &d[i].py))
			need += fr_record_max_encoded_size(&d[i].py);
	}
	return need;
}

static void add_code(struct fr_chunk_builder *b, const struct fr_frame_desc *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (d[i].mapping.type && !fr_chunk_builder_described(b, &d[i].mapping))
			(void)fr_chunk_builder_add(b, &d[i].mapping);
		if (d[i].symbol.type && !fr_chunk_builder_described(b, &d[i].symbol))
			(void)fr_chunk_builder_add(b, &d[i].symbol);
		if (d[i].inl.type && !fr_chunk_builder_described(b, &d[i].inl))
			(void)fr_chunk_builder_add(b, &d[i].inl);
		if (d[i].py.type && !fr_chunk_builder_described(b, &d[i].py))
			(void)fr_chunk_builder_add(b, &d[i].py);
	}
}

/* Adds @rec to builder @b, first describing its cgroup and the code of its
 * frames (@frames[0..nframes)) if this chunk has not yet, so every chunk
 * decodes on its own.  @c is the CPU whose builder it is (NULL for
 * keyframes), where a record that cannot be added is counted: an event as
 * lost, a gap's count as due again.  Returns 0, or -ENOBUFS. */
static int add_to(struct fr_recorder *r, struct fr_chunk_builder *b, struct cpu_state *c,
		  const struct fr_record *rec, const struct fr_frame_desc *frames, unsigned nframes)
{
	struct fr_record meta; /* set when path is */
	const char *path = NULL;
	size_t need = fr_record_max_encoded_size(rec);

	if (rec->cgroup_id && !fr_chunk_builder_cgroup_described(b, rec->cgroup_id)) {
		path = fr_cgroup_names_lookup(r->cg, rec->cgroup_id);
		if (path) {
			fr_record_clear(&meta);
			meta.type = FR_REC_CGROUP;
			meta.ts = rec->ts;
			meta.cgroup_id = rec->cgroup_id;
			meta.cgroup.path = path;
			meta.cgroup.path_len = (uint32_t)strnlen(path, 4096);
			need += fr_record_max_encoded_size(&meta);
		}
	}
	need += code_need(b, frames, nframes);
	if (fr_chunk_builder_raw_size(b) + need > r->conf->chunk_size)
		close_builder(r, b, c);
	if (fr_chunk_builder_count(b) == 0)
		fr_chunk_builder_set_opened(b, fr_now_ns(CLOCK_MONOTONIC));
	if (path && !fr_chunk_builder_cgroup_described(b, rec->cgroup_id))
		(void)fr_chunk_builder_add(b, &meta);
	add_code(b, frames, nframes);
	if (fr_chunk_builder_add(b, rec) < 0) {
		/* the full chunk could not be compressed (logged there), or a
		 * record over chunk_size (cannot happen); count, never hide */
		if (c && rec->type == FR_REC_GAP)
			c->rereport += rec->gap.lost;
		else if (c)
			c->lost_write++;
		if (!r->warned_encode && !r->compress_failing) {
			log_warning("Record of type %u does not fit a chunk; counted as lost", rec->type);
			r->warned_encode = true;
		}
		return -ENOBUFS;
	}
	if (c && rec->type != FR_REC_GAP && !fr_record_type_is_meta(rec->type))
		c->open_events++;
	return 0;
}

/* A sample or offcpu record goes in with the names of its frames, found
 * now while the process and its binaries exist.  Frame 0 is the
 * interrupted instruction; the others are return addresses. */
static void add_stacked(struct fr_recorder *r, unsigned cpu, const struct fr_record *rec)
{
	const struct fr_record_waker *k = rec->type == FR_REC_OFFCPU ? &rec->sched.waker : NULL;
	struct fr_frame_desc *d = r->desc;
	unsigned nk = rec->stack.kernel_frames, nu = rec->stack.user_frames, n = 0;

	if (r->sym)
		for (unsigned i = 0; i < nk && n < FR_SAMPLE_FRAMES_MAX; i++)
			fr_symbolizer_kernel(r->sym, rec->stack.kframes[i], i == 0, &d[n++]);
	/* the user frames were named with their unwinding (fr_parser_stack()) */
	for (unsigned i = 0; i < nu && n < FR_SAMPLE_FRAMES_MAX; i++)
		d[n++] = r->udesc_set ? r->udesc[i] : (struct fr_frame_desc){};
	r->udesc_set = false;
	r->ndesc = n;
	/* its waker's, in the waker's process */
	if (k && k->context) {
		if (r->sym)
			for (unsigned i = 0; i < k->stack.kernel_frames; i++)
				fr_symbolizer_kernel(r->sym, k->stack.kframes[i], i == 0, &d[n++]);
		for (unsigned i = 0; i < k->stack.user_frames; i++)
			d[n++] = r->wudesc[i];
	}
	for (unsigned i = 0; i < n; i++)
		d[i].mapping.ts = d[i].symbol.ts = d[i].inl.ts = d[i].py.ts = rec->ts;
	(void)add_to(r, r->cpu[cpu].b, &r->cpu[cpu], rec, d, n);
	r->records++;
}

/* The frames of @rec, just recorded by add_stacked(), named as a reader
 * of its chunk will name them (lib/symtab.h, from the descriptions the
 * chunk got), C++ names demangled; no inlined frames.  Their strings live
 * until the next record.  Returns how many. */
static int name_frames(struct fr_recorder *r, const struct fr_record *rec, struct fr_frame *out)
{
	struct fr_symtab t = {};
	unsigned nk = rec->stack.kernel_frames, n = MIN(r->ndesc, (unsigned)FR_SAMPLE_FRAMES_MAX);

	for (unsigned i = 0; i < n; i++) {
		(void)fr_symtab_add(&t, &r->desc[i].mapping);
		(void)fr_symtab_add(&t, &r->desc[i].symbol);
		(void)fr_symtab_add(&t, &r->desc[i].py);
	}
	fr_symtab_finish(&t);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = i < nk ? rec->stack.kframes[i] : rec->stack.uframes[i - nk];

		fr_symtab_resolve(&t, NULL, rec, i, a, &out[i]);
		fr_frame_demangle(r->demangler, &out[i]);
	}
	fr_symtab_done(&t);
	return (int)n;
}

static void add_record(struct fr_recorder *r, unsigned cpu, const struct fr_record *rec)
{
	(void)add_to(r, r->cpu[cpu].b, &r->cpu[cpu], rec, NULL, 0);
	r->records++;
}

static void on_process(const struct fr_record *rec, void *userdata)
{
	struct fr_recorder *r = userdata;

	(void)add_to(r, r->meta, NULL, rec, NULL, 0);
	fr_exe_names_on_record(r->exes, rec);
}

/* The user stack @s into r->uframes (at most @max frames), with their
 * descriptions in r->udesc.  @captured: false when the stack was not
 * copied (an offcpu record's user stack could not be had): the
 * instruction the registers were taken at, and a marker saying the rest
 * was not captured.  @leaf_user: the record has no kernel frames. */
static size_t unwind_into(struct fr_recorder *r, const struct fr_ustack *s, bool captured, bool leaf_user,
			  size_t max, uint64_t *uframes, struct fr_frame_desc *udesc)
{
	const uint64_t leaf[2] = { s->regs[16], FR_FRAME_NOT_CAPTURED };
	size_t n;

	if (!s->exe_ino || !s->regs[16] || max < 2) /* a kernel thread */
		return 0;
	if (!r->parser) { /* the interrupted instruction, no more */
		memcpy(uframes, leaf, sizeof(leaf));
		n = captured ? 1 : 2;
		for (size_t i = 0; i < n; i++)
			udesc[i] = (struct fr_frame_desc){};
		return n;
	}
	return fr_parser_stack(r->parser, s, captured ? NULL : leaf, captured ? 0 : 2, true, leaf_user, uframes, max,
			       udesc);
}

static size_t unwind(struct fr_recorder *r, const struct fr_ustack *s, bool captured, bool leaf_user, size_t max)
{
	size_t n;

	r->udesc_set = false;
	n = unwind_into(r, s, captured, leaf_user, max, r->uframes, r->udesc);
	r->udesc_set = n > 0 && r->parser;
	return n;
}

/* What a record of the BPF side says of a user stack (sample and offcpu
 * records share these fields); @stack_len: bytes of @stack copied. */
#define USTACK_OF(e, stack_len_)                                                                          \
	((struct fr_ustack){ .pid = (e)->hdr.pid, .tid = (e)->hdr.tid, .ppid = (e)->ppid, .exe_ino = (e)->exe_ino, \
			     .regs = (const uint64_t *)(e)->uregs, .stack = (e)->ustack,                        \
			     .stack_len = MIN((e)->ustack_len, (uint32_t)(stack_len_)) })

/* Python stack @ps of the user stack just unwound (r->uframes, n of
 * them, at most @max): its frames in place of the interpreter's. */
static size_t merge_python(struct fr_recorder *r, uint32_t pid, uint64_t ts, const struct fr_py_stack *ps,
			   size_t n, size_t max)
{
	if (ps->status == FR_PY_NOT_PYTHON)
		return n;
	/* a stack not named (the parser busy or over its budget) has no
	 * interpreter frames to put them in: counted as unplaced */
	return fr_python_merge(r->py, pid, ts, ps, r->uframes, r->udesc_set ? r->udesc : NULL, n, max);
}

/* The Python frames after the user stack copy of an event of @size
 * bytes whose struct is @base bytes (offcpu, waker, signal: event.h),
 * merged into @uframes[0..n) (@udesc: their names, NULL when not named;
 * room for @max). */
static size_t merge_python_after(struct fr_recorder *r, uint32_t pid, uint64_t ts, const uint8_t *ustack,
				 size_t base, size_t size, uint64_t *uframes, struct fr_frame_desc *udesc, size_t n,
				 size_t max)
{
	struct fr_py_stack ps;

	if (size < base + FR_USTACK_COPY + sizeof(ps))
		return n;
	memcpy(&ps, ustack + FR_USTACK_COPY, sizeof(ps));
	if (ps.status == FR_PY_NOT_PYTHON)
		return n;
	return fr_python_merge(r->py, pid, ts, &ps, uframes, udesc, n, max);
}

static size_t unwind_sample(struct fr_recorder *r, const struct fr_event_sample *e, size_t max)
{
	struct fr_ustack s = USTACK_OF(e, FR_USTACK_COPY);
	struct fr_py_probe probe;
	size_t n = unwind(r, &s, true, e->kernel_frames == 0, max);

	/* an executable the parser found to be a CPython: walked from now */
	if (r->udesc_set && e->py.status == FR_PY_NOT_PYTHON) {
		fr_parser_python(r->parser, &probe);
		if (probe.found)
			fr_python_learn(r->py, e->exe_dev, e->exe_ino, &probe, e->hdr.comm);
	}
	return merge_python(r, e->hdr.pid, e->hdr.ts, &e->py, n, max);
}

/* An offcpu record with its stacks (@size: with or without the user
 * stack copy, event.h). */
static size_t unwind_offcpu(struct fr_recorder *r, const struct fr_event_offcpu *e, size_t size, size_t max)
{
	struct fr_ustack s = USTACK_OF(e, size >= sizeof(*e) + FR_USTACK_COPY ? FR_USTACK_COPY : 0);
	size_t n = unwind(r, &s, s.stack_len > 0, e->kernel_frames == 0, max);

	/* its Python frames follow the stack copy */
	return merge_python_after(r, e->hdr.pid, e->hdr.ts, e->ustack, sizeof(*e), size, r->uframes,
				  r->udesc_set ? r->udesc : NULL, n, max);
}

static unsigned this_cpu(struct fr_recorder *r)
{
	int c = sched_getcpu();
	return c >= 0 && (unsigned)c < r->ncpu ? (unsigned)c : 0;
}

void fr_recorder_add_user(struct fr_recorder *r, const struct fr_record *rec)
{
	add_record(r, this_cpu(r), rec);
}

void fr_recorder_mark(struct fr_recorder *r, uint32_t pid, const char *text, size_t len)
{
	struct fr_record rec = { .type = FR_REC_MARK, .ts = fr_now_ns(CLOCK_BOOTTIME) };

	if (pid)
		fr_keyframe_attribute(fr_cgroup_names_mount_fd(r->cg), pid, &rec);
	rec.mark.text = text;
	rec.mark.text_len = (uint32_t)len;
	fr_recorder_add_user(r, &rec);
}

int fr_recorder_keyframe(struct fr_recorder *r)
{
	uint64_t now = fr_now_ns(CLOCK_BOOTTIME);
	int n = fr_keyframe_scan(fr_cgroup_names_mount_fd(r->cg), now, on_process, r);

	/* what exited 10 s ago has had its last records */
	fr_exe_names_prune(r->exes, now > 10 * NSEC_PER_SEC ? now - 10 * NSEC_PER_SEC : 0);
	/* a keyframe is its own chunks, written at once */
	close_builder(r, r->meta, NULL);
	if (n >= 0)
		log_debug("Keyframe of %d processes", n);
	return n;
}

static void copy_hdr(struct fr_record *rec, const struct fr_event_hdr *h)
{
	rec->ts = h->ts;
	rec->pid = h->pid;
	rec->tid = h->tid;
	rec->cgroup_id = h->cgroup_id;
	memcpy(rec->comm, h->comm, FR_COMM_LEN);
	rec->comm[FR_COMM_LEN] = 0;
	rec->comm_len = fr_comm_len(rec->comm);
}

static int record_event(struct fr_recorder *r, unsigned cpu, const void *data, size_t size, bool held);

/* A held offcpu record, its waker come or not (fr_wakers_release()). */
static void record_held(void *userdata, unsigned cpu, const void *data, size_t size)
{
	(void)record_event(userdata, cpu, data, size, true);
}

void fr_recorder_drained(struct fr_recorder *r, bool all)
{
	fr_wakers_release(r->wakers, all ? UINT64_MAX : fr_now_ns(CLOCK_MONOTONIC), all, record_held, r);
}

/* The waker in @e (@size bytes) into @rec's, its user stack unwound in
 * its own process. */
static void take_waker(struct fr_recorder *r, struct fr_record *rec, const struct fr_event_waker *e, size_t size)
{
	struct fr_record_waker *k = &rec->sched.waker;

	k->context = (uint8_t)(MIN(e->context, (uint16_t)FR_WAKER_UNKNOWN) + 1);
	k->no_stack = e->hdr.flags & FR_WAKER_NO_STACK;
	k->pid = e->hdr.pid;
	k->tid = e->hdr.tid;
	k->comm = e->hdr.comm;
	k->comm_len = fr_comm_len(e->hdr.comm);
	k->delay_ns = e->hdr.ts > rec->ts ? e->hdr.ts - rec->ts : 0;
	k->stack.kernel_frames = MIN(e->kernel_frames, FR_STACK_DEPTH);
	k->stack.kframes = (const uint64_t *)e->kstack;
	k->stack.uframes = r->wuframes;
	if (e->exe_ino && size >= sizeof(*e) + FR_USTACK_COPY) {
		struct fr_ustack s = {
			.pid = e->hdr.pid, .tid = e->hdr.tid, .ppid = e->ppid, .exe_ino = e->exe_ino,
			.regs = (const uint64_t *)e->uregs, .stack = e->ustack,
			.stack_len = MIN(e->ustack_len, FR_USTACK_COPY),
		};
		size_t max = FR_SAMPLE_FRAMES_MAX - k->stack.kernel_frames, n;

		n = unwind_into(r, &s, s.stack_len > 0, e->kernel_frames == 0, max, r->wuframes, r->wudesc);
		/* its Python frames follow the stack copy (named when the
		 * parser named the stack: unwind_into()) */
		k->stack.user_frames = (uint16_t)merge_python_after(r, e->hdr.pid, e->hdr.ts, e->ustack, sizeof(*e), size,
								     r->wuframes, n && r->parser ? r->wudesc : NULL,
								     n, max);
		/* its names stay while the record's own are had */
		if (r->parser)
			fr_parser_keep(r->parser);
	}
	r->waker_context[k->context]++;
}

/* The most switch records a batch adds, encoded. */
static size_t switches_max_size(size_t n)
{
	static size_t one;

	if (!one) {
		struct fr_record rec;

		fr_record_clear(&rec);
		rec.type = FR_REC_SWITCH;
		rec.sw.next_comm_len = FR_COMM_LEN;
		one = fr_record_max_encoded_size(&rec);
	}
	return n * one;
}

/* A batch of @n switch events of @cpu (delivered, not counted yet), the
 * records of full mode: hundreds of thousands a second, so they go into
 * the chunk a run at a time, encoded straight from the events, with no
 * struct fr_record each (fr_chunk_builder_add_switch_events()), the room
 * in the chunk checked and the triggers asked once for the run.  Their
 * bytes are those record_event() would add; what it alone does goes
 * through it, one record at a time: a switch when a trigger may match
 * switches, the first of a cgroup the open chunk has not described yet,
 * one that may not fit the open chunk (record_event() closes it), and
 * an event of another type among them. */
static void record_switches(struct fr_recorder *r, unsigned cpu, const struct fr_event_switch *e, size_t n)
{
	struct cpu_state *c = &r->cpu[cpu];
	struct fr_chunk_builder *b = c->b;
	size_t i = 0;

	c->delivered += n;
	if (r->triggers && fr_triggers_may_match(r->triggers, FR_REC_SWITCH)) {
		for (; i < n; i++)
			(void)record_event(r, cpu, &e[i], sizeof(*e), false);
		return;
	}
	while (i < n) {
		uint64_t described = 0; /* a cgroup the open chunk has described */
		size_t start = i;

		if (fr_chunk_builder_raw_size(b) + switches_max_size(n - i) > r->conf->chunk_size) {
			(void)record_event(r, cpu, &e[i++], sizeof(*e), false);
			continue;
		}
		for (; i < n; i++) {
			uint64_t id = e[i].hdr.cgroup_id;

			if (e[i].hdr.type != FR_EV_SWITCH)
				break;
			if (id && id != described) {
				if (!fr_chunk_builder_cgroup_described(b, id))
					break;
				described = id;
			}
		}
		if (i > start) {
			if (fr_chunk_builder_count(b) == 0)
				fr_chunk_builder_set_opened(b, fr_now_ns(CLOCK_MONOTONIC));
			if (fr_chunk_builder_add_switch_events(b, &e[start], i - start) == 0) {
				c->open_events += i - start;
				r->records += i - start;
			} else {
				/* cannot happen (the room is checked); as add_to() */
				for (size_t j = start; j < i; j++)
					(void)record_event(r, cpu, &e[j], sizeof(*e), false);
			}
		}
		if (i < n)
			(void)record_event(r, cpu, &e[i++], sizeof(*e), false);
	}
}

int fr_recorder_on_event(void *userdata, unsigned cpu, const void *data, size_t size)
{
	struct fr_recorder *r = userdata;
	const struct fr_event_hdr *h = data;

	if (cpu >= r->ncpu)
		return 0;
	/* switch records come in batches, back to back (event.h) */
	if (size > sizeof(struct fr_event_switch) && size % sizeof(struct fr_event_switch) == 0 &&
	    h->type == FR_EV_SWITCH) {
		record_switches(r, cpu, data, size / sizeof(struct fr_event_switch));
		return 0;
	}
	/* no record of its own, nor counted as one in BPF: kept for its
	 * wait's */
	if (size >= sizeof(*h) && h->type == FR_EV_WAKER) {
		fr_wakers_add(r->wakers, data, size, fr_now_ns(CLOCK_MONOTONIC));
		return 0;
	}
	/* the same: kept for the stacks of its process that follow */
	if (size >= sizeof(*h) && h->type == FR_EV_PYCODE) {
		fr_python_add_code(r->py, data, size, fr_now_ns(CLOCK_MONOTONIC));
		return 0;
	}
	r->cpu[cpu].delivered++;
	if (size < sizeof(*h)) {
		r->cpu[cpu].lost_decode++;
		return 0;
	}
	return record_event(r, cpu, data, size, false);
}

/* Event @data of @cpu (delivered, counted) as a record; @held: it was
 * held for its waker, which it now takes if it came. */
static int record_event(struct fr_recorder *r, unsigned cpu, const void *data, size_t size, bool held)
{
	const struct fr_event_hdr *h = data;
	struct fr_event_waker *waker = NULL;
	size_t waker_size = 0;
	struct fr_record rec;
	char memcg[4096];

	fr_record_clear(&rec);
	copy_hdr(&rec, h);
	rec.type = h->type;

	/* on the enum: a BPF event type this switch lacks does not build
	 * (-Wswitch-enum); a number no type has is malformed, below */
	switch ((enum fr_event_type)h->type) {
	case FR_EV_EXEC: {
		const struct fr_event_exec *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.exec.ppid = e->ppid;
		if (r->parser)
			fr_parser_exec(r->parser, rec.pid); /* a new image */
		rec.exec.filename = e->filename;
		rec.exec.filename_len = MIN(e->filename_len, FR_FILENAME_LEN);
		rec.exec.args = e->args;
		rec.exec.args_len = MIN(e->args_len, FR_ARGS_LEN);
		/* argv blocks end in NUL; keep the separators, not the last one */
		while (rec.exec.args_len && e->args[rec.exec.args_len - 1] == 0)
			rec.exec.args_len--;
		if (h->flags & FR_EXEC_FILENAME_CUT)
			rec.flags |= FR_REC_F_FILENAME_CUT;
		if (h->flags & FR_EXEC_ARGS_CUT)
			rec.flags |= FR_REC_F_ARGS_CUT;
		break;
	}
	case FR_EV_EXIT: {
		const struct fr_event_exit *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.exit.status = e->exit_code;
		if (r->parser)
			fr_parser_exit(r->parser, rec.pid);
		if (rec.pid == rec.tid)
			fr_python_exit(r->py, rec.pid, fr_now_ns(CLOCK_MONOTONIC));
		break;
	}
	case FR_EV_FORK: {
		const struct fr_event_fork *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.fork.child_pid = e->child_pid;
		if (r->parser)
			fr_parser_fork(r->parser, rec.pid, e->child_pid);
		break;
	}
	case FR_EV_SYSCALL: {
		const struct fr_event_syscall *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.syscall.nr = e->nr;
		rec.syscall.duration_ns = e->duration_ns;
		rec.syscall.ret = e->ret;
		break;
	}
	case FR_EV_OFFCPU:
		if ((h->flags & FR_OFFCPU_WAKER) && size >= sizeof(struct fr_event_sched)) {
			waker = fr_wakers_take(r->wakers, h->tid, h->ts, &waker_size);
			/* its waker is in a ring not read yet */
			if (!waker && !held && fr_wakers_defer(r->wakers, cpu, data, size))
				return 0;
			if (waker)
				take_waker(r, &rec, waker, waker_size);
		}
		if (size >= sizeof(struct fr_event_offcpu)) {
			const struct fr_event_offcpu *e = data;
			rec.sched.duration_ns = e->duration_ns;
			rec.sched.syscall_nr = e->syscall_nr >= 0 ? e->syscall_nr : -1;
			rec.sched.state = h->pad;
			rec.sched.kthread = h->flags & FR_OFFCPU_KTHREAD;
			rec.stack.kernel_frames = MIN(e->kernel_frames, FR_STACK_DEPTH);
			rec.stack.kframes = (const uint64_t *)e->kstack;
			rec.stack.uframes = r->uframes;
			rec.stack.user_frames =
				(uint16_t)unwind_offcpu(r, e, size, FR_SAMPLE_FRAMES_MAX - rec.stack.kernel_frames);
			r->offcpu_user[MIN(e->user, (uint16_t)(FR_OFFCPU_USER__MAX - 1))]++;
			break;
		}
		__attribute__((fallthrough));
	case FR_EV_RUNQ: {
		const struct fr_event_sched *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.sched.duration_ns = e->duration_ns;
		rec.sched.syscall_nr = h->type == FR_EV_OFFCPU && e->syscall_nr >= 0 ? e->syscall_nr : -1;
		rec.sched.state = h->type == FR_EV_OFFCPU ? h->pad : 0;
		rec.sched.kthread = h->type == FR_EV_OFFCPU && (h->flags & FR_OFFCPU_KTHREAD);
		break;
	}
	case FR_EV_SAMPLE: {
		const struct fr_event_sample *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.stack.kernel_frames = MIN(e->kernel_frames, FR_STACK_DEPTH);
		/* taken in the kernel, with no kernel stack: bpf_get_stack
		 * failed (its per-CPU buffers in use by a program the sample
		 * interrupted).  The record keeps its user stack, which looks
		 * like a sample in user code: counted */
		if (!e->user_mode && !e->kernel_frames)
			r->kstacks_unread++;
		/* __u64 is unsigned long long, uint64_t unsigned long: same bits */
		rec.stack.kframes = (const uint64_t *)e->kstack;
		rec.stack.uframes = r->uframes;
		rec.stack.user_frames = (uint16_t)unwind_sample(r, e, FR_SAMPLE_FRAMES_MAX - rec.stack.kernel_frames);
		break;
	}
	case FR_EV_SWITCH: {
		const struct fr_event_switch *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.sw.prev_state = e->prev_state;
		rec.sw.next_pid = e->next_pid;
		rec.sw.next_tid = e->next_tid;
		rec.sw.next_comm = e->next_comm;
		rec.sw.next_comm_len = fr_comm_len(e->next_comm);
		break;
	}
	case FR_EV_BLOCK: {
		const struct fr_event_block *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.block.dev = e->dev;
		rec.block.op = e->op;
		rec.block.sector = e->sector;
		rec.block.bytes = e->bytes;
		rec.block.error = e->error;
		rec.block.duration_ns = e->duration_ns;
		break;
	}
	case FR_EV_OOM: {
		const struct fr_event_oom *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.oom.rss_kb = e->rss_pages * (uint64_t)(sysconf(_SC_PAGESIZE) / 1024);
		rec.oom.memcg_id = e->memcg_id;
		/* resolve now: the cgroup may be removed soon after the kill */
		rec.oom.memcg = fr_cgroup_names_memcg(r->cg, e->memcg_id, memcg, sizeof(memcg));
		if (!rec.oom.memcg) {
			/* gone already: its name is what is left */
			snprintf(memcg, sizeof(memcg), "%.*s", FR_CGROUP_NAME_LEN, e->memcg_name);
			rec.oom.memcg = memcg;
		}
		rec.oom.memcg_len = (uint32_t)strlen(rec.oom.memcg);
		log_notice("OOM kill: %s[%u], memory cgroup %s, rss %" PRIu64 " kB", rec.comm, rec.pid,
			   *rec.oom.memcg ? rec.oom.memcg : "?", rec.oom.rss_kb);
		break;
	}
	case FR_EV_SIGNAL: {
		const struct fr_event_signal *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.signal.sig = e->sig;
		rec.signal.sender_pid = e->sender_pid;
		rec.signal.sender_tid = e->sender_tid;
		rec.signal.code = e->code;
		rec.signal.result = e->result;
		rec.signal.sender_comm = e->sender_comm;
		rec.signal.sender_comm_len = fr_comm_len(e->sender_comm);
		rec.signal.stack = (uint8_t)MIN(e->stack, (uint16_t)FR_SIGNAL_STACK_OVER);
		r->signal_stack[rec.signal.stack]++;
		if (h->flags & FR_SIGNAL_ADDR) {
			rec.flags |= FR_REC_F_FAULT_ADDR;
			rec.signal.addr = e->addr;
		}
		if (e->stack == FR_SIGNAL_STACK_SKIPPED)
			break;
		rec.stack.kernel_frames = MIN(e->kernel_frames, FR_STACK_DEPTH);
		rec.stack.kframes = (const uint64_t *)e->kstack;
		if (e->stack == FR_SIGNAL_STACK_COPIED) {
			/* the sender's stack, in the sender's address space */
			struct fr_ustack s = {
				.pid = e->sender_pid, .tid = e->sender_tid, .ppid = e->ppid, .exe_ino = e->exe_ino,
				.regs = (const uint64_t *)e->uregs, .stack = e->ustack,
				.stack_len = size >= sizeof(*e) + FR_USTACK_COPY ? MIN(e->ustack_len, FR_USTACK_COPY) : 0,
				.rare = true,
			};
			size_t max = FR_SAMPLE_FRAMES_MAX - rec.stack.kernel_frames;
			rec.stack.uframes = r->uframes;
			size_t n = unwind(r, &s, s.stack_len > 0, e->kernel_frames == 0, max);
			rec.stack.user_frames = (uint16_t)merge_python_after(
				r, e->sender_pid, h->ts, e->ustack, sizeof(*e), size, r->uframes,
				r->udesc_set ? r->udesc : NULL, n, max);
		}
		break;
	}
	case FR_EV_TCP: {
		const struct fr_event_tcp *e = data;
		if (size < sizeof(*e))
			goto malformed;
		rec.tcp.event = e->event;
		rec.tcp.state = e->state;
		rec.tcp.family = e->family;
		rec.tcp.sport = e->sport;
		rec.tcp.dport = e->dport;
		memcpy(rec.tcp.saddr, e->saddr, 16);
		memcpy(rec.tcp.daddr, e->daddr, 16);
		break;
	}
	case FR_EV__MAX:
	default:
		goto malformed;
	}
	if (rec.stack.kernel_frames || rec.stack.user_frames || (rec.type == FR_REC_OFFCPU && rec.sched.waker.context))
		add_stacked(r, cpu, &rec);
	else
		add_record(r, cpu, &rec);
	/* an exec older than what named the process already (drained late
	 * from another CPU) names neither it nor its triggers */
	if ((rec.type == FR_REC_EXEC || rec.type == FR_REC_FORK || rec.type == FR_REC_EXIT) &&
	    fr_exe_names_on_record(r->exes, &rec) && rec.type == FR_REC_EXEC && r->triggers)
		fr_triggers_on_exe(r->triggers, &rec, fr_exe_names_get(r->exes, rec.pid));
	/* after it is stored: a trigger record follows its cause; a fatal
	 * signal's incident says where, its frames named */
	if (r->triggers && fr_triggers_may_match(r->triggers, rec.type)) {
		struct fr_frame frames[FR_SAMPLE_FRAMES_MAX];
		int nframes = 0;
		if (rec.type == FR_REC_SIGNAL && (rec.stack.kernel_frames || rec.stack.user_frames))
			nframes = name_frames(r, &rec, frames);
		fr_triggers_on_record(r->triggers, &rec, rec.cgroup_id ? fr_cgroup_names_lookup(r->cg, rec.cgroup_id) : NULL,
				      fr_exe_names_get(r->exes, rec.pid), nframes ? frames : NULL, nframes);
	}
	free(waker); /* the record's waker points into it: encoded and triggered on now */
	return 0;
malformed:
	free(waker);
	/* a BPF/daemon ABI mismatch: never silent, a loss like any other */
	r->cpu[cpu].lost_decode++;
	if (!r->warned_decode)
		log_warning("Record of type %u and %zu bytes from CPU %u not understood; counted as lost.",
			    h->type, size, cpu);
	r->warned_decode = true;
	return 0;
}

void fr_recorder_on_write_loss(uint32_t cpu, uint64_t records, uint64_t gap_lost, int error,
			       void *userdata)
{
	struct fr_recorder *r = userdata;
	struct fr_store_writer_stats st;

	count_chunk_loss(r, cpu, records, gap_lost);
	fr_store_writer_get_stats(r->w, &st);
	/* once per episode, not per chunk: ENOSPC would flood the log */
	if (!r->write_failing) {
		if (st.syncs_failed > r->syncs_failed_seen)
			log_error_errno(error,
					"Failed to sync the store (fdatasync), the records written since the sync before are counted lost: %m");
		else
			log_error_errno(error, "Failed to write to the store, records are being lost and counted: %m");
		r->write_failing = true;
		r->written_at_failure = st.chunks_written;
		r->synced_at_failure = st.syncs;
	}
	r->syncs_failed_seen = st.syncs_failed;
}

static void check_write_resumed(struct fr_recorder *r)
{
	struct fr_store_writer_stats st;
	uint64_t lost = 0;

	if (!r->write_failing || !r->w)
		return;
	fr_store_writer_get_stats(r->w, &st);
	/* a chunk written and a sync completed since: durable again */
	if (st.chunks_written == r->written_at_failure || st.syncs == r->synced_at_failure)
		return;
	for (unsigned i = 0; i < r->ncpu; i++)
		lost += r->cpu[i].lost_write;
	log_notice("Writing to the store resumed; %" PRIu64 " records lost in all, recorded as gaps.", lost);
	r->write_failing = false;
}

static void emit_gap(struct fr_recorder *r, unsigned cpu, uint64_t lost)
{
	struct fr_record gap = { .type = FR_REC_GAP, .ts = fr_now_ns(CLOCK_BOOTTIME) };

	gap.gap.lost = lost;
	/* not an event: if it finds no room, its count waits for the next tick */
	(void)add_to(r, r->cpu[cpu].b, &r->cpu[cpu], &gap, NULL, 0);
}

/* Sum over sources of what BPF could not deliver, per CPU.  (Untracked
 * calls are not records; status reports them on their own.) */
static void bpf_losses(struct fr_recorder *r, uint64_t *out)
{
	memset(out, 0, sizeof(uint64_t) * r->ncpu);
	if (!r->rings)
		return;
	for (unsigned s = 0; s < FR_SRC__MAX; s++) {
		if (fr_rings_read_counters(r->rings, s, r->scratch) < 0)
			continue;
		for (unsigned i = 0; i < r->ncpu; i++)
			out[i] += r->scratch[i].dropped;
	}
}

/* Gap records for the losses counted since the last report, and the
 * chunks open for longer than their age closed. */
static void report_losses_close_aged(struct fr_recorder *r, uint64_t now_mono)
{
	uint64_t lost[r->ncpu];

	bpf_losses(r, lost);
	for (unsigned i = 0; i < r->ncpu; i++) {
		struct cpu_state *c = &r->cpu[i];
		uint64_t n = 0;

		if (lost[i] > c->lost_reported) {
			n += lost[i] - c->lost_reported;
			c->lost_reported = lost[i];
		}
		if (c->lost_decode > c->lost_decode_reported) {
			n += c->lost_decode - c->lost_decode_reported;
			c->lost_decode_reported = c->lost_decode;
		}
		if (c->lost_write > c->lost_write_reported) {
			n += c->lost_write - c->lost_write_reported;
			c->lost_write_reported = c->lost_write;
		}
		n += c->rereport;
		c->rereport = 0;
		if (n)
			emit_gap(r, i, n);
		uint64_t opened = fr_chunk_builder_opened(c->b);
		if (opened && now_mono - opened >= r->conf->chunk_age_ns)
			close_chunk(r, i);
	}
}

void fr_recorder_tick(struct fr_recorder *r, uint64_t now_mono)
{
	check_write_resumed(r);
	if (r->sym)
		fr_symbolizer_trim(r->sym);
	if (r->parser)
		fr_parser_tick(r->parser);
	fr_python_tick(r->py, now_mono);
	report_losses_close_aged(r, now_mono);
}

void fr_recorder_flush_until(struct fr_recorder *r, uint64_t until_boot)
{
	/* the losses so far go with the records, not the tick's upkeep (the
	 * parser's, a round trip): an incident's critical path flushes */
	report_losses_close_aged(r, fr_now_ns(CLOCK_MONOTONIC));
	for (unsigned i = 0; i < r->ncpu; i++) {
		const struct fr_chunk_builder *b = r->cpu[i].b;
		if (fr_chunk_builder_count(b) && fr_chunk_builder_first_ts(b) <= until_boot)
			close_chunk(r, i);
	}
}

void fr_recorder_flush(struct fr_recorder *r)
{
	fr_recorder_flush_until(r, UINT64_MAX);
}

void fr_recorder_finish(struct fr_recorder *r)
{
	fr_recorder_flush(r);
	/* a chunk that could not be compressed even now never will be */
	for (unsigned i = 0; i < r->ncpu; i++) {
		struct cpu_state *c = &r->cpu[i];

		if (c->open_events == 0)
			continue;
		log_error("%" PRIu64 " records of CPU %u could not be compressed at exit; counted as lost.",
			  c->open_events, i);
		c->lost_write += c->open_events;
		c->open_events = 0;
	}
}

uint64_t fr_recorder_records(const struct fr_recorder *r)
{
	return r->records;
}

void fr_recorder_offcpu_stats(const struct fr_recorder *r, uint64_t ret[FR_OFFCPU_USER__MAX])
{
	memcpy(ret, r->offcpu_user, sizeof(r->offcpu_user));
}

void fr_recorder_waker_stats(const struct fr_recorder *r, uint64_t ret[FR_WAKER_KINDS], struct fr_wakers_stats *ws)
{
	memcpy(ret, r->waker_context, sizeof(r->waker_context));
	fr_wakers_get_stats(r->wakers, ws);
}

void fr_recorder_signal_stats(const struct fr_recorder *r, uint64_t ret[FR_SIGNAL_STACK__MAX])
{
	memcpy(ret, r->signal_stack, sizeof(r->signal_stack));
}

uint64_t fr_recorder_kernel_stacks_unread(const struct fr_recorder *r)
{
	return r->kstacks_unread;
}

void fr_recorder_python_stats(const struct fr_recorder *r, struct fr_python_stats *ret)
{
	fr_python_get_stats(r->py, ret);
}

void fr_recorder_cpu_stats(struct fr_recorder *r, unsigned cpu, struct fr_recorder_cpu_stats *ret)
{
	*ret = (struct fr_recorder_cpu_stats){};
	if (cpu >= r->ncpu)
		return;
	ret->delivered = r->cpu[cpu].delivered;
	ret->lost_write = r->cpu[cpu].lost_write;
	ret->lost_decode = r->cpu[cpu].lost_decode;
	if (!r->rings)
		return;
	for (unsigned s = 0; s < FR_SRC__MAX; s++) {
		if (fr_rings_read_counters(r->rings, s, r->scratch) < 0)
			continue;
		ret->emitted += r->scratch[cpu].emitted;
		ret->dropped += r->scratch[cpu].dropped;
		ret->untracked += r->scratch[cpu].untracked;
	}
}

void fr_recorder_source_stats(struct fr_recorder *r, unsigned src, uint64_t *emitted,
			      uint64_t *dropped, uint64_t *untracked, uint64_t *dropped_per_cpu)
{
	*emitted = *dropped = *untracked = 0;
	if (dropped_per_cpu)
		memset(dropped_per_cpu, 0, r->ncpu * sizeof(*dropped_per_cpu));
	if (!r->rings || fr_rings_read_counters(r->rings, src, r->scratch) < 0)
		return;
	for (unsigned i = 0; i < r->ncpu; i++) {
		*emitted += r->scratch[i].emitted;
		*dropped += r->scratch[i].dropped;
		*untracked += r->scratch[i].untracked;
		if (dropped_per_cpu)
			dropped_per_cpu[i] = r->scratch[i].dropped;
	}
}
