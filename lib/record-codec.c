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
 *   incompatible flag that announces them (FR_CHUNK_INCOMPAT_*).
 *
 * Varints are LEB128; svarints zigzag-encoded.  Small numbers dominate
 * (deltas, pids), so a typical record is 20-40 bytes before zstd.  The
 * decoder checks every length against the buffer: input is untrusted.
 */
#include <errno.h>
#include <string.h>

#include "record.h"
#include "store-format.h"

static const char *const type_names[] = {
	[FR_REC_EXEC] = "exec",
	[FR_REC_EXIT] = "exit",
	[FR_REC_FORK] = "fork",
	[FR_REC_SYSCALL] = "syscall",
	[FR_REC_OFFCPU] = "offcpu",
	[FR_REC_RUNQ] = "runq",
	[FR_REC_BLOCK] = "block",
	[FR_REC_OOM] = "oom",
	[FR_REC_SIGNAL] = "signal",
	[FR_REC_TCP] = "tcp",
	[FR_REC_SWITCH] = "switch",
	[FR_REC_SAMPLE] = "sample",
	[FR_REC_GAP] = "gap",
	[FR_REC_CGROUP] = "cgroup",
	[FR_REC_PROCESS] = "process",
	[FR_REC_MARK] = "mark",
	[FR_REC_METRICS] = "metrics",
	[FR_REC_TRIGGER] = "trigger",
	[FR_REC_MAPPING] = "mapping",
	[FR_REC_SYMBOL] = "symbol",
};

const char *fr_record_type_name(uint16_t type)
{
	if (type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type])
		return type_names[type];
	return "unknown";
}

