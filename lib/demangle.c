/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "record.h"
#include "symtab.h"

/* libstdc++'s (cxxabi.h is C++): returns a malloc'ed string, status 0 */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* An open-addressing table of names: the mangled name and what it
 * demangles to (NULL: it does not), one allocation each. */
struct entry {
	uint64_t hash;
	char *mangled; /* NUL-terminated; the demangled name follows its NUL */
	uint32_t mangled_len, demangled_len;
	bool ok;
};

struct fr_demangler {
	pthread_mutex_t lock;
	struct entry *t;
	size_t cap, n; /* cap: a power of two */
	struct fr_demangler_stats st;
};

static uint64_t hash_of(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	return h | 1; /* 0 marks an empty slot */
}

int fr_demangler_new(struct fr_demangler **ret)
{
	struct fr_demangler *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	*ret = d;
	return 0;
}

struct fr_demangler *fr_demangler_free(struct fr_demangler *d)
{
	if (!d)
		return NULL;
	for (size_t i = 0; i < d->cap; i++)
		free(d->t[i].mangled);
	free(d->t);
	pthread_mutex_destroy(&d->lock);
	free(d);
	return NULL;
}

static struct entry *slot(struct entry *t, size_t cap, uint64_t h, const char *name, size_t len)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!t[i].hash || (t[i].hash == h && t[i].mangled_len == len && memcmp(t[i].mangled, name, len) == 0))
			return &t[i];
}

static bool grow(struct fr_demangler *d)
{
	size_t cap = d->cap ? d->cap * 2 : 1024;
	struct entry *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < d->cap; i++)
		if (d->t[i].hash)
			*slot(t, cap, d->t[i].hash, d->t[i].mangled, d->t[i].mangled_len) = d->t[i];
	free(d->t);
	d->t = t;
	d->st.bytes += (cap - d->cap) * sizeof(*t);
	d->cap = cap;
	return true;
}

/* A new entry for @name: demangled now (outside nothing: under the lock,
 * so that a name is demangled once). */
static struct entry *add(struct fr_demangler *d, struct entry *e, uint64_t h, const char *name, size_t len)
{
	char key[FR_DEMANGLE_NAME_MAX + 1];
	char *out;
	size_t olen = 0;
	int status = -1;

	memcpy(key, name, len);
	key[len] = 0;
	out = __cxa_demangle(key, NULL, NULL, &status);
	if (status == 0 && out)
		olen = strlen(out);
	if (d->st.bytes + len + olen + 2 > FR_DEMANGLE_BYTES_MAX) {
		free(out);
		d->st.not_kept++;
		return NULL;
	}
	e->mangled = malloc(len + 1 + olen + 1);
	if (!e->mangled) {
		free(out);
		return NULL;
	}
	memcpy(e->mangled, key, len + 1);
	if (olen)
		memcpy(e->mangled + len + 1, out, olen + 1);
	free(out);
	e->hash = h;
	e->mangled_len = (uint32_t)len;
	e->demangled_len = (uint32_t)olen;
	e->ok = olen > 0;
	if (!e->ok)
		d->st.failed++;
	d->n++;
	d->st.names++;
	d->st.bytes += len + olen + 2;
	return e;
}

const char *fr_demangle(struct fr_demangler *d, const char *name, size_t len, uint32_t *ret_len)
{
	const char *r = NULL;
	uint64_t h;
	struct entry *e;

	if (len < 3 || name[0] != '_' || name[1] != 'Z')
		return NULL;
	h = hash_of(name, len);
	pthread_mutex_lock(&d->lock);
	if (len > FR_DEMANGLE_NAME_MAX) {
		d->st.not_kept++;
		goto out;
	}
	if ((d->n + 1) * 4 > d->cap * 3 && !grow(d))
		goto out;
	e = slot(d->t, d->cap, h, name, len);
	if (!e->hash)
		e = add(d, e, h, name, len);
	if (e && e->ok) {
		r = e->mangled + e->mangled_len + 1;
		*ret_len = e->demangled_len;
	}
out:
	pthread_mutex_unlock(&d->lock);
	return r;
}

void fr_demangler_get_stats(struct fr_demangler *d, struct fr_demangler_stats *ret)
{
	pthread_mutex_lock(&d->lock);
	*ret = d->st;
	pthread_mutex_unlock(&d->lock);
}

void fr_frame_demangle(struct fr_demangler *d, struct fr_frame *f)
{
	const char *n;
	uint32_t len;

	if (!d || f->kernel || !f->sym || f->addr < FR_FRAME_MARKER_MAX)
		return;
	n = fr_demangle(d, f->sym, f->sym_len, &len);
	if (!n)
		return;
	f->mangled = f->sym;
	f->mangled_len = f->sym_len;
	f->sym = n;
	f->sym_len = len;
}
