/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The on-disk record encoding, before compression.  Records of a chunk are
 * a byte stream; each is
 *
 *   u8 type, u8 flags,
 *   svarint ts - previous ts   (syscall records are stamped at their start,
 *                               so deltas can be negative),
 *   varint pid, svarint tid - pid, varint cgroup id,
 *   u8 comm length, comm bytes,
 *   type-specific fields (below), some of them only in chunks with an
 *   incompatible flag that announces them (FR_CHUNK_INCOMPAT_*),
 *   then, in chunks with FR_CHUNK_INCOMPAT_RECORD_EXT and when the
 *   record's flags have FR_REC_F_EXT, its extension: varint length and
 *   that many bytes.  A field added to a type goes there, after those
 *   this reader knows, and a type added goes there whole (a type this
 *   reader does not know has no fields of its own in other streams):
 *   this reader skips what it does not know and counts the records
 *   (fr_codec_state.unknown), so neither needs a new flag.  The fields
 *   there so far: offcpu, varint task state and varint flags (bit 0: a
 *   kernel thread) (issue 45; 0 when absent), then with flags bit 1 its
 *   waker (issue 46: put_offcpu_ext()); pycode, a type of its own made
 *   after it (issue 47): varint code address, svarint first line, name
 *   and file (varint length, bytes).
 *
 * Varints are LEB128; svarints zigzag-encoded.  Small numbers dominate
 * (deltas, pids), so a typical record is 20-40 bytes before zstd.  The
 * decoder checks every length against the buffer: input is untrusted.
 *
 * That is a record as a row.  Chunks store their records in columns
 * (FR_CHUNK_INCOMPAT_STREAMS): the same bytes, each field's in the stream
 * of its kind (enum stream), which readers turn back into rows as they
 * decode the records.  Every field is written and read here, with its stream
 * named, so the two layouts cannot drift apart.
 *
 * Long because that is the point of the file: the encoder and the decoder
 * of every record type side by side, each one loop the primitives above
 * it are inlined into; split, a field's two halves would be in two files.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "../bpf/event.h"
#include "macro.h"
#include "record.h"
#include "store-format.h"

#define NAME_(name, number, str, flags) [number] = str,
static const char *const type_names[] = { FR_RECORD_TYPES(NAME_) };
#undef NAME_

#define NUMBER_(name, number, str, flags) number,
static const uint16_t printed[] = { FR_RECORD_TYPES_PRINTED(NUMBER_) };
#undef NUMBER_

const char *fr_record_type_name(uint16_t type)
{
	if (type < ELEMENTSOF(type_names) && type_names[type])
		return type_names[type];
	return "unknown";
}

