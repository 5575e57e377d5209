/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What is cut, and how it reads afterwards:
 *   args   argv past argv[0] becomes one element, "[redacted]": how many
 *          arguments there were is cut too (argv[0] says what ran)
 *   home   in a path under /home, the user and the directories down to
 *          the file's name become "[redacted]" (/home/alice/src/x/run.sh
 *          reads /home/[redacted]/run.sh: what ran, not whose or where);
 *          under /root the directories likewise.  Path fields (exec
 *          file names, executables, mappings, cgroups) are cut whole,
 *          paths inside texts (arguments, marks, metrics, metadata) where
 *          they start and up to a character that ends a word
 *   tcp    both addresses of a TCP record are zeroed and the record is
 *          flagged (FR_REC_F_ADDR_REDACTED): readers print "[redacted]";
 *          the ports stay (which service)
 *   marks  mark and annotation texts become "[redacted]", but for the
 *          daemon's own start and stop marks (frctl dump -f tells
 *          restarts by them)
 * A chunk is made again only when something in it was cut; the others
 * are copied as they are.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "chunk.h"
#include "macro.h"
#include "redact.h"

static const char *const class_names[] = { "args", "home", "tcp", "marks", "urls" };

/* Room for the strings of one record made anew: a record has at most two
 * strings cut (an exec's file name and arguments), and one more holds
 * arguments between their two cuts. */
#define SLOTS 3

struct slot {
	char *p;
	size_t cap;
};

struct fr_redactor {
	unsigned classes;
	struct fr_redact_counts counts;
	struct slot slot[SLOTS];
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	uint8_t *content; /* a chunk's payload decompressed */
	size_t content_cap;
	uint8_t *rows; /* its records as rows (checked whole as they are made) */
	size_t rows_cap;
};

int fr_redact_parse(const char *list, unsigned *ret, const char **ret_bad)
{
	unsigned classes = 0;

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		unsigned i;

		for (i = 0; i < ELEMENTSOF(class_names); i++)
			if (strlen(class_names[i]) == n && strncmp(p, class_names[i], n) == 0)
				break;
		if (i == ELEMENTSOF(class_names)) {
			*ret_bad = p;
			return -EINVAL;
		}
		classes |= 1u << i;
		p += n;
		if (*p == ',')
			p++;
	}
	*ret = classes;
	return 0;
}

const char *fr_redact_class_name(unsigned class)
{
	for (unsigned i = 0; i < ELEMENTSOF(class_names); i++)
		if (class == 1u << i)
			return class_names[i];
	return NULL;
}

int fr_redactor_new(unsigned classes, struct fr_redactor **ret)
{
	_cleanup_free_ struct fr_redactor *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return -ENOMEM;
	rd->classes = classes & FR_REDACT_ALL;
	rd->cctx = ZSTD_createCCtx();
	rd->dctx = ZSTD_createDCtx();
	/* as the daemon compresses (the frame checksum lets any zstd tool
	 * verify a payload alone) */
	if (!rd->cctx || !rd->dctx || ZSTD_isError(ZSTD_CCtx_setParameter(rd->cctx, ZSTD_c_compressionLevel, 3)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(rd->cctx, ZSTD_c_checksumFlag, 1))) {
		fr_redactor_free(TAKE_PTR(rd));
		return -ENOMEM;
	}
	*ret = TAKE_PTR(rd);
	return 0;
}

struct fr_redactor *fr_redactor_free(struct fr_redactor *rd)
{
	if (!rd)
		return NULL;
	for (unsigned i = 0; i < SLOTS; i++)
		free(rd->slot[i].p);
	ZSTD_freeCCtx(rd->cctx);
	ZSTD_freeDCtx(rd->dctx);
	free(rd->content);
	free(rd->rows);
	free(rd);
	return NULL;
}

unsigned fr_redactor_classes(const struct fr_redactor *rd)
{
	return rd->classes;
}

const struct fr_redact_counts *fr_redactor_counts(const struct fr_redactor *rd)
{
	return &rd->counts;
}

static char *slot_room(struct slot *s, size_t n)
{
	if (n > s->cap) {
		char *p = realloc(s->p, n);
		if (!p)
			return NULL;
		s->p = p;
		s->cap = n;
	}
	return s->p;
}

