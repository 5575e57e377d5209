/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "digits.h"
#include "macro.h"
#include "out-buf.h"

#define OUT_BUF_SIZE (256 * 1024)

int fr_out_init(struct fr_out *o, FILE *f)
{
	*o = (struct fr_out){ .f = f, .cap = OUT_BUF_SIZE };
	o->p = malloc(o->cap);
	return o->p ? 0 : -ENOMEM;
}

int fr_out_flush(struct fr_out *o)
{
	if (!o->f) {
		char *p = o->err ? NULL : realloc(o->p, o->cap * 2);
		if (!p) {
			o->err = ENOMEM;
			o->len = 0; /* keeps appending safe; the error sticks */
		} else {
			o->p = p;
			o->cap *= 2;
		}
		return -o->err;
	}
	if (o->len && !o->err && fwrite(o->p, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
	return -o->err;
}

int fr_out_end(struct fr_out *o)
{
	int k = fr_out_flush(o);

	free(o->p);
	o->p = NULL;
	o->cap = 0;
	return k;
}

void fr_out_write_slow(struct fr_out *o, const void *s, size_t n)
{
	while (!o->f && !o->err && o->cap - o->len < n)
		fr_out_flush(o);
	if (!o->f) {
		if (!o->err) {
			memcpy(o->p + o->len, s, n);
			o->len += n;
		}
		return;
	}
	fr_out_flush(o);
	if (n <= o->cap) {
		memcpy(o->p, s, n);
		o->len = n;
	} else if (!o->err && fwrite(s, 1, n, o->f) != n)
		o->err = errno ? errno : EIO;
}

void fr_out_u64(struct fr_out *o, uint64_t v)
{
	char buf[20], *p;

	/* in place, where there is room for the longest */
	if (o->cap - o->len >= sizeof(buf)) {
		unsigned n = fr_digits(v);
		fr_format_u64(v, o->p + o->len + n);
		o->len += n;
		return;
	}
	p = fr_format_u64(v, buf + sizeof(buf));
	fr_out_write(o, p, (size_t)(buf + sizeof(buf) - p));
}

void fr_out_i64(struct fr_out *o, int64_t v)
{
	if (v < 0) {
		fr_out_putc(o, '-');
		fr_out_u64(o, -(uint64_t)v);
	} else
		fr_out_u64(o, (uint64_t)v);
}

void fr_out_pad(struct fr_out *o, const char *s, unsigned width)
{
	size_t n = strlen(s);

	fr_out_write(o, s, n);
	for (; n < width; n++)
		fr_out_putc(o, ' ');
}

void fr_out_u64_pad(struct fr_out *o, uint64_t v, unsigned width)
{
	char buf[20], *p = fr_format_u64(v, buf + sizeof(buf));
	size_t n = (size_t)(buf + sizeof(buf) - p);

	fr_out_write(o, p, n);
	for (; n < width; n++)
		fr_out_putc(o, ' ');
}

#define LANES(b) (0x0101010101010101ull * (uint8_t)(b))

/* Eight bytes at a time (SWAR); exact per-byte masks, 0x80 in each lane
 * where the byte of @w is zero / below @n (n <= 0x80). */
static inline uint64_t zero_lanes(uint64_t w)
{
	return ~(((w & LANES(0x7f)) + LANES(0x7f)) | w) & LANES(0x80);
}

static inline uint64_t below_lanes(uint64_t w, uint8_t n)
{
	return ~(((w & LANES(0x7f)) + LANES(0x80 - n)) | w) & LANES(0x80);
}

/* One pass, straight into the buffer: each byte is copied, or becomes
 * @nul (a NUL, when @nul is not 0) or \xNN (other control characters, DEL,
 * backslash).  A word whose only special bytes are NULs to become @nul is
 * rewritten whole; otherwise its bytes up to the first special one are. */
static void safe(struct fr_out *o, const char *s, size_t n, char nul)
{
	static const char hex[] = "0123456789abcdef";

	while (n) {
		size_t room = o->cap - o->len, take = MIN(n, room / 4), i = 0;
		char *d = o->p + o->len;
		bool whole16 = false; /* the last 16 bytes read were copied as they are */

		if (!take) {
			fr_out_flush(o);
			continue;
		}
		while (i < take) {
			uint64_t w;
#ifdef __SSE2__
			/* sixteen at a time where the CPU has it (every x86-64) */
			/* the last, under 16, as the 16 bytes that end them when
			 * the ones before were copied as they are: those are
			 * written again, the same */
			size_t at = take - i >= 16 ? i : whole16 ? take - 16 : SIZE_MAX;
			if (at != SIZE_MAX) {
				__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + at));
				__m128i z = nul ? _mm_cmpeq_epi8(x, _mm_setzero_si128()) : _mm_setzero_si128();
				/* NULs to become @nul are not escaped */
				__m128i m = _mm_andnot_si128(z, fr_out_special_lanes(x));
				unsigned bits = (unsigned)_mm_movemask_epi8(m);
				if (at == i) {
					x = _mm_or_si128(x, _mm_and_si128(z, _mm_set1_epi8(nul)));
					_mm_storeu_si128((__m128i *)(void *)d, x);
					size_t k = bits ? (size_t)__builtin_ctz(bits) : 16;
					d += k;
					i += k;
					whole16 = k == 16;
					if (k == 16)
						continue;
				} else if (!bits) {
					x = _mm_or_si128(x, _mm_and_si128(z, _mm_set1_epi8(nul)));
					_mm_storeu_si128((__m128i *)(void *)(d - (i - at)), x);
					d += take - i;
					i = take;
					continue;
				} else
					whole16 = false;
			} else
#endif
			if (take - i >= sizeof(w)) {
				memcpy(&w, s + i, sizeof(w));
				uint64_t z = nul ? zero_lanes(w) : 0;
				uint64_t m = (below_lanes(w, 0x20) & ~z) | zero_lanes(w ^ LANES(0x7f)) |
					     zero_lanes(w ^ LANES('\\'));
				w |= (z >> 7) * (uint8_t)nul;
				memcpy(d, &w, sizeof(w));
				size_t k = m ? (size_t)__builtin_ctzll(m) / 8 : sizeof(w);
				d += k;
				i += k;
				if (k == sizeof(w))
					continue;
			}
			unsigned char c = (unsigned char)s[i++];
			if (c >= 0x20 && c != 0x7f && c != '\\')
				*d++ = (char)c;
			else if (c == 0 && nul)
				*d++ = nul;
			else {
				*d++ = '\\';
				*d++ = 'x';
				*d++ = hex[c >> 4];
				*d++ = hex[c & 15];
			}
		}
		o->len = (size_t)(d - o->p);
		s += take;
		n -= take;
	}
}

void fr_out_safe_slow(struct fr_out *o, const char *s, size_t n)
{
	safe(o, s, n, 0);
}

void fr_out_safe_list(struct fr_out *o, const char *s, size_t n, char sep)
{
	if (n && !s[n - 1])
		n--; /* the terminator of the last string */
	safe(o, s, n, sep);
}

void fr_out_printf(struct fr_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < o->cap - o->len) {
		o->len += (size_t)n;
		return;
	}
	/* did not fit (rare: the records' fields are short) */
	char *tmp = NULL;
	va_start(ap, fmt);
	n = vasprintf(&tmp, fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->err = ENOMEM;
		return;
	}
	fr_out_write(o, tmp, (size_t)n);
	free(tmp);
}