int fr_record_type_from_name(const char *name)
{
	for (unsigned i = 0; i < ELEMENTSOF(type_names); i++)
		if (type_names[i] && strcmp(type_names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

const uint16_t *fr_record_types_printed(unsigned *n)
{
	*n = ELEMENTSOF(printed);
	return printed;
}

/* The stream of each field.  Switch records, the bulk of a busy
 * machine's full-mode recording, have every field in its own; the fields
 * of rare types share S_OTHER. */
enum stream {
	S_HEAD,      /* type, flags */
	S_TS,        /* timestamp deltas */
	S_PID,
	S_TID,       /* tid - pid */
	S_CGROUP,
	S_COMM,      /* length, bytes */
	S_STATE,     /* a switch's prev_state */
	S_NEXT_PID,  /* a switch's next task */
	S_NEXT_TID,
	S_NEXT_COMM,
	S_DURATION,  /* off-CPU, run-queue, syscall and block durations */
	S_NR,        /* system call numbers */
	S_FRAMES,    /* samples: frame counts and frames */
	S_OTHER,
};
_Static_assert(S_OTHER + 1 == FR_REC_STREAMS, "the stream count of record.h");

static const char *const stream_names[] = {
	[S_HEAD] = "head", [S_TS] = "ts", [S_PID] = "pid", [S_TID] = "tid",
	[S_CGROUP] = "cgroup", [S_COMM] = "comm", [S_STATE] = "state", [S_NEXT_PID] = "next_pid",
	[S_NEXT_TID] = "next_tid", [S_NEXT_COMM] = "next_comm", [S_DURATION] = "duration", [S_NR] = "nr",
	[S_FRAMES] = "frames", [S_OTHER] = "other",
};
_Static_assert(ELEMENTSOF(stream_names) == FR_REC_STREAMS, "a name for every stream");

const char *fr_record_stream_name(unsigned stream)
{
	return stream < FR_REC_STREAMS ? stream_names[stream] : "unknown";
}

/* Writes go to the end of their stream, or of the row (rows have one
 * cursor for every stream).  A writer is a local of the function that
 * encodes and every function that writes is inlined, so its fields live
 * in registers.  A write to a stream finds its end when it starts and
 * moves it when it is done: no more than the streams the record's fields
 * go to are looked at, where copying all of them into cursors and back
 * around every record took as long as the encoding itself (perf, full
 * mode). */
struct wcursor {
	uint8_t *p, *end;
};

struct writer {
	struct wcursor row;            /* rows */
	struct fr_record_streams *out; /* columns */
	size_t added; /* bytes written, all streams */
	bool columns; /* a constant where encode() is inlined */
	bool roomy;   /* columns with room for all that is written: no
			 test a write (a constant where it is set) */
	bool overflow;
};

/* Where the next byte of @sid goes; *@avail: how many fit. */
static _always_inline_ uint8_t *wbegin(struct writer *w, enum stream sid, size_t *avail)
{
	size_t n;

	if (!w->columns) {
		*avail = (size_t)(w->row.end - w->row.p);
		return w->row.p;
	}
	n = w->out->len[sid];
	*avail = w->roomy ? SIZE_MAX : w->out->cap[sid] - n;
	return w->out->buf[sid] + n;
}

/* @n bytes were written at wbegin(@sid). */
static _always_inline_ void wend(struct writer *w, enum stream sid, size_t n)
{
	if (w->columns)
		w->out->len[sid] += n;
	else
		w->row.p += n;
	w->added += n;
}

static _always_inline_ void put_u8(struct writer *w, enum stream sid, uint8_t v)
{
	size_t avail;
	uint8_t *p = wbegin(w, sid, &avail);

	if (!avail) {
		w->overflow = true;
		return;
	}
	*p = v;
	wend(w, sid, 1);
}

static _always_inline_ void put_varint(struct writer *w, enum stream sid, uint64_t v)
{
	size_t avail;
	uint8_t *p0 = wbegin(w, sid, &avail), *p = p0;

	if (avail >= 10) { /* room for any: no test a byte */
		while (v >= 0x80) {
			*p++ = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		*p++ = (uint8_t)v;
		wend(w, sid, (size_t)(p - p0));
		return;
	}
	while (v >= 0x80) {
		put_u8(w, sid, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_u8(w, sid, (uint8_t)v);
}

static _always_inline_ void put_svarint(struct writer *w, enum stream sid, int64_t v)
{
	put_varint(w, sid, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* Names (comms above all) are short: up to 16 bytes are copied in two
 * moves that may overlap, reading and writing only those bytes, instead
 * of a call to memcpy() each. */
static _always_inline_ void copy_short(uint8_t *d, const uint8_t *s, size_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else
		memcpy(d, s, n);
}

static _always_inline_ void put_bytes(struct writer *w, enum stream sid, const void *p, size_t n)
{
	size_t avail;
	uint8_t *d = wbegin(w, sid, &avail);

	if (n > avail) {
		w->overflow = true;
		return;
	}
	copy_short(d, p, n);
	wend(w, sid, n);
}

static _always_inline_ void put_str(struct writer *w, enum stream sid, const char *p, uint32_t n)
{
	put_varint(w, sid, n);
	put_bytes(w, sid, p, n);
}

/* A stack (sample and offcpu records): the two counts, then the frames
 * as zigzag deltas from the previous frame, in one string: addresses of
 * one stack are close, so most take 2-4 bytes, not 9. */
static int put_stack(struct writer *w, enum stream sid, const uint64_t *kframes, unsigned nk,
		     const uint64_t *uframes, unsigned nu)
{
	uint8_t blob[FR_SAMPLE_FRAMES_MAX * 10];
	struct writer b = { .row = { blob, blob + sizeof(blob) } };
	uint64_t prev = 0;

	if (nk + nu > FR_SAMPLE_FRAMES_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < nk + nu; i++) {
		uint64_t a = i < nk ? kframes[i] : uframes[i - nk];
		put_svarint(&b, sid, (int64_t)(a - prev));
		prev = a;
	}
	put_varint(w, sid, nk);
	put_varint(w, sid, nu);
	put_str(w, sid, (const char *)blob, (uint32_t)(b.row.p - blob));
	return 0;
}

static int put_frames(struct writer *w, const struct fr_record *r)
{
	return put_stack(w, S_FRAMES, r->stack.kframes, r->stack.kernel_frames, r->stack.uframes,
			 r->stack.user_frames);
}

/* The extensions this writer makes (FR_REC_F_EXT): an offcpu record's
 * task state and its flags (bit 0: a kernel thread, bit 1: a waker
 * follows), varints, after the varint length of the extension; then
 * with bit 1 its waker: varint context << 1 | no stack, varint pid,
 * svarint tid - pid, comm (varint length, bytes), varint delay, and its
 * stack as a record's (varint kernel and user frame counts, varint length
 * and the zigzag deltas). */
#define EXT_MAX (1 + 5 + 1)
#define EXT_OFFCPU_KTHREAD 1u
#define EXT_OFFCPU_WAKER 2u
#define EXT_WAKER_MAX (2 + 5 + 10 + 1 + FR_REC_COMM_MAX + 10 + 2 * 3 + 3 + FR_SAMPLE_FRAMES_MAX * 10)

/* Has @r an extension in a chunk of @st? */
static _always_inline_ bool has_ext(const struct fr_codec_state *st, const struct fr_record *r)
{
	return ((r->type == FR_REC_OFFCPU && (r->sched.state || r->sched.kthread || r->sched.waker.context)) ||
		r->type == FR_REC_PYCODE) &&
	       (st->incompat_flags & FR_CHUNK_INCOMPAT_RECORD_EXT);
}

/* A pycode record's fields, its extension (above), varint length first. */
#define PYCODE_STR_MAX 4096
static int put_pycode_ext(struct writer *w, const struct fr_record *r)
{
	uint8_t x[10 + 5 + 2 * (5 + PYCODE_STR_MAX)];
	struct writer b = { .row = { x, x + sizeof(x) } };

	if (r->pycode.name_len > PYCODE_STR_MAX || r->pycode.file_len > PYCODE_STR_MAX)
		return -EINVAL;
	put_varint(&b, S_OTHER, r->pycode.code);
	put_svarint(&b, S_OTHER, r->pycode.firstlineno);
	put_str(&b, S_OTHER, r->pycode.name, r->pycode.name_len);
	put_str(&b, S_OTHER, r->pycode.file, r->pycode.file_len);
	if (b.overflow)
		return -EINVAL;
	put_str(w, S_OTHER, (const char *)x, (uint32_t)(b.row.p - x));
	return 0;
}


/* An offcpu record's extension (above), varint length first. */
static int put_offcpu_ext(struct writer *w, const struct fr_record *r)
{
	uint8_t x[EXT_MAX + EXT_WAKER_MAX];
	struct writer b = { .row = { x, x + sizeof(x) } };
	const struct fr_record_waker *k = &r->sched.waker;
	unsigned flags = (r->sched.kthread ? EXT_OFFCPU_KTHREAD : 0) | (k->context ? EXT_OFFCPU_WAKER : 0);

	put_varint(&b, S_OTHER, r->sched.state);
	if (flags)
		put_varint(&b, S_OTHER, flags);
	if (k->context) {
		if (k->comm_len > FR_REC_COMM_MAX || k->context >= FR_WAKER_KINDS)
			return -EINVAL;
		put_varint(&b, S_OTHER, (uint64_t)k->context << 1 | k->no_stack);
		put_varint(&b, S_OTHER, k->pid);
		put_svarint(&b, S_OTHER, (int64_t)k->tid - (int64_t)k->pid);
		put_str(&b, S_OTHER, k->comm, k->comm_len);
		put_varint(&b, S_OTHER, k->delay_ns);
		if (put_stack(&b, S_OTHER, k->stack.kframes, k->stack.kernel_frames, k->stack.uframes,
			      k->stack.user_frames) < 0)
			return -EINVAL;
	}
	if (b.overflow)
		return -EINVAL;
	put_str(w, S_OTHER, (const char *)x, (uint32_t)(b.row.p - x));
	return 0;
}

/* The first varint of the extension @p[0..@n) at *@pos (advanced past
 * it); 0 when it is not there or not whole: a field a writer did not
 * write reads as its default. */
static uint64_t ext_varint(const uint8_t *p, size_t n, size_t *pos)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *pos < n && shift < 64; shift += 7) {
		uint8_t b = p[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			return v;
	}
	*pos = n;
	return 0;
}

/* A string of the extension at *@pos: its bytes, *@len of them; NULL
 * when it is not whole. */
static const uint8_t *ext_str(const uint8_t *p, size_t n, size_t *pos, uint32_t *len)
{
	uint64_t l = ext_varint(p, n, pos);
	const uint8_t *s = p + *pos;

	if (l > n - *pos)
		return NULL;
	*pos += (size_t)l;
	*len = (uint32_t)l;
	return s;
}

/* A pycode record's extension (put_pycode_ext()) at *@pos into @r. */
static int get_pycode(const uint8_t *p, size_t n, size_t *pos, struct fr_record *r)
{
	uint64_t line;

	r->pycode.code = ext_varint(p, n, pos);
	line = ext_varint(p, n, pos);
	r->pycode.firstlineno = (int32_t)((line >> 1) ^ -(line & 1));
	r->pycode.name = (const char *)ext_str(p, n, pos, &r->pycode.name_len);
	r->pycode.file = (const char *)ext_str(p, n, pos, &r->pycode.file_len);
	if (!r->pycode.name || !r->pycode.file || r->pycode.name_len > PYCODE_STR_MAX ||
	    r->pycode.file_len > PYCODE_STR_MAX)
		return -EBADMSG;
	return 0;
}

/* An offcpu extension's waker at *@pos into @k; -EBADMSG when it does
 * not add up.  Its frames are checked as they are read
 * (fr_record_frames()). */
static int get_waker(const uint8_t *p, size_t n, size_t *pos, struct fr_record_waker *k)
{
	uint64_t context = ext_varint(p, n, pos), pid, tid, nk, nu;
	uint32_t comm_len = 0;

	pid = ext_varint(p, n, pos);
	tid = ext_varint(p, n, pos);
	k->comm = (const char *)ext_str(p, n, pos, &comm_len);
	k->delay_ns = ext_varint(p, n, pos);
	nk = ext_varint(p, n, pos);
	nu = ext_varint(p, n, pos);
	k->stack.enc = ext_str(p, n, pos, &k->stack.enc_len);
	if (!k->comm || comm_len > FR_REC_COMM_MAX || !k->stack.enc || nk + nu > FR_SAMPLE_FRAMES_MAX ||
	    (context >> 1) == FR_WAKER_NONE)
		return -EBADMSG;
	/* a kind a newer writer knows: not known here */
	k->context = (context >> 1) < FR_WAKER_KINDS ? (uint8_t)(context >> 1) : FR_WAKER_IS_UNKNOWN;
	k->no_stack = context & 1;
	k->pid = (uint32_t)pid;
	k->tid = (uint32_t)(pid + (uint64_t)((tid >> 1) ^ -(tid & 1)));
	k->comm_len = (uint8_t)comm_len;
	k->stack.kernel_frames = (uint16_t)nk;
	k->stack.user_frames = (uint16_t)nu;
	return 0;
}

size_t fr_record_max_encoded_size(const struct fr_record *r)
{
	/* prefix, and room for three varints of any type without strings
	 * (an offcpu record's duration and syscall nr among them) */
	size_t n = 2 + 10 * 4 + 1 + FR_REC_COMM_MAX + 3 * 10 + EXT_MAX;

	if (r->type == FR_REC_EXEC)
		n += r->exec.filename_len + r->exec.args_len + 2 * 5;
	else if (r->type == FR_REC_CGROUP)
		n += r->cgroup.path_len + 5;
	else if (r->type == FR_REC_PROCESS)
		n += r->process.exe_len + r->process.args_len + 3 * 5;
	else if (r->type == FR_REC_OOM)
		n += r->oom.memcg_len + 5;
	else if (r->type == FR_REC_SIGNAL)
		n += r->signal.sender_comm_len + 5 + 3 * 10 + 3 * 5 +
		     (size_t)(r->stack.kernel_frames + r->stack.user_frames) * 10;
	else if (r->type == FR_REC_TCP)
		n += 2 * 16 + 8;
	else if (fr_record_type_has_stack(r->type))
		n += 3 * 5 + (size_t)(r->stack.kernel_frames + r->stack.user_frames) * 10 +
		     (r->type == FR_REC_OFFCPU && r->sched.waker.context ? EXT_WAKER_MAX : 0);
	else if (r->type == FR_REC_SWITCH)
		n += r->sw.next_comm_len + 3 * 5 + 5;
	else if (r->type == FR_REC_MARK)
		n += r->mark.text_len + 5;
	else if (r->type == FR_REC_METRICS)
		n += r->metrics.json_len + 5;
	else if (r->type == FR_REC_TRIGGER)
		n += r->trigger.rule_len + r->trigger.incident_len + 10 + 3 + 10;
	else if (r->type == FR_REC_MAPPING)
		n += 4 * 10 + r->mapping.path_len + r->mapping.build_id_len + 10;
	else if (r->type == FR_REC_SYMBOL)
		n += 2 * 10 + r->symbol.name_len + r->symbol.module_len + 10;
	else if (r->type == FR_REC_INLINE)
		n += 10 + r->inl.names_len + 5;
	else if (r->type == FR_REC_PYCODE)
		n += 5 + 10 + 5 + 2 * 5 + r->pycode.name_len + r->pycode.file_len;
	return n;
}

/* What every record starts with: its type and flags, then the fields of
 * its header (struct fr_record), time as the delta from the record
 * before. */
static _always_inline_ void put_prefix(struct writer *w, uint16_t type, uint8_t flags, uint64_t ts, uint64_t prev_ts,
				       uint32_t pid, uint32_t tid, uint64_t cgroup_id, const char *comm)
{
	uint8_t comm_len = fr_comm_len(comm);

	put_u8(w, S_HEAD, (uint8_t)type);
	put_u8(w, S_HEAD, flags);
	put_svarint(w, S_TS, (int64_t)(ts - prev_ts));
	put_varint(w, S_PID, pid);
	put_svarint(w, S_TID, (int64_t)tid - (int64_t)pid);
	put_varint(w, S_CGROUP, cgroup_id);
	put_u8(w, S_COMM, comm_len);
	put_bytes(w, S_COMM, comm, comm_len);
}

/* A switch record's own fields. */
static _always_inline_ void put_switch(struct writer *w, uint32_t prev_state, uint32_t next_pid, uint32_t next_tid,
				       const char *next_comm, uint8_t next_comm_len)
{
	put_varint(w, S_STATE, prev_state);
	put_varint(w, S_NEXT_PID, next_pid);
	put_svarint(w, S_NEXT_TID, (int64_t)next_tid - (int64_t)next_pid);
	put_str(w, S_NEXT_COMM, next_comm, next_comm_len);
}

static _always_inline_ int encode(struct fr_codec_state *st, const struct fr_record *r, struct writer *w)
{
	bool ext = has_ext(st, r);

	/* the extension is this writer's own: what the record says, not
	 * whether one read had it */
	put_prefix(w, r->type, (uint8_t)((r->flags & ~FR_REC_F_EXT) | (ext ? FR_REC_F_EXT : 0)), r->ts, st->prev_ts,
		   r->pid, r->tid, r->cgroup_id, r->comm);

	/* on the enum: a type this switch lacks does not build (-Wswitch-enum) */
	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC:
		put_varint(w, S_OTHER, r->exec.ppid);
		put_str(w, S_OTHER, r->exec.filename, r->exec.filename_len);
		put_str(w, S_OTHER, r->exec.args, r->exec.args_len);
		break;
	case FR_REC_EXIT:
		put_varint(w, S_OTHER, r->exit.status);
		break;
	case FR_REC_FORK:
		put_varint(w, S_NEXT_PID, r->fork.child_pid);
		break;
	case FR_REC_SYSCALL:
		put_varint(w, S_NR, r->syscall.nr);
		put_varint(w, S_DURATION, r->syscall.duration_ns);
		put_svarint(w, S_OTHER, r->syscall.ret);
		break;
	case FR_REC_OFFCPU:
		put_varint(w, S_DURATION, r->sched.duration_ns);
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL)
			put_svarint(w, S_NR, r->sched.syscall_nr);
		if ((st->incompat_flags & FR_CHUNK_INCOMPAT_OFFCPU_STACK) && put_frames(w, r) < 0)
			return -EINVAL;
		break;
	case FR_REC_RUNQ:
		put_varint(w, S_DURATION, r->sched.duration_ns);
		break;
	case FR_REC_BLOCK:
		put_varint(w, S_OTHER, r->block.dev);
		put_varint(w, S_OTHER, r->block.op);
		put_varint(w, S_OTHER, r->block.sector);
		put_varint(w, S_OTHER, r->block.bytes);
		put_svarint(w, S_OTHER, r->block.error);
		put_varint(w, S_DURATION, r->block.duration_ns);
		break;
	case FR_REC_OOM:
		put_varint(w, S_OTHER, r->oom.rss_kb);
		put_varint(w, S_OTHER, r->oom.memcg_id);
		put_str(w, S_OTHER, r->oom.memcg, r->oom.memcg_len);
		break;
	case FR_REC_SIGNAL:
		put_varint(w, S_OTHER, r->signal.sig);
		put_varint(w, S_OTHER, r->signal.sender_pid);
		put_svarint(w, S_OTHER, r->signal.code);
		put_svarint(w, S_OTHER, r->signal.result);
		put_str(w, S_OTHER, r->signal.sender_comm, r->signal.sender_comm_len);
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_SIGNAL_STACK) {
			put_svarint(w, S_TID, (int64_t)r->signal.sender_tid - (int64_t)r->signal.sender_pid);
			put_varint(w, S_OTHER, r->signal.stack);
			if (r->flags & FR_REC_F_FAULT_ADDR)
				put_varint(w, S_OTHER, r->signal.addr);
			if (put_frames(w, r) < 0)
				return -EINVAL;
		}
		break;
	case FR_REC_TCP:
		put_u8(w, S_OTHER, r->tcp.event);
		put_u8(w, S_OTHER, r->tcp.state);
		put_varint(w, S_OTHER, r->tcp.family);
		put_varint(w, S_OTHER, r->tcp.sport);
		put_varint(w, S_OTHER, r->tcp.dport);
		put_bytes(w, S_OTHER, r->tcp.saddr, r->tcp.family == 10 ? 16 : 4);
		put_bytes(w, S_OTHER, r->tcp.daddr, r->tcp.family == 10 ? 16 : 4);
		break;
	case FR_REC_SAMPLE:
		if (put_frames(w, r) < 0)
			return -EINVAL;
		break;
	case FR_REC_SWITCH:
		put_switch(w, r->sw.prev_state, r->sw.next_pid, r->sw.next_tid, r->sw.next_comm, r->sw.next_comm_len);
		break;
	case FR_REC_MARK:
		put_str(w, S_OTHER, r->mark.text, r->mark.text_len);
		break;
	case FR_REC_METRICS:
		put_str(w, S_OTHER, r->metrics.json, r->metrics.json_len);
		break;
	case FR_REC_TRIGGER:
		put_str(w, S_OTHER, r->trigger.rule, r->trigger.rule_len);
		put_str(w, S_OTHER, r->trigger.incident, r->trigger.incident_len);
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_TRIGGER_CAUSE) {
			put_varint(w, S_OTHER, r->trigger.cause_type);
			put_svarint(w, S_OTHER, r->trigger.cause_ago_ns);
		}
		break;
	case FR_REC_GAP:
		put_varint(w, S_OTHER, r->gap.lost);
		break;
	case FR_REC_CGROUP:
		put_str(w, S_OTHER, r->cgroup.path, r->cgroup.path_len);
		break;
	case FR_REC_PROCESS:
		put_varint(w, S_OTHER, r->process.ppid);
		put_str(w, S_OTHER, r->process.exe, r->process.exe_len);
		put_str(w, S_OTHER, r->process.args, r->process.args_len);
		break;
	case FR_REC_MAPPING:
		if (r->mapping.end < r->mapping.start || r->mapping.build_id_len > FR_BUILD_ID_MAX)
			return -EINVAL;
		put_varint(w, S_OTHER, r->mapping.start);
		put_varint(w, S_OTHER, r->mapping.end - r->mapping.start);
		put_varint(w, S_OTHER, r->mapping.offset);
		put_varint(w, S_OTHER, r->mapping.vaddr);
		put_str(w, S_OTHER, r->mapping.path, r->mapping.path_len);
		put_str(w, S_OTHER, (const char *)r->mapping.build_id, r->mapping.build_id_len);
		break;
	case FR_REC_SYMBOL:
		put_varint(w, S_OTHER, r->symbol.start);
		put_varint(w, S_OTHER, r->symbol.size);
		put_str(w, S_OTHER, r->symbol.name, r->symbol.name_len);
		put_str(w, S_OTHER, r->symbol.module, r->symbol.module_len);
		break;
	case FR_REC_INLINE:
		/* readers refuse what they would: writers cannot make it */
		if (r->inl.names_len == 0 || r->inl.names_len > FR_INLINE_NAMES_MAX)
			return -EINVAL;
		put_varint(w, S_OTHER, r->inl.addr);
		put_str(w, S_OTHER, r->inl.names, r->inl.names_len);
		break;
	case FR_REC_PYCODE:
		/* all in its extension: there is none without one */
		if (!ext)
			return -EINVAL;
		break;
	default: /* a number no type has */
		return -EINVAL;
	}
	if (ext && (r->type == FR_REC_PYCODE ? put_pycode_ext(w, r) : put_offcpu_ext(w, r)) < 0)
		return -EINVAL;
	if (w->overflow)
		return -ENOBUFS;
	st->prev_ts = r->ts;
	return 0;
}

int fr_record_encode(struct fr_codec_state *st, const struct fr_record *r, uint8_t *buf,
		     size_t cap, size_t len)
{
	struct writer w = { .row = { buf + len, buf + cap } };
	int k = encode(st, r, &w);

	return k < 0 ? k : (int)(w.row.p - buf);
}

int fr_record_encode_streams(struct fr_codec_state *st, const struct fr_record *r,
			     struct fr_record_streams *out, size_t room)
{
	struct writer w = { .out = out, .columns = true };
	uint64_t prev_ts = st->prev_ts;
	size_t lens[FR_REC_STREAMS];
	int k;

	memcpy(lens, out->len, sizeof(lens));
	k = encode(st, r, &w);
	if (k == 0 && w.added > room)
		k = -ENOBUFS;
	if (k < 0) {
		/* as if nothing was written */
		memcpy(out->len, lens, sizeof(lens));
		st->prev_ts = prev_ts;
		return k;
	}
	return (int)w.added;
}

/* The most a switch record writes to one stream: a comm, its length
 * byte first (a varint takes 10 at most). */
#define SWITCH_STREAM_MAX (1 + FR_REC_COMM_MAX)
_Static_assert(SWITCH_STREAM_MAX >= 10, "room for a varint");

/* The records of @e[0..n) into @s, from time *@prev_ts (set to the
 * last's); @roomy: every stream of @s has room for them all.  Returns the
 * bytes written, or -ENOBUFS (some may be). */
static _always_inline_ long put_switch_events(struct fr_record_streams *s, const struct fr_event_switch *e, size_t n,
					      uint64_t *prev_ts, bool roomy)
{
	struct writer w = { .out = s, .columns = true, .roomy = roomy };
	uint64_t prev = *prev_ts;

	for (size_t i = 0; i < n; i++) {
		const struct fr_event_switch *x = &e[i];

		/* as record_event() in the daemon makes the record: no flags */
		put_prefix(&w, FR_REC_SWITCH, 0, x->hdr.ts, prev, x->hdr.pid, x->hdr.tid, x->hdr.cgroup_id,
			   x->hdr.comm);
		put_switch(&w, x->prev_state, x->next_pid, x->next_tid, x->next_comm, fr_comm_len(x->next_comm));
		prev = x->hdr.ts;
	}
	*prev_ts = prev;
	return w.overflow ? -ENOBUFS : (long)w.added;
}

int fr_record_encode_switch_events(struct fr_codec_state *st, const struct fr_event_switch *e, size_t n,
				   struct fr_record_streams *out, size_t room)
{
	/* the streams' ends in a copy of its own, which no byte written
	 * can alias: they stay in registers across the batch */
	struct fr_record_streams s = *out;
	uint64_t prev_ts = st->prev_ts;
	bool roomy = n <= SIZE_MAX / SWITCH_STREAM_MAX;
	long k;

	for (unsigned i = 0; i < FR_REC_STREAMS && roomy; i++)
		roomy = s.cap[i] - s.len[i] >= n * SWITCH_STREAM_MAX;
	/* the common case, with every write's test gone */
	k = roomy ? put_switch_events(&s, e, n, &prev_ts, true) : put_switch_events(&s, e, n, &prev_ts, false);
	if (k < 0 || (size_t)k > room)
		return -ENOBUFS; /* nothing written: out's lengths unchanged */
	memcpy(out->len, s.len, sizeof(s.len));
	st->prev_ts = prev_ts;
	return (int)k;
}

/* Reads come from the cursor of their stream (rows have one, c[0], for
 * every stream); from columns, the bytes of each field are copied to the
 * tee as they are read, rows out of columns, and what a record points to
 * is the copy.  A reader is a local of the function that decodes, its
 * cursors copied in and out once for a batch of records: were they
 * reached through pointers, every byte written to the tee or the record
 * (stores that may alias anything, the more so with -fno-strict-aliasing)
 * would make the compiler load them from memory again and store them
 * back; that took as long as the decoding itself. */
struct reader {
	struct fr_byte_cursor c[FR_REC_STREAMS];
	bool columns; /* a constant where decode() is inlined */
	bool keep_rows; /* columns: the tee is written (also a constant) */
	bool bad;
	uint8_t *tee, *tee_end;
};

static _always_inline_ struct fr_byte_cursor *cur(struct reader *r, enum stream sid)
{
	return &r->c[r->columns ? sid : 0];
}

/* Consumes @n bytes at @c (which has them); returns where they are now:
 * copied to the tee from columns.  Every byte read from the columns is
 * written once to the tee, and the rows are as long as the columns
 * (fr_record_iter_init()): it cannot overflow; checked all the same. */
static _always_inline_ const uint8_t *take(struct reader *r, struct fr_byte_cursor *c, size_t n)
{
	const uint8_t *p = c->p;

	c->p += n;
	if (!r->columns || !r->keep_rows)
		return p;
	if (n > (size_t)(r->tee_end - r->tee)) {
		r->bad = true;
		return p;
	}
	uint8_t *to = r->tee;
	if (n == 1)
		*to = *p;
	else
		memcpy(to, p, n);
	r->tee += n;
	return to;
}

static _always_inline_ uint8_t get_u8(struct reader *r, enum stream sid)
{
	struct fr_byte_cursor *c = cur(r, sid);

	if (c->p >= c->end) {
		r->bad = true;
		return 0;
	}
	return *take(r, c, 1);
}

/* A varint of more than one byte at @c (which has one byte at least):
 * its value and length, or 0 and a length of 0 when it is malformed. */
static uint64_t varint_long(const struct fr_byte_cursor *c, size_t *len)
{
	size_t avail = (size_t)(c->end - c->p);
	uint64_t v = 0;

	for (size_t i = 0; i < 10 && i < avail; i++) {
		v |= (uint64_t)(c->p[i] & 0x7f) << (7 * i);
		if (!(c->p[i] & 0x80)) {
			*len = i + 1;
			return v;
		}
	}
	*len = 0; /* cut short, or more than 10 bytes */
	return 0;
}

/* Most values (deltas, small numbers, lengths) take one byte. */
static _always_inline_ uint64_t get_varint(struct reader *r, enum stream sid)
{
	struct fr_byte_cursor *c = cur(r, sid);
	size_t len = 1;
	uint64_t v;

	if (c->p >= c->end) {
		r->bad = true;
		return 0;
	}
	v = *c->p;
	if (v >= 0x80) {
		v = varint_long(c, &len);
		if (!len) {
			r->bad = true;
			return 0;
		}
	}
	take(r, c, len);
	return v;
}

static _always_inline_ int64_t get_svarint(struct reader *r, enum stream sid)
{
	uint64_t v = get_varint(r, sid);
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* @n bytes where they are, or NULL (bad) when the stream is shorter. */
static _always_inline_ const uint8_t *get_bytes(struct reader *r, enum stream sid, size_t n)
{
	struct fr_byte_cursor *c = cur(r, sid);

	if (r->bad || n > (size_t)(c->end - c->p)) {
		r->bad = true;
		return NULL;
	}
	return take(r, c, n);
}

static _always_inline_ const char *get_str(struct reader *r, enum stream sid, uint32_t *n)
{
	uint64_t l = get_varint(r, sid);
	const uint8_t *p = l <= UINT32_MAX ? get_bytes(r, sid, (size_t)l) : NULL;

	if (!p) {
		r->bad = true;
		*n = 0;
		return "";
	}
	*n = (uint32_t)l;
	return (const char *)p;
}

static void get_frames(struct reader *r, struct fr_record *rec)
{
	uint64_t kf = get_varint(r, S_FRAMES), uf = get_varint(r, S_FRAMES);

	if (kf + uf > FR_SAMPLE_FRAMES_MAX) {
		r->bad = true;
		return;
	}
	rec->stack.kernel_frames = (uint16_t)kf;
	rec->stack.user_frames = (uint16_t)uf;
	rec->stack.enc = (const uint8_t *)get_str(r, S_FRAMES, &rec->stack.enc_len);
}

/* The comm: a length byte, then at most FR_REC_COMM_MAX bytes. */
static _always_inline_ void get_comm(struct reader *r, struct fr_record *rec)
{
	struct fr_byte_cursor *c;
	size_t avail;

	rec->comm_len = get_u8(r, S_COMM);
	c = cur(r, S_COMM);
	avail = (size_t)(c->end - c->p);
	if (r->bad || rec->comm_len > FR_REC_COMM_MAX || rec->comm_len > avail) {
		r->bad = true;
		return;
	}
	/* all the room of comm in one move where the input has it */
	if (avail >= FR_REC_COMM_MAX)
		memcpy(rec->comm, c->p, FR_REC_COMM_MAX);
	else
		memcpy(rec->comm, c->p, rec->comm_len);
	rec->comm[rec->comm_len] = 0;
	take(r, c, rec->comm_len);
}

/* 0, or 1 for a record of a type this reader does not know (skipped:
 * @rec is not one), or -EBADMSG. */
static _always_inline_ int decode(struct fr_codec_state *st, struct reader *r, struct fr_record *rec)
{
	bool unknown = false;
	uint64_t v;

	fr_record_clear(rec);
	rec->type = get_u8(r, S_HEAD);
	rec->flags = get_u8(r, S_HEAD);
	rec->ts = st->prev_ts + (uint64_t)get_svarint(r, S_TS);
	v = get_varint(r, S_PID);
	rec->pid = (uint32_t)v;
	if (v > UINT32_MAX)
		r->bad = true;
	/* unsigned arithmetic: a hostile delta must wrap, not overflow */
	rec->tid = (uint32_t)((uint64_t)rec->pid + (uint64_t)get_svarint(r, S_TID));
	rec->cgroup_id = get_varint(r, S_CGROUP);
	get_comm(r, rec);
	if (r->bad)
		return -EBADMSG;

	switch ((enum fr_record_type)rec->type) {
	case FR_REC_EXEC:
		rec->exec.ppid = (uint32_t)get_varint(r, S_OTHER);
		rec->exec.filename = get_str(r, S_OTHER, &rec->exec.filename_len);
		rec->exec.args = get_str(r, S_OTHER, &rec->exec.args_len);
		break;
	case FR_REC_EXIT:
		rec->exit.status = (uint32_t)get_varint(r, S_OTHER);
		break;
	case FR_REC_FORK:
		rec->fork.child_pid = (uint32_t)get_varint(r, S_NEXT_PID);
		break;
	case FR_REC_SYSCALL:
		rec->syscall.nr = (uint32_t)get_varint(r, S_NR);
		rec->syscall.duration_ns = get_varint(r, S_DURATION);
		rec->syscall.ret = get_svarint(r, S_OTHER);
		break;
	case FR_REC_OFFCPU:
		rec->sched.duration_ns = get_varint(r, S_DURATION);
		rec->sched.syscall_nr = -1; /* older chunks do not say */
		rec->sched.state = 0;      /* nor (its extension) those before issue 45 */
		rec->sched.kthread = false;
		rec->sched.waker = (struct fr_record_waker){};
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL) {
			int64_t nr = get_svarint(r, S_NR);
			if (nr < -1 || nr > INT32_MAX)
				r->bad = true;
			rec->sched.syscall_nr = (int32_t)nr;
		}
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_OFFCPU_STACK)
			get_frames(r, rec);
		break;
	case FR_REC_RUNQ:
		rec->sched.duration_ns = get_varint(r, S_DURATION);
		rec->sched.syscall_nr = -1;
		rec->sched.state = 0;
		rec->sched.kthread = false;
		rec->sched.waker = (struct fr_record_waker){};
		break;
	case FR_REC_BLOCK:
		rec->block.dev = (uint32_t)get_varint(r, S_OTHER);
		rec->block.op = (uint32_t)get_varint(r, S_OTHER);
		rec->block.sector = get_varint(r, S_OTHER);
		rec->block.bytes = (uint32_t)get_varint(r, S_OTHER);
		rec->block.error = (int32_t)get_svarint(r, S_OTHER);
		rec->block.duration_ns = get_varint(r, S_DURATION);
		break;
	case FR_REC_OOM:
		rec->oom.rss_kb = get_varint(r, S_OTHER);
		rec->oom.memcg_id = get_varint(r, S_OTHER);
		rec->oom.memcg = get_str(r, S_OTHER, &rec->oom.memcg_len);
		break;
	case FR_REC_SIGNAL:
		rec->signal.sig = (uint32_t)get_varint(r, S_OTHER);
		rec->signal.sender_pid = (uint32_t)get_varint(r, S_OTHER);
		rec->signal.code = (int32_t)get_svarint(r, S_OTHER);
		rec->signal.result = (int32_t)get_svarint(r, S_OTHER);
		rec->signal.sender_comm = get_str(r, S_OTHER, &rec->signal.sender_comm_len);
		rec->signal.sender_tid = rec->signal.sender_pid;
		rec->signal.stack = FR_SIGNAL_STACK_NONE; /* older chunks do not say */
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_SIGNAL_STACK) {
			uint64_t stack;
			rec->signal.sender_tid = (uint32_t)((uint64_t)rec->signal.sender_pid +
							    (uint64_t)get_svarint(r, S_TID));
			stack = get_varint(r, S_OTHER);
			if (stack > UINT8_MAX)
				r->bad = true;
			rec->signal.stack = (uint8_t)stack;
			if (rec->flags & FR_REC_F_FAULT_ADDR)
				rec->signal.addr = get_varint(r, S_OTHER);
			get_frames(r, rec);
		}
		break;
	case FR_REC_TCP: {
		const uint8_t *a;
		size_t alen;
		rec->tcp.event = get_u8(r, S_OTHER);
		rec->tcp.state = get_u8(r, S_OTHER);
		rec->tcp.family = (uint16_t)get_varint(r, S_OTHER);
		rec->tcp.sport = (uint16_t)get_varint(r, S_OTHER);
		rec->tcp.dport = (uint16_t)get_varint(r, S_OTHER);
		alen = rec->tcp.family == 10 ? 16 : 4;
		a = get_bytes(r, S_OTHER, alen);
		if (a)
			memcpy(rec->tcp.saddr, a, alen);
		a = get_bytes(r, S_OTHER, alen);
		if (a)
			memcpy(rec->tcp.daddr, a, alen);
		break;
	}
	case FR_REC_SAMPLE:
		get_frames(r, rec);
		break;
	case FR_REC_SWITCH:
		rec->sw.prev_state = (uint32_t)get_varint(r, S_STATE);
		rec->sw.next_pid = (uint32_t)get_varint(r, S_NEXT_PID);
		rec->sw.next_tid = (uint32_t)((uint64_t)rec->sw.next_pid + (uint64_t)get_svarint(r, S_NEXT_TID));
		rec->sw.next_comm = get_str(r, S_NEXT_COMM, &rec->sw.next_comm_len);
		break;
	case FR_REC_MARK:
		rec->mark.text = get_str(r, S_OTHER, &rec->mark.text_len);
		break;
	case FR_REC_METRICS:
		rec->metrics.json = get_str(r, S_OTHER, &rec->metrics.json_len);
		break;
	case FR_REC_TRIGGER:
		rec->trigger.rule = get_str(r, S_OTHER, &rec->trigger.rule_len);
		rec->trigger.incident = get_str(r, S_OTHER, &rec->trigger.incident_len);
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_TRIGGER_CAUSE) {
			uint64_t type = get_varint(r, S_OTHER);
			if (type > UINT16_MAX)
				r->bad = true;
			rec->trigger.cause_type = (uint16_t)type;
			/* an age, not a time: a record decoded alone has its
			 * ts set by the caller (time is delta-coded) */
			rec->trigger.cause_ago_ns = get_svarint(r, S_OTHER);
		}
		break;
	case FR_REC_GAP:
		rec->gap.lost = get_varint(r, S_OTHER);
		break;
	case FR_REC_CGROUP:
		rec->cgroup.path = get_str(r, S_OTHER, &rec->cgroup.path_len);
		break;
	case FR_REC_PROCESS:
		rec->process.ppid = (uint32_t)get_varint(r, S_OTHER);
		rec->process.exe = get_str(r, S_OTHER, &rec->process.exe_len);
		rec->process.args = get_str(r, S_OTHER, &rec->process.args_len);
		break;
	case FR_REC_MAPPING:
		rec->mapping.start = get_varint(r, S_OTHER);
		rec->mapping.end = rec->mapping.start + get_varint(r, S_OTHER);
		if (rec->mapping.end < rec->mapping.start)
			r->bad = true;
		rec->mapping.offset = get_varint(r, S_OTHER);
		rec->mapping.vaddr = get_varint(r, S_OTHER);
		rec->mapping.path = get_str(r, S_OTHER, &rec->mapping.path_len);
		rec->mapping.build_id = (const uint8_t *)get_str(r, S_OTHER, &rec->mapping.build_id_len);
		if (rec->mapping.build_id_len > FR_BUILD_ID_MAX)
			r->bad = true;
		break;
	case FR_REC_SYMBOL:
		rec->symbol.start = get_varint(r, S_OTHER);
		rec->symbol.size = get_varint(r, S_OTHER);
		if (rec->symbol.start + rec->symbol.size < rec->symbol.start)
			r->bad = true;
		rec->symbol.name = get_str(r, S_OTHER, &rec->symbol.name_len);
		rec->symbol.module = get_str(r, S_OTHER, &rec->symbol.module_len);
		break;
	case FR_REC_INLINE:
		rec->inl.addr = get_varint(r, S_OTHER);
		rec->inl.names = get_str(r, S_OTHER, &rec->inl.names_len);
		if (rec->inl.names_len == 0 || rec->inl.names_len > FR_INLINE_NAMES_MAX)
			r->bad = true;
		break;
	case FR_REC_PYCODE:
		/* its fields are its extension's */
		if (!(rec->flags & FR_REC_F_EXT) || !(st->incompat_flags & FR_CHUNK_INCOMPAT_RECORD_EXT))
			r->bad = true;
		break;
	default:
		/* a newer writer's type: all it has is its extension */
		if (!(st->incompat_flags & FR_CHUNK_INCOMPAT_RECORD_EXT))
			return -EBADMSG;
		unknown = true;
		break;
	}
	if ((rec->flags & FR_REC_F_EXT) && (st->incompat_flags & FR_CHUNK_INCOMPAT_RECORD_EXT)) {
		/* the fields this reader knows, then what a newer writer
		 * added: skipped, the bytes checked */
		const uint8_t *x = NULL;
		size_t pos = 0;
		v = get_varint(r, S_OTHER);
		if (v > FR_CHUNK_RAW_MAX)
			r->bad = true;
		else
			x = get_bytes(r, S_OTHER, (size_t)v);
		if (x && rec->type == FR_REC_OFFCPU) {
			uint64_t flags;
			rec->sched.state = (uint32_t)ext_varint(x, (size_t)v, &pos);
			flags = ext_varint(x, (size_t)v, &pos);
			rec->sched.kthread = flags & EXT_OFFCPU_KTHREAD;
			if ((flags & EXT_OFFCPU_WAKER) && get_waker(x, (size_t)v, &pos, &rec->sched.waker) < 0)
				r->bad = true;
		} else if (x && rec->type == FR_REC_PYCODE && get_pycode(x, (size_t)v, &pos, rec) < 0) {
			r->bad = true;
		}
		rec->flags &= (uint16_t)~FR_REC_F_EXT;
	}
	if (r->bad)
		return -EBADMSG;
	st->prev_ts = rec->ts;
	if (unknown) {
		st->unknown++;
		return 1;
	}
	return 0;
}