/* @s (@n bytes) where writing @sl cannot move it: a record cut before
 * points into the slots (fr_redact_record() on its own output), and
 * growing one may free what it reads.  *tmp: a copy to free, or NULL. */
static const char *unalias(const struct slot *sl, const char *s, size_t n, char **tmp)
{
	*tmp = NULL;
	if (!sl->p || s < sl->p || s >= sl->p + sl->cap)
		return s;
	*tmp = malloc(MAX(n, (size_t)1));
	if (*tmp)
		memcpy(*tmp, s, n);
	return *tmp;
}

/* Characters a path is made of, which cannot come just before one that
 * starts inside a text (so /mnt/home/x is no home path). */
static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-' || c == '/' || c == '~' || c == '+' || c == '@';
}

/* What ends a path inside a text: spaces, quotes, separators, NUL (which
 * separates arguments), and the backslash of a JSON escape. */
static bool path_end(char c)
{
	return c == 0 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == ':' ||
	       c == ',' || c == ';' || c == '\\';
}

/* The path p[0..n) cut into @out (room for n + 16): the prefix, the
 * marker for what lies between it and the last component, the last
 * component.  Returns the bytes written, or 0 when nothing is cut. */
static size_t cut_path(const char *p, size_t n, char *out)
{
	bool home = n >= 6 && memcmp(p, "/home/", 6) == 0;
	const char *rest = p + 6, *last;
	size_t rest_len = n - 6, len;

	if (!home && !(n >= 6 && memcmp(p, "/root/", 6) == 0))
		return 0;
	last = memrchr(rest, '/', rest_len);
	/* /home/USER is a home itself; /root/NAME has nothing between */
	if (!last && (!home || rest_len == 0))
		return 0;
	len = rest_len - (last ? (size_t)(last - rest) : rest_len);
	memcpy(out, p, 6);
	memcpy(out + 6, FR_REDACT_MARKER, strlen(FR_REDACT_MARKER));
	memcpy(out + 6 + strlen(FR_REDACT_MARKER), last ? last : rest + rest_len, len);
	return 6 + strlen(FR_REDACT_MARKER) + len;
}

/* s[0..n) into @sl with its home paths cut: the whole string a path
 * (@whole), or the paths that start in it.  Returns the new length, or
 * -ENOMEM; *cut says whether something was. */
static ssize_t cut_home(struct slot *sl, const char *s0, size_t n, bool whole, bool *cut_ret)
{
	_cleanup_free_ char *tmp = NULL;
	const char *s = unalias(sl, s0, n, &tmp);
	/* each path cut is 7 bytes at least and grows by 9 at most */
	char *out = s ? slot_room(sl, 2 * n + 16) : NULL;
	size_t i = 0, o = 0;
	bool cut = false;

	if (!out)
		return -ENOMEM;
	while (i < n) {
		size_t end = i, m;
		if ((whole && i > 0) || s[i] != '/' || (i > 0 && path_char(s[i - 1]))) {
			out[o++] = s[i++];
			continue;
		}
		if (whole)
			end = n;
		else
			while (end < n && !path_end(s[end]))
				end++;
		m = cut_path(s + i, end - i, out + o);
		if (m) {
			cut = true;
			o += m;
		} else {
			memcpy(out + o, s + i, end - i);
			o += end - i;
		}
		i = end;
	}
	/* what was cut before reads the same */
	*cut_ret = cut && !(o == n && memcmp(out, s, n) == 0);
	return (ssize_t)o;
}

/* Cuts the home paths of a string field of @r.  It points at @sl
 * afterwards, cut or not: it may have pointed there, where growing the
 * slot freed it. */
static int home_field(struct slot *sl, const char **p, uint32_t *len, bool whole, bool *cut)
{
	bool c;
	ssize_t n = cut_home(sl, *p, *len, whole, &c);

	if (n < 0)
		return (int)n;
	*p = sl->p;
	*len = (uint32_t)n;
	*cut |= c;
	return 0;
}