int fr_record_type_from_name(const char *name)
{
	for (unsigned i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i] && strcmp(type_names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

struct writer {
	uint8_t *buf;
	size_t cap, len;
	int overflow;
};

static void put_u8(struct writer *w, uint8_t v)
{
	if (w->len >= w->cap) {
		w->overflow = 1;
		return;
	}
	w->buf[w->len++] = v;
}

static void put_varint(struct writer *w, uint64_t v)
{
	while (v >= 0x80) {
		put_u8(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_u8(w, (uint8_t)v);
}

static void put_svarint(struct writer *w, int64_t v)
{
	put_varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_bytes(struct writer *w, const void *p, size_t n)
{
	if (n > w->cap - w->len) {
		w->overflow = 1;
		return;
	}
	if (n)
		memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_str(struct writer *w, const char *p, uint32_t n)
{
	put_varint(w, n);
	put_bytes(w, p, n);
}

size_t fr_record_max_encoded_size(const struct fr_record *r)
{
	/* prefix, and room for three varints of any type without strings
	 * (an offcpu record's duration and syscall nr among them) */
	size_t n = 2 + 10 * 4 + 1 + FR_REC_COMM_MAX + 3 * 10;

	if (r->type == FR_REC_EXEC)
		n += r->exec.filename_len + r->exec.args_len + 2 * 5;
	else if (r->type == FR_REC_CGROUP)
		n += r->cgroup.path_len + 5;
	else if (r->type == FR_REC_PROCESS)
		n += r->process.exe_len + r->process.args_len + 3 * 5;
	else if (r->type == FR_REC_OOM)
		n += r->oom.memcg_len + 5;
	else if (r->type == FR_REC_SIGNAL)
		n += r->signal.sender_comm_len + 5;
	else if (r->type == FR_REC_TCP)
		n += 2 * 16 + 8;
	else if (r->type == FR_REC_SAMPLE)
		n += 3 * 5 + (size_t)(r->sample.kernel_frames + r->sample.user_frames) * 10;
	else if (r->type == FR_REC_SWITCH)
		n += r->sw.next_comm_len + 3 * 5 + 5;
	else if (r->type == FR_REC_MARK)
		n += r->mark.text_len + 5;
	else if (r->type == FR_REC_METRICS)
		n += r->metrics.json_len + 5;
	else if (r->type == FR_REC_TRIGGER)
		n += r->trigger.rule_len + r->trigger.incident_len + 10;
	else if (r->type == FR_REC_MAPPING)
		n += 4 * 10 + r->mapping.path_len + r->mapping.build_id_len + 10;
	else if (r->type == FR_REC_SYMBOL)
		n += 2 * 10 + r->symbol.name_len + r->symbol.module_len + 10;
	return n;
}

int fr_record_encode(struct fr_codec_state *st, const struct fr_record *r, uint8_t *buf,
		     size_t cap, size_t len)
{
	struct writer w = { .buf = buf, .cap = cap, .len = len };
	uint8_t comm_len = fr_comm_len(r->comm);

	put_u8(&w, (uint8_t)r->type);
	put_u8(&w, (uint8_t)r->flags);
	put_svarint(&w, (int64_t)(r->ts - st->prev_ts));
	put_varint(&w, r->pid);
	put_svarint(&w, (int64_t)r->tid - (int64_t)r->pid);
	put_varint(&w, r->cgroup_id);
	put_u8(&w, comm_len);
	put_bytes(&w, r->comm, comm_len);

	switch (r->type) {
	case FR_REC_EXEC:
		put_varint(&w, r->exec.ppid);
		put_str(&w, r->exec.filename, r->exec.filename_len);
		put_str(&w, r->exec.args, r->exec.args_len);
		break;
	case FR_REC_EXIT:
		put_varint(&w, r->exit.status);
		break;
	case FR_REC_FORK:
		put_varint(&w, r->fork.child_pid);
		break;
	case FR_REC_SYSCALL:
		put_varint(&w, r->syscall.nr);
		put_varint(&w, r->syscall.duration_ns);
		put_svarint(&w, r->syscall.ret);
		break;
	case FR_REC_OFFCPU:
		put_varint(&w, r->sched.duration_ns);
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL)
			put_svarint(&w, r->sched.syscall_nr);
		break;
	case FR_REC_RUNQ:
		put_varint(&w, r->sched.duration_ns);
		break;
	case FR_REC_BLOCK:
		put_varint(&w, r->block.dev);
		put_varint(&w, r->block.op);
		put_varint(&w, r->block.sector);
		put_varint(&w, r->block.bytes);
		put_svarint(&w, r->block.error);
		put_varint(&w, r->block.duration_ns);
		break;
	case FR_REC_OOM:
		put_varint(&w, r->oom.rss_kb);
		put_varint(&w, r->oom.memcg_id);
		put_str(&w, r->oom.memcg, r->oom.memcg_len);
		break;
	case FR_REC_SIGNAL:
		put_varint(&w, r->signal.sig);
		put_varint(&w, r->signal.sender_pid);
		put_svarint(&w, r->signal.code);
		put_svarint(&w, r->signal.result);
		put_str(&w, r->signal.sender_comm, r->signal.sender_comm_len);
		break;
	case FR_REC_TCP:
		put_u8(&w, r->tcp.event);
		put_u8(&w, r->tcp.state);
		put_varint(&w, r->tcp.family);
		put_varint(&w, r->tcp.sport);
		put_varint(&w, r->tcp.dport);
		put_bytes(&w, r->tcp.saddr, r->tcp.family == 10 ? 16 : 4);
		put_bytes(&w, r->tcp.daddr, r->tcp.family == 10 ? 16 : 4);
		break;
	case FR_REC_SAMPLE: {
		/* frames as zigzag deltas from the previous frame: addresses of
		 * one stack are close, so most take 2-4 bytes, not 9 */
		uint8_t blob[FR_SAMPLE_FRAMES_MAX * 10];
		struct writer b = { .buf = blob, .cap = sizeof(blob) };
		uint64_t prev = 0;
		if (r->sample.kernel_frames + r->sample.user_frames > FR_SAMPLE_FRAMES_MAX)
			return -EINVAL;
		for (unsigned i = 0; i < r->sample.kernel_frames + r->sample.user_frames; i++) {
			uint64_t a = i < r->sample.kernel_frames ? r->sample.kframes[i]
								 : r->sample.uframes[i - r->sample.kernel_frames];
			put_svarint(&b, (int64_t)(a - prev));
			prev = a;
		}
		put_varint(&w, r->sample.kernel_frames);
		put_varint(&w, r->sample.user_frames);
		put_str(&w, (const char *)blob, (uint32_t)b.len);
		break;
	}
	case FR_REC_SWITCH:
		put_varint(&w, r->sw.prev_state);
		put_varint(&w, r->sw.next_pid);
		put_svarint(&w, (int64_t)r->sw.next_tid - (int64_t)r->sw.next_pid);
		put_str(&w, r->sw.next_comm, r->sw.next_comm_len);
		break;
	case FR_REC_MARK:
		put_str(&w, r->mark.text, r->mark.text_len);
		break;
	case FR_REC_METRICS:
		put_str(&w, r->metrics.json, r->metrics.json_len);
		break;
	case FR_REC_TRIGGER:
		put_str(&w, r->trigger.rule, r->trigger.rule_len);
		put_str(&w, r->trigger.incident, r->trigger.incident_len);
		break;
	case FR_REC_GAP:
		put_varint(&w, r->gap.lost);
		break;
	case FR_REC_CGROUP:
		put_str(&w, r->cgroup.path, r->cgroup.path_len);
		break;
	case FR_REC_PROCESS:
		put_varint(&w, r->process.ppid);
		put_str(&w, r->process.exe, r->process.exe_len);
		put_str(&w, r->process.args, r->process.args_len);
		break;
	case FR_REC_MAPPING:
		if (r->mapping.end < r->mapping.start || r->mapping.build_id_len > FR_BUILD_ID_MAX)
			return -EINVAL;
		put_varint(&w, r->mapping.start);
		put_varint(&w, r->mapping.end - r->mapping.start);
		put_varint(&w, r->mapping.offset);
		put_varint(&w, r->mapping.vaddr);
		put_str(&w, r->mapping.path, r->mapping.path_len);
		put_str(&w, (const char *)r->mapping.build_id, r->mapping.build_id_len);
		break;
	case FR_REC_SYMBOL:
		put_varint(&w, r->symbol.start);
		put_varint(&w, r->symbol.size);
		put_str(&w, r->symbol.name, r->symbol.name_len);
		put_str(&w, r->symbol.module, r->symbol.module_len);
		break;
	default:
		return -EINVAL;
	}
	if (w.overflow)
		return -ENOBUFS;
	st->prev_ts = r->ts;
	return (int)w.len;
}

struct reader {
	const uint8_t *buf;
	size_t len, pos;
	int bad;
};

static uint8_t get_u8(struct reader *r)
{
	if (r->pos >= r->len) {
		r->bad = 1;
		return 0;
	}
	return r->buf[r->pos++];
}

static uint64_t get_varint_long(struct reader *r)
{
	uint64_t v = 0;

	/* the longest varint fits: no bounds check per byte */
	if (r->pos <= r->len && r->len - r->pos >= 10) {
		const uint8_t *p = r->buf + r->pos;
		for (unsigned i = 0; i < 10; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				r->pos += i + 1;
				return v;
			}
		}
		r->bad = 1; /* more than 10 bytes */
		return 0;
	}
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = get_u8(r);
		if (r->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1; /* more than 10 bytes */
	return 0;
}

/* Most values (deltas, small numbers, lengths) take one byte. */
static inline uint64_t get_varint(struct reader *r)
{
	if (r->pos < r->len && r->buf[r->pos] < 0x80)
		return r->buf[r->pos++];
	return get_varint_long(r);
}

static int64_t get_svarint(struct reader *r)
{
	uint64_t v = get_varint(r);
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static const char *get_str(struct reader *r, uint32_t *n)
{
	uint64_t l = get_varint(r);
	const char *p;

	if (r->bad || l > r->len - r->pos) {
		r->bad = 1;
		*n = 0;
		return "";
	}
	p = (const char *)r->buf + r->pos;
	r->pos += l;
	*n = (uint32_t)l;
	return p;
}

int fr_record_decode(struct fr_codec_state *st, const uint8_t *buf, size_t len, size_t *pos,
		     struct fr_record *out)
{
	struct reader r = { .buf = buf, .len = len, .pos = *pos };
	/* filled in place: the caller's record is scratch until this
	 * returns 0 */
	struct fr_record *rec = out;
	uint64_t v;

	memset(rec, 0, sizeof(*rec));
	rec->type = get_u8(&r);
	rec->flags = get_u8(&r);
	rec->ts = st->prev_ts + (uint64_t)get_svarint(&r);
	v = get_varint(&r);
	rec->pid = (uint32_t)v;
	if (v > UINT32_MAX)
		r.bad = 1;
	/* unsigned arithmetic: a hostile delta must wrap, not overflow */
	rec->tid = (uint32_t)((uint64_t)rec->pid + (uint64_t)get_svarint(&r));
	rec->cgroup_id = get_varint(&r);
	rec->comm_len = get_u8(&r);
	if (rec->comm_len > FR_REC_COMM_MAX || rec->comm_len > r.len - r.pos) {
		r.bad = 1;
	} else if (!r.bad) {
		/* all the room of comm in one move where the input has it */
		if (r.len - r.pos >= FR_REC_COMM_MAX)
			memcpy(rec->comm, r.buf + r.pos, FR_REC_COMM_MAX);
		else
			memcpy(rec->comm, r.buf + r.pos, rec->comm_len);
		rec->comm[rec->comm_len] = 0;
		r.pos += rec->comm_len;
	}
	if (r.bad)
		return -EBADMSG;

	switch (rec->type) {
	case FR_REC_EXEC:
		rec->exec.ppid = (uint32_t)get_varint(&r);
		rec->exec.filename = get_str(&r, &rec->exec.filename_len);
		rec->exec.args = get_str(&r, &rec->exec.args_len);
		break;
	case FR_REC_EXIT:
		rec->exit.status = (uint32_t)get_varint(&r);
		break;
	case FR_REC_FORK:
		rec->fork.child_pid = (uint32_t)get_varint(&r);
		break;
	case FR_REC_SYSCALL:
		rec->syscall.nr = (uint32_t)get_varint(&r);
		rec->syscall.duration_ns = get_varint(&r);
		rec->syscall.ret = get_svarint(&r);
		break;
	case FR_REC_OFFCPU:
		rec->sched.duration_ns = get_varint(&r);
		rec->sched.syscall_nr = -1; /* older chunks do not say */
		if (st->incompat_flags & FR_CHUNK_INCOMPAT_OFFCPU_SYSCALL) {
			int64_t nr = get_svarint(&r);
			if (nr < -1 || nr > INT32_MAX)
				r.bad = 1;
			rec->sched.syscall_nr = (int32_t)nr;
		}
		break;
	case FR_REC_RUNQ:
		rec->sched.duration_ns = get_varint(&r);
		rec->sched.syscall_nr = -1;
		break;
	case FR_REC_BLOCK:
		rec->block.dev = (uint32_t)get_varint(&r);
		rec->block.op = (uint32_t)get_varint(&r);
		rec->block.sector = get_varint(&r);
		rec->block.bytes = (uint32_t)get_varint(&r);
		rec->block.error = (int32_t)get_svarint(&r);
		rec->block.duration_ns = get_varint(&r);
		break;
	case FR_REC_OOM:
		rec->oom.rss_kb = get_varint(&r);
		rec->oom.memcg_id = get_varint(&r);
		rec->oom.memcg = get_str(&r, &rec->oom.memcg_len);
		break;
	case FR_REC_SIGNAL:
		rec->signal.sig = (uint32_t)get_varint(&r);
		rec->signal.sender_pid = (uint32_t)get_varint(&r);
		rec->signal.code = (int32_t)get_svarint(&r);
		rec->signal.result = (int32_t)get_svarint(&r);
		rec->signal.sender_comm = get_str(&r, &rec->signal.sender_comm_len);
		break;
	case FR_REC_TCP: {
		size_t alen;
		rec->tcp.event = get_u8(&r);
		rec->tcp.state = get_u8(&r);
		rec->tcp.family = (uint16_t)get_varint(&r);
		rec->tcp.sport = (uint16_t)get_varint(&r);
		rec->tcp.dport = (uint16_t)get_varint(&r);
		alen = rec->tcp.family == 10 ? 16 : 4;
		if (r.bad || 2 * alen > r.len - r.pos) {
			r.bad = 1;
			break;
		}
		memcpy(rec->tcp.saddr, r.buf + r.pos, alen);
		memcpy(rec->tcp.daddr, r.buf + r.pos + alen, alen);
		r.pos += 2 * alen;
		break;
	}
	case FR_REC_SAMPLE: {
		uint64_t kf = get_varint(&r), uf = get_varint(&r);
		if (kf + uf > FR_SAMPLE_FRAMES_MAX) {
			r.bad = 1;
			break;
		}
		rec->sample.kernel_frames = (uint16_t)kf;
		rec->sample.user_frames = (uint16_t)uf;
		rec->sample.enc = (const uint8_t *)get_str(&r, &rec->sample.enc_len);
		break;
	}
	case FR_REC_SWITCH:
		rec->sw.prev_state = (uint32_t)get_varint(&r);
		rec->sw.next_pid = (uint32_t)get_varint(&r);
		rec->sw.next_tid = (uint32_t)((uint64_t)rec->sw.next_pid + (uint64_t)get_svarint(&r));
		rec->sw.next_comm = get_str(&r, &rec->sw.next_comm_len);
		break;
	case FR_REC_MARK:
		rec->mark.text = get_str(&r, &rec->mark.text_len);
		break;
	case FR_REC_METRICS:
		rec->metrics.json = get_str(&r, &rec->metrics.json_len);
		break;
	case FR_REC_TRIGGER:
		rec->trigger.rule = get_str(&r, &rec->trigger.rule_len);
		rec->trigger.incident = get_str(&r, &rec->trigger.incident_len);
		break;
	case FR_REC_GAP:
		rec->gap.lost = get_varint(&r);
		break;
	case FR_REC_CGROUP:
		rec->cgroup.path = get_str(&r, &rec->cgroup.path_len);
		break;
	case FR_REC_PROCESS:
		rec->process.ppid = (uint32_t)get_varint(&r);
		rec->process.exe = get_str(&r, &rec->process.exe_len);
		rec->process.args = get_str(&r, &rec->process.args_len);
		break;
	case FR_REC_MAPPING:
		rec->mapping.start = get_varint(&r);
		rec->mapping.end = rec->mapping.start + get_varint(&r);
		if (rec->mapping.end < rec->mapping.start)
			r.bad = 1;
		rec->mapping.offset = get_varint(&r);
		rec->mapping.vaddr = get_varint(&r);
		rec->mapping.path = get_str(&r, &rec->mapping.path_len);
		rec->mapping.build_id = (const uint8_t *)get_str(&r, &rec->mapping.build_id_len);
		if (rec->mapping.build_id_len > FR_BUILD_ID_MAX)
			r.bad = 1;
		break;
	case FR_REC_SYMBOL:
		rec->symbol.start = get_varint(&r);
		rec->symbol.size = get_varint(&r);
		if (rec->symbol.start + rec->symbol.size < rec->symbol.start)
			r.bad = 1;
		rec->symbol.name = get_str(&r, &rec->symbol.name_len);
		rec->symbol.module = get_str(&r, &rec->symbol.module_len);
		break;
	default:
		return -EBADMSG;
	}
	if (r.bad)
		return -EBADMSG;
	st->prev_ts = rec->ts;
	*pos = r.pos;
	return 0;
}

int fr_sample_frames(const struct fr_record *rec, uint64_t *out, size_t max)
{
	struct reader r = { .buf = rec->sample.enc, .len = rec->sample.enc_len };
	size_t n = (size_t)rec->sample.kernel_frames + rec->sample.user_frames;
	uint64_t prev = 0;

	if (rec->type != FR_REC_SAMPLE || n > max)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		prev += (uint64_t)get_svarint(&r);
		if (r.bad)
			return -EBADMSG;
		out[i] = prev;
	}
	return r.pos == r.len ? (int)n : -EBADMSG;
}