/* Decodes the record at @c, rows; advances @c past it when it decodes. */
static int decode_row(struct fr_codec_state *st, struct fr_byte_cursor *c, struct fr_record *out)
{
	struct reader r;
	int k;

	r.c[0] = *c;
	r.columns = false;
	r.keep_rows = false;
	r.bad = false;
	r.tee = r.tee_end = NULL;
	k = decode(st, &r, out);
	if (k >= 0)
		*c = r.c[0];
	return k;
}

int fr_record_decode(struct fr_codec_state *st, const uint8_t *buf, size_t len, size_t *pos,
		     struct fr_record *out)
{
	struct fr_byte_cursor c;
	int k;

	if (*pos > len)
		return -EBADMSG;
	/* out is filled in place: the caller's record is scratch until
	 * this returns 0 */
	c = (struct fr_byte_cursor){ buf + *pos, buf + len };
	k = decode_row(st, &c, out);
	if (k >= 0)
		*pos = (size_t)(c.p - buf);
	return k;
}

void fr_record_streams_table(const struct fr_record_streams *s, uint8_t table[FR_REC_STREAM_TABLE])
{
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		uint32_t le = htole32((uint32_t)s->len[i]);
		memcpy(table + 4 * i, &le, 4);
	}
}

int fr_record_iter_init(struct fr_record_iter *it, uint32_t incompat_flags, const uint8_t *content,
			size_t content_len, uint8_t *rows, size_t rows_len)
{
	uint64_t at = FR_REC_STREAM_TABLE;

	*it = (struct fr_record_iter){ .st.incompat_flags = incompat_flags };
	it->rows = (struct fr_byte_sink){ .buf = rows, .cap = rows_len };
	if (!(incompat_flags & FR_CHUNK_INCOMPAT_STREAMS)) {
		if (content != rows || content_len != rows_len)
			return -EINVAL;
		it->cur[0] = (struct fr_byte_cursor){ rows, rows + rows_len };
		return 0;
	}
	if (content_len < FR_REC_STREAM_TABLE)
		return -EBADMSG;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		uint32_t le;
		memcpy(&le, content + 4 * i, 4);
		if (le32toh(le) > content_len - at)
			return -EBADMSG;
		it->cur[i] = (struct fr_byte_cursor){ content + at, content + at + le32toh(le) };
		at += le32toh(le);
	}
	/* the rows take exactly the bytes of the columns: the tee cannot
	 * run out of room */
	if (at != content_len || at - FR_REC_STREAM_TABLE != rows_len)
		return -EBADMSG;
	it->columns = true;
	return 0;
}