/* argv (NUL-separated) past argv[0] into one marker, in @sl. */
static int cut_args(struct slot *sl, const char **args, uint32_t *len)
{
	size_t first = strnlen(*args, *len), n = first + 1 + strlen(FR_REDACT_MARKER);
	_cleanup_free_ char *tmp = NULL;
	const char *in;
	char *out;

	/* nothing past argv[0] but its NUL, or only what was left before */
	if (first + 1 >= *len || (*len == n && memcmp(*args + first + 1, FR_REDACT_MARKER, n - first - 1) == 0))
		return 0;
	in = unalias(sl, *args, first, &tmp);
	out = in ? slot_room(sl, n) : NULL;
	if (!out)
		return -ENOMEM;
	memcpy(out, in, first);
	out[first] = 0;
	memcpy(out + first + 1, FR_REDACT_MARKER, strlen(FR_REDACT_MARKER));
	*args = out;
	*len = (uint32_t)n;
	return 1;
}

static bool lifecycle_mark(const struct fr_record *r)
{
	return r->pid == 0 &&
	       ((r->mark.text_len >= strlen(FR_MARK_STARTED) &&
		 memcmp(r->mark.text, FR_MARK_STARTED, strlen(FR_MARK_STARTED)) == 0) ||
		(r->mark.text_len >= strlen(FR_MARK_STOPPED) &&
		 memcmp(r->mark.text, FR_MARK_STOPPED, strlen(FR_MARK_STOPPED)) == 0));
}

int fr_redact_record(struct fr_redactor *rd, struct fr_record *r)
{
	bool args = false, home = false, tcp = false, marks = false, h = rd->classes & FR_REDACT_HOME;
	const char **argp = NULL;
	uint32_t *arglen = NULL;
	int k = 0;

	/* (every type has its case: one that carries a path, arguments, an
	 * address or a text must say here what it cuts) */
	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC:
		argp = &r->exec.args;
		arglen = &r->exec.args_len;
		if (h)
			k = home_field(&rd->slot[0], &r->exec.filename, &r->exec.filename_len, true, &home);
		break;
	case FR_REC_PROCESS:
		argp = &r->process.args;
		arglen = &r->process.args_len;
		if (h)
			k = home_field(&rd->slot[0], &r->process.exe, &r->process.exe_len, true, &home);
		break;
	case FR_REC_MAPPING:
		if (h)
			k = home_field(&rd->slot[0], &r->mapping.path, &r->mapping.path_len, true, &home);
		break;
	case FR_REC_CGROUP:
		if (h)
			k = home_field(&rd->slot[0], &r->cgroup.path, &r->cgroup.path_len, true, &home);
		break;
	case FR_REC_OOM:
		if (h)
			k = home_field(&rd->slot[0], &r->oom.memcg, &r->oom.memcg_len, true, &home);
		break;
	case FR_REC_SYMBOL:
		if (h)
			k = home_field(&rd->slot[0], &r->symbol.module, &r->symbol.module_len, true, &home);
		break;
	case FR_REC_PYCODE:
		if (h)
			k = home_field(&rd->slot[0], &r->pycode.file, &r->pycode.file_len, true, &home);
		break;
	case FR_REC_METRICS:
		if (h)
			k = home_field(&rd->slot[0], &r->metrics.json, &r->metrics.json_len, false, &home);
		break;
	case FR_REC_MARK:
		if ((rd->classes & FR_REDACT_MARKS) && !lifecycle_mark(r)) {
			if (r->mark.text_len != strlen(FR_REDACT_MARKER) ||
			    memcmp(r->mark.text, FR_REDACT_MARKER, r->mark.text_len) != 0) {
				r->mark.text = FR_REDACT_MARKER;
				r->mark.text_len = strlen(FR_REDACT_MARKER);
				marks = true;
			}
		} else if (h)
			k = home_field(&rd->slot[0], &r->mark.text, &r->mark.text_len, false, &home);
		break;
	case FR_REC_TCP:
		if ((rd->classes & FR_REDACT_TCP) && !(r->flags & FR_REC_F_ADDR_REDACTED)) {
			memset(r->tcp.saddr, 0, sizeof(r->tcp.saddr));
			memset(r->tcp.daddr, 0, sizeof(r->tcp.daddr));
			r->flags |= FR_REC_F_ADDR_REDACTED;
			tcp = true;
		}
		break;
	/* numbers, a rule's name, function names: nothing of a class */
	case FR_REC_EXIT:
	case FR_REC_FORK:
	case FR_REC_SYSCALL:
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
	case FR_REC_BLOCK:
	case FR_REC_SIGNAL:
	case FR_REC_SWITCH:
	case FR_REC_SAMPLE:
	case FR_REC_GAP:
	case FR_REC_TRIGGER:
	case FR_REC_INLINE:
		break;
	}
	if (k == 0 && argp && (rd->classes & FR_REDACT_ARGS)) {
		k = cut_args(&rd->slot[2], argp, arglen);
		args = k > 0;
	}
	if (k >= 0 && argp && h)
		k = home_field(&rd->slot[1], argp, arglen, false, &home);
	if (k < 0)
		return k;
	rd->counts.args += args;
	rd->counts.home += home;
	rd->counts.tcp += tcp;
	rd->counts.marks += marks;
	return args || home || tcp || marks;
}

