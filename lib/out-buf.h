/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An output buffer for printing millions of lines: appends without
 * format-string parsing or per-character locking, written to its FILE in
 * large blocks.  Errors stick: fr_out_end() reports the first.
 */
#ifndef FR_OUT_BUF_H
#define FR_OUT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct fr_out {
	char *p;
	size_t len, cap;
	FILE *f;
	int err; /* first write error, as an errno */
};

/* @f stays the caller's.  With @f NULL, the output stays in memory (p,
 * len), the buffer growing as needed. */
int fr_out_init(struct fr_out *o, FILE *f);
/* Writes what is buffered (in memory: makes room); returns 0 or -errno
 * (the first error). */
int fr_out_flush(struct fr_out *o);
/* Flushes, frees the buffer; returns as fr_out_flush(). */
int fr_out_end(struct fr_out *o);

void fr_out_write_slow(struct fr_out *o, const void *s, size_t n);

static inline void fr_out_write(struct fr_out *o, const void *s, size_t n)
{
	char *d = o->p + o->len;
	const char *c = s;

	if (o->cap - o->len < n) {
		fr_out_write_slow(o, s, n);
		return;
	}
	/* most pieces are a few bytes: two overlapping fixed-size moves
	 * instead of a call */
	if (n >= 8 && n <= 16) {
		memcpy(d, c, 8);
		memcpy(d + n - 8, c + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(d, c, 4);
		memcpy(d + n - 4, c + n - 4, 4);
	} else if (n && n < 4) {
		d[0] = c[0];
		d[n / 2] = c[n / 2];
		d[n - 1] = c[n - 1];
	} else
		memcpy(d, c, n);
	o->len += n;
}

/* Room for @n bytes (at most 4 KiB) at o->p + o->len, made by writing
 * out or growing what is there: the caller writes there directly and
 * adds what it wrote to o->len.  (After a write error there is room, the
 * error sticks.) */
static inline char *fr_out_room(struct fr_out *o, size_t n)
{
	if (o->cap - o->len < n)
		fr_out_flush(o);
	return o->p + o->len;
}

static inline void fr_out_putc(struct fr_out *o, char c)
{
	if (o->len == o->cap)
		fr_out_flush(o);
	o->p[o->len++] = c;
}

static inline void fr_out_puts(struct fr_out *o, const char *s)
{
	fr_out_write(o, s, strlen(s));
}

void fr_out_u64(struct fr_out *o, uint64_t v);
void fr_out_i64(struct fr_out *o, int64_t v);
/* Left-aligned, padded with spaces to @width (as "%-*"). */
void fr_out_u64_pad(struct fr_out *o, uint64_t v, unsigned width);
void fr_out_pad(struct fr_out *o, const char *s, unsigned width);
#ifdef __SSE2__
/* 0xff in each lane of @x that a terminal copy escapes: control bytes,
 * DEL, backslash. */
static inline __m128i fr_out_special_lanes(__m128i x)
{
	return _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x),
			    _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
}
#endif

/* Bytes for a terminal: control characters, DEL and backslash as \xNN. */
void fr_out_safe_slow(struct fr_out *o, const char *s, size_t n);
static inline void fr_out_safe(struct fr_out *o, const char *s, size_t n)
{
#ifdef __SSE2__
	/* 8 to 16 bytes: two overlapping 8-byte moves when none needs
	 * escaping */
	if (n >= 8 && n <= 16 && o->cap - o->len >= 16) {
		__m128i x = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)s),
					       _mm_loadl_epi64((const __m128i *)(const void *)(s + n - 8)));
		if (!_mm_movemask_epi8(fr_out_special_lanes(x))) {
			_mm_storel_epi64((__m128i *)(void *)(o->p + o->len), x);
			_mm_storel_epi64((__m128i *)(void *)(o->p + o->len + n - 8), _mm_unpackhi_epi64(x, x));
			o->len += n;
			return;
		}
	}
#endif
	/* short strings (command names, most paths) without a call: copied
	 * up to the first byte that needs escaping */
	if (n <= 16 && o->cap - o->len >= 16) {
		char *d = o->p + o->len;
		size_t i = 0;
		for (; i < n; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c < 0x20 || c == 0x7f || c == '\\')
				break;
			d[i] = (char)c;
		}
		o->len += i;
		if (i == n)
			return;
		s += i;
		n -= i;
	}
	fr_out_safe_slow(o, s, n);
}
/* The same for @n <= 16 bytes at @s, which has 16 readable bytes (a
 * record's comm): one 16-byte move when none of the @n needs escaping. */
static inline void fr_out_safe16(struct fr_out *o, const char *s, size_t n)
{
#ifdef __SSE2__
	if (n <= 16 && o->cap - o->len >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
		if (!((unsigned)_mm_movemask_epi8(fr_out_special_lanes(x)) & ((1u << n) - 1))) {
			_mm_storeu_si128((__m128i *)(void *)(o->p + o->len), x);
			o->len += n;
			return;
		}
	}
#endif
	fr_out_safe(o, s, n);
}
/* NUL-separated strings (an argv), safe, each NUL printed as @sep. */
void fr_out_safe_list(struct fr_out *o, const char *s, size_t n, char sep);
__attribute__((format(printf, 2, 3))) void fr_out_printf(struct fr_out *o, const char *fmt, ...);

#endif