/* Up to @n records from columns, in and out of a local reader once for
 * all (struct reader says why); @keep_rows, a constant where this is
 * inlined, says whether the rows are written. */
static _always_inline_ size_t read_columns(struct fr_record_iter *it, void *out, size_t stride, size_t *row_pos,
					    size_t n, bool keep_rows, bool *bad)
{
	struct reader r;
	size_t i = 0;
	int k = 0;

	for (unsigned s = 0; s < FR_REC_STREAMS; s++)
		r.c[s] = it->cur[s];
	r.columns = true;
	r.keep_rows = keep_rows;
	r.bad = false;
	r.tee = keep_rows ? it->rows.buf + it->rows.len : NULL;
	r.tee_end = keep_rows ? it->rows.buf + it->rows.cap : NULL;
	while (i < n && r.c[S_HEAD].p < r.c[S_HEAD].end) {
		row_pos[i] = keep_rows ? (size_t)(r.tee - it->rows.buf) : 0;
		k = decode(&it->st, &r, (struct fr_record *)((uint8_t *)out + i * stride));
		if (k < 0)
			break;
		i += k == 0; /* a type not known is skipped (counted) */
	}
	*bad = k < 0;
	for (unsigned s = 0; s < FR_REC_STREAMS; s++)
		it->cur[s].p = r.c[s].p;
	if (keep_rows)
		it->rows.len = (size_t)(r.tee - it->rows.buf);
	return i;
}