/* A chunk that does not decode cannot be checked: it is left out (no
 * bytes instead of it), not copied as it is. */
static int leave_out(struct fr_redactor *rd, uint8_t **ret, int k)
{
	if (k != -EBADMSG)
		return k;
	*ret = malloc(1);
	if (!*ret)
		return -ENOMEM;
	rd->counts.chunks_left_out++;
	return 0;
}

int fr_redact_chunk(void *userdata, const uint8_t *chunk, size_t len, uint8_t **ret, size_t *ret_len)
{
	struct fr_redactor *rd = userdata;
	struct fr_chunk_builder *b = NULL;
	_cleanup_free_ uint8_t *out = NULL;
	uint64_t frames[FR_SAMPLE_FRAMES_MAX], wframes[FR_SAMPLE_FRAMES_MAX];
	struct fr_record_iter it;
	struct fr_chunk_info ci;
	size_t out_len = 0, raw_max, size;
	bool cut = false;
	int k;

	*ret = NULL;
	*ret_len = 0;
	if (len < sizeof(struct fr_chunk_header))
		return -EBADMSG;
	k = fr_chunk_header_parse((const struct fr_chunk_header *)chunk, &ci);
	if (k < 0)
		return k;
	if (sizeof(struct fr_chunk_header) + ci.payload_size > len)
		return -EBADMSG;
	size = fr_chunk_content_size(&ci);
	if (size > rd->content_cap) {
		uint8_t *p = realloc(rd->content, size);
		if (!p)
			return -ENOMEM;
		rd->content = p;
		rd->content_cap = size;
	}
	if (MAX(ci.raw_size, 1u) > rd->rows_cap) {
		uint8_t *p = realloc(rd->rows, MAX(ci.raw_size, 1u));
		if (!p)
			return -ENOMEM;
		rd->rows = p;
		rd->rows_cap = MAX(ci.raw_size, 1u);
	}
	k = fr_chunk_payload_decode(rd->dctx, &ci, chunk + sizeof(struct fr_chunk_header), rd->rows, rd->content, &it);
	if (k < 0)
		return leave_out(rd, ret, k);
	/* what is cut grows a record by a few bytes at most (cut_home());
	 * a chunk that no longer fits is made two */
	raw_max = MIN((size_t)FR_CHUNK_RAW_MAX, MAX((size_t)4096, 2 * (size_t)ci.raw_size + 4096));
	k = fr_chunk_builder_new(ci.cpu, raw_max, &b);
	if (k < 0)
		return k;
	for (uint32_t i = 0; i < ci.nrecords && k >= 0; i++) {
		struct fr_record r;
		size_t pos;

		k = fr_record_iter_next(&it, &r, &pos);
		if (k < 0 && fr_record_iter_done(&it)) {
			/* the end: the records of types skipped go (what
			 * they hold is not known, so not redacted) */
			k = 0;
			break;
		}
		if (k < 0)
			break;
		k = fr_redact_record(rd, &r);
		if (k < 0)
			break;
		cut |= k > 0;
		/* the encoder takes frames as addresses, the decoder gives
		 * them encoded */
		if (fr_record_type_has_stack(r.type)) {
			k = fr_record_frames(&r, frames, ELEMENTSOF(frames));
			if (k < 0)
				break;
			r.stack.kframes = frames;
			r.stack.uframes = frames + r.stack.kernel_frames;
		}
		/* and an offcpu record's waker's */
		if (r.type == FR_REC_OFFCPU && r.sched.waker.context) {
			struct fr_record view;
			fr_record_waker_view(&r, &view);
			k = fr_record_frames(&view, wframes, ELEMENTSOF(wframes));
			if (k < 0)
				break;
			r.sched.waker.stack.kframes = wframes;
			r.sched.waker.stack.uframes = wframes + view.stack.kernel_frames;
		}
		k = fr_chunk_builder_add(b, &r);
		if (k == -ENOBUFS) {
			void *buf;
			size_t n;
			k = fr_chunk_builder_close_as(b, rd->cctx, &ci, &buf, &n);
			if (k == 0)
				k = fr_chunks_append(&out, &out_len, buf, n);
			if (k == 0)
				k = fr_chunk_builder_add(b, &r);
		}
	}
	if (k >= 0 && !fr_record_iter_done(&it))
		k = -EBADMSG;
	if (k >= 0 && cut) {
		void *buf;
		size_t n;
		k = fr_chunk_builder_close_as(b, rd->cctx, &ci, &buf, &n);
		if (k == 0)
			k = fr_chunks_append(&out, &out_len, buf, n);
	}
	fr_chunk_builder_free(b);
	if (k < 0)
		return leave_out(rd, ret, k);
	if (cut) {
		rd->counts.chunks++;
		*ret = TAKE_PTR(out);
		*ret_len = out_len;
	}
	return 0;
}