size_t fr_record_iter_read(struct fr_record_iter *it, void *out, size_t stride, size_t *row_pos, size_t n)
{
	size_t i = 0;
	bool bad = false;

	if (it->failed)
		return 0;
	if (!it->columns) {
		while (i < n && it->cur[0].p < it->cur[0].end) {
			row_pos[i] = (size_t)(it->cur[0].p - it->rows.buf);
			int k = decode_row(&it->st, &it->cur[0], (struct fr_record *)((uint8_t *)out + i * stride));
			if ((bad = k < 0))
				break;
			i += k == 0;
		}
	} else if (it->rows.buf)
		i = read_columns(it, out, stride, row_pos, n, true, &bad);
	else
		i = read_columns(it, out, stride, row_pos, n, false, &bad);
	/* a record that does not decode leaves the cursors where it
	 * failed: the iterator is done for.  Fewer records than asked for
	 * at the end of the chunk (there were types it skipped) is the
	 * end, when every stream is read to its end. */
	if (bad || (i < n && !fr_record_iter_done(it)))
		it->failed = true;
	return i;
}

int fr_record_iter_next(struct fr_record_iter *it, struct fr_record *out, size_t *row_pos)
{
	return fr_record_iter_read(it, out, sizeof(*out), row_pos, 1) == 1 ? 0 : -EBADMSG;
}