static void json_set_marker(struct json_object *v, uint64_t *count)
{
	if (strcmp(json_object_get_string(v), FR_REDACT_MARKER) == 0)
		return;
	json_object_set_string(v, FR_REDACT_MARKER);
	(*count)++;
}

/* An argv already cut: [argv0, "[redacted]"]. */
static bool json_args_cut(struct json_object *argv)
{
	struct json_object *v = json_object_array_get_idx(argv, 1);

	return json_object_array_length(argv) == 2 && json_object_is_type(v, json_type_string) &&
	       strcmp(json_object_get_string(v), FR_REDACT_MARKER) == 0;
}

/* What ends a URL inside a text (a configuration file's line, say). */
static bool url_end(char c)
{
	return c == 0 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == ';' ||
	       c == ',' || c == '\\' || c == '>' || c == ')';
}

/* s[0..n) into @sl with the secrets of its URLs cut: the user name and
 * password before an '@' of the authority, and the query (where
 * presigned URLs carry their signature).  The scheme, host and path stay,
 * so a reader still sees where files went.  Returns the new length, or
 * -ENOMEM; *cut says whether something was. */
static ssize_t cut_urls(struct slot *sl, const char *s0, size_t n, bool *cut)
{
	_cleanup_free_ char *tmp = NULL;
	const char *s = unalias(sl, s0, n, &tmp);
	/* each cut replaces at least one byte by the marker */
	char *out = s ? slot_room(sl, n + (n / 2 + 1) * strlen(FR_REDACT_MARKER)) : NULL;
	size_t i = 0, o = 0, m = strlen(FR_REDACT_MARKER);

	*cut = false;
	if (!out)
		return -ENOMEM;
	while (i < n) {
		const char *sep = i + 3 <= n ? memmem(s + i, n - i, "://", 3) : NULL;
		size_t auth, end, at, q;

		if (!sep) {
			memcpy(out + o, s + i, n - i);
			o += n - i;
			break;
		}
		auth = (size_t)(sep - s) + 3;
		end = auth;
		while (end < n && !url_end(s[end]))
			end++;
		memcpy(out + o, s + i, auth - i);
		o += auth - i;
		/* the authority ends at the first '/', '?' or '#' */
		at = auth;
		while (at < end && s[at] != '/' && s[at] != '?' && s[at] != '#')
			at++;
		{
			const char *a = memrchr(s + auth, '@', at - auth);
			size_t from = auth;
			if (a && !(a - (s + auth) == (ssize_t)m && memcmp(s + auth, FR_REDACT_MARKER, m) == 0)) {
				memcpy(out + o, FR_REDACT_MARKER, m);
				o += m;
				from = (size_t)(a - s);
				*cut = true;
			}
			q = from;
			while (q < end && s[q] != '?')
				q++;
			memcpy(out + o, s + from, q - from);
			o += q - from;
		}
		if (q < end) {
			bool done = end - q - 1 == m && memcmp(s + q + 1, FR_REDACT_MARKER, m) == 0;
			out[o++] = '?';
			memcpy(out + o, FR_REDACT_MARKER, m);
			o += m;
			*cut |= !done;
		}
		i = end;
	}
	return (ssize_t)o;
}

void fr_redact_json(struct fr_redactor *rd, struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_object: {
		json_object_object_foreach(o, key, v) {
			if (!v)
				continue;
			if ((rd->classes & FR_REDACT_ARGS) && strcmp(key, "argv") == 0 &&
			    json_object_is_type(v, json_type_array) && json_object_array_length(v) > 1 &&
			    !json_args_cut(v)) {
				json_object_array_del_idx(v, 1, json_object_array_length(v) - 1);
				json_object_array_add(v, json_object_new_string(FR_REDACT_MARKER));
				rd->counts.args++;
			} else if ((rd->classes & FR_REDACT_TCP) && (strcmp(key, "saddr") == 0 || strcmp(key, "daddr") == 0) &&
				   json_object_is_type(v, json_type_string))
				json_set_marker(v, &rd->counts.tcp);
			else if ((rd->classes & FR_REDACT_MARKS) && (strcmp(key, "text") == 0 || strcmp(key, "reason") == 0) &&
				 json_object_is_type(v, json_type_string))
				json_set_marker(v, &rd->counts.marks);
			fr_redact_json(rd, v);
		}
		break;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			fr_redact_json(rd, json_object_array_get_idx(o, i));
		break;
	case json_type_string:
		if (rd->classes & FR_REDACT_URLS) {
			bool cut;
			ssize_t n = cut_urls(&rd->slot[0], json_object_get_string(o), (size_t)json_object_get_string_len(o),
					     &cut);
			if (n >= 0 && cut) {
				json_object_set_string_len(o, rd->slot[0].p, (int)n);
				rd->counts.urls++;
			}
		}
		if (rd->classes & FR_REDACT_HOME) {
			bool cut;
			ssize_t n = cut_home(&rd->slot[0], json_object_get_string(o), (size_t)json_object_get_string_len(o),
					     false, &cut);
			if (n >= 0 && cut) {
				json_object_set_string_len(o, rd->slot[0].p, (int)n);
				rd->counts.home++;
			}
		}
		break;
	case json_type_null:
	case json_type_boolean:
	case json_type_double:
	case json_type_int:
		break;
	}
}

struct json_object *fr_redact_summary(const struct fr_redactor *rd)
{
	struct json_object *o = json_object_new_object(), *classes = json_object_new_array(),
			   *counts = json_object_new_object();
	const uint64_t *n[] = { &rd->counts.args, &rd->counts.home, &rd->counts.tcp, &rd->counts.marks,
				&rd->counts.urls };

	for (unsigned i = 0; i < ELEMENTSOF(class_names); i++)
		if (rd->classes & (1u << i)) {
			json_object_array_add(classes, json_object_new_string(class_names[i]));
			json_object_object_add(counts, class_names[i], json_object_new_uint64(*n[i]));
		}
	json_object_object_add(o, "classes", classes);
	json_object_object_add(o, "marker", json_object_new_string(FR_REDACT_MARKER));
	json_object_object_add(o, "counts", counts);
	json_object_object_add(o, "chunks_rewritten", json_object_new_uint64(rd->counts.chunks));
	if (rd->counts.chunks_left_out)
		json_object_object_add(o, "chunks_left_out", json_object_new_uint64(rd->counts.chunks_left_out));
	return o;
}