bool fr_record_iter_done(const struct fr_record_iter *it)
{
	if (it->failed)
		return false;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++)
		if (it->cur[i].p != it->cur[i].end)
			return false;
	return !it->columns || !it->rows.buf || it->rows.len == it->rows.cap;
}

void fr_record_waker_view(const struct fr_record *r, struct fr_record *out)
{
	const struct fr_record_waker *k = &r->sched.waker;

	fr_record_clear(out);
	out->type = FR_REC_OFFCPU;
	out->cpu = r->cpu;
	out->ts = r->ts + k->delay_ns;
	out->pid = k->pid;
	out->tid = k->tid;
	out->comm_len = k->comm_len;
	if (k->comm_len)
		memcpy(out->comm, k->comm, k->comm_len);
	out->stack.kernel_frames = k->stack.kernel_frames;
	out->stack.user_frames = k->stack.user_frames;
	out->stack.kframes = k->stack.kframes;
	out->stack.uframes = k->stack.uframes;
	out->stack.enc = k->stack.enc;
	out->stack.enc_len = k->stack.enc_len;
}

int fr_record_frames(const struct fr_record *rec, uint64_t *out, size_t max)
{
	size_t n = (size_t)rec->stack.kernel_frames + rec->stack.user_frames;
	struct reader r = {};
	uint64_t prev = 0;

	if (!fr_record_type_has_stack(rec->type))
		return 0;
	/* an offcpu record of a chunk from before stacks has none at all */
	if (!rec->stack.enc)
		return n == 0 ? 0 : -EBADMSG;
	if (n > max)
		return -EBADMSG;
	r.c[0].p = rec->stack.enc;
	r.c[0].end = rec->stack.enc + rec->stack.enc_len;
	for (size_t i = 0; i < n; i++) {
		prev += (uint64_t)get_svarint(&r, S_FRAMES);
		if (r.bad)
			return -EBADMSG;
		out[i] = prev;
	}
	return r.c[0].p == r.c[0].end ? (int)n : -EBADMSG;
}
