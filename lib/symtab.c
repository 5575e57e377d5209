/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "symtab.h"

#define KERNEL_MODULE "[kernel.kallsyms]"

static uint64_t start_of(const struct fr_record *r)
{
	return fr_record_described_id(r);
}

static uint64_t end_of(const struct fr_record *r)
{
	return r->type == FR_REC_MAPPING ? r->mapping.end : r->symbol.start + r->symbol.size;
}

static int cmp_code(const void *a, const void *b)
{
	const struct fr_record *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return start_of(x) < start_of(y) ? -1 : start_of(x) > start_of(y);
}

int fr_symtab_add(struct fr_symtab *t, const struct fr_record *r)
{
	struct fr_record **v;
	size_t *n, *cap;

	/* (a new description type: a compile error here until it has its
	 * table, or says it keeps none) */
	switch ((enum fr_record_type)r->type) {
	case FR_REC_MAPPING: v = &t->maps, n = &t->nmaps, cap = &t->mapcap; break;
	case FR_REC_SYMBOL: v = &t->syms, n = &t->nsyms, cap = &t->symcap; break;
	case FR_REC_INLINE: v = &t->inls, n = &t->ninls, cap = &t->inlcap; break;
	case FR_REC_PYCODE: v = &t->pys, n = &t->npys, cap = &t->pycap; break;
	case FR_REC_CGROUP: /* in the window's own table (window-chunk.c) */
	case FR_REC_PROCESS:
	FR_RECORD_TYPES_PRINTED(FR_REC_LABEL_)
	default: /* and a number no type has */
		return 0;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct fr_record *q = realloc(*v, c * sizeof(*q));
		if (!q)
			return -ENOMEM;
		*v = q;
		*cap = c;
	}
	(*v)[(*n)++] = *r;
	return 0;
}

void fr_symtab_finish(struct fr_symtab *t)
{
	if (t->nmaps > 1)
		qsort(t->maps, t->nmaps, sizeof(*t->maps), cmp_code);
	if (t->nsyms > 1)
		qsort(t->syms, t->nsyms, sizeof(*t->syms), cmp_code);
	if (t->ninls > 1)
		qsort(t->inls, t->ninls, sizeof(*t->inls), cmp_code);
	if (t->npys > 1)
		qsort(t->pys, t->npys, sizeof(*t->pys), cmp_code);
}

void fr_symtab_done(struct fr_symtab *t)
{
	free(t->maps);
	free(t->syms);
	free(t->inls);
	free(t->pys);
	*t = (struct fr_symtab){};
}

/* The entry of @pid covering @a: the last one starting at or below it. */
static const struct fr_record *find(const struct fr_record *v, size_t n, uint32_t pid, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].pid < pid || (v[mid].pid == pid && start_of(&v[mid]) <= a))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || v[lo - 1].pid != pid || a >= end_of(&v[lo - 1]))
		return NULL;
	return &v[lo - 1];
}

/* The record of @pid at @a exactly in @v[0..n), sorted by cmp_code(). */
static const struct fr_record *find_exact(const struct fr_record *v, size_t n, uint32_t pid, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fr_record *x = &v[mid];
		if (x->pid == pid && start_of(x) == a)
			return x;
		if (x->pid < pid || (x->pid == pid && start_of(x) < a))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fr_record *fr_symtab_inline(const struct fr_symtab *t, uint32_t pid, uint64_t addr)
{
	return t ? find_exact(t->inls, t->ninls, pid, addr) : NULL;
}

size_t fr_symtab_inlined(const struct fr_symtab *t, const struct fr_record *r, unsigned i,
			 const struct fr_frame *f, struct fr_frame *out, size_t max)
{
	const struct fr_record *in;

	if (!t || !t->ninls || f->kernel || f->python || f->addr < FR_FRAME_MARKER_MAX)
		return 0;
	in = fr_symtab_inline(t, fr_record_stack_pid(r), fr_frame_lookup_addr(f->addr, i == 0));
	if (!in)
		return 0;
	return fr_frame_inlined(f, in->inl.names, in->inl.names_len, out, max);
}

size_t fr_frame_inlined(const struct fr_frame *f, const char *names, uint32_t names_len, struct fr_frame *out,
			size_t max)
{
	size_t n = 0;

	/* names NUL-separated, innermost first; an empty one (a writer's
	 * slip) names nothing and is left out */
	for (uint32_t at = 0; at < names_len && n < max;) {
		const char *p = names + at;
		const char *nul = memchr(p, 0, names_len - at);
		uint32_t len = nul ? (uint32_t)(nul - p) : names_len - at;

		if (len) {
			out[n] = *f;
			out[n].inlined = true;
			out[n].sym = p;
			out[n].sym_len = len;
			out[n].sym_off = 0;
			n++;
		}
		at += len + 1;
	}
	return n;
}

void fr_symtab_resolve(const struct fr_symtab *t, const struct fr_ksyms *ksyms, const struct fr_record *r,
		       unsigned i, uint64_t addr, struct fr_frame *ret)
{
	/* frame 0 is the interrupted instruction, the others return addresses */
	uint64_t a = fr_frame_lookup_addr(addr, i == 0);
	bool kernel = i < r->stack.kernel_frames;
	uint32_t pid = kernel ? 0 : fr_record_stack_pid(r);
	const struct fr_record *s, *m;

	*ret = (struct fr_frame){ .addr = addr, .kernel = kernel };
	/* a Python frame: named by its code object's record */
	if (!kernel && fr_frame_is_python(addr)) {
		const struct fr_record *c = t ? find_exact(t->pys, t->npys, pid, fr_frame_python_code(addr)) : NULL;
		ret->python = true;
		ret->line = fr_frame_python_line(addr);
		if (c) {
			ret->sym = c->pycode.name;
			ret->sym_len = c->pycode.name_len;
			ret->file = c->pycode.file;
			ret->file_len = c->pycode.file_len;
		}
		return;
	}
	/* why the user stack ends here (a marker this reader may not know
	 * yet: then unnamed), no code to look up */
	if (!kernel && addr < FR_FRAME_MARKER_MAX) {
		const char *marker = fr_frame_marker_name(addr);
		if (marker) {
			ret->sym = marker;
			ret->sym_len = (uint32_t)strlen(marker);
		}
		return;
	}
	s = t ? find(t->syms, t->nsyms, pid, a) : NULL;
	m = t && !kernel ? find(t->maps, t->nmaps, pid, a) : NULL;
	if (s) {
		ret->sym = s->symbol.name;
		ret->sym_len = s->symbol.name_len;
		ret->sym_off = addr - s->symbol.start;
	}
	if (kernel) {
		const char *mod = "";
		uint32_t mlen = 0;

		if (s) {
			mod = s->symbol.module;
			mlen = s->symbol.module_len;
		} else if (ksyms) {
			const struct fr_ksym *k = fr_ksyms_lookup(ksyms, a);
			if (k) {
				ret->sym = k->name;
				ret->sym_len = (uint32_t)strlen(k->name);
				ret->sym_off = addr - k->addr;
				mod = k->module;
				mlen = (uint32_t)strlen(k->module);
			}
		}
		if (mlen) {
			ret->module = mod;
			ret->module_len = mlen;
			ret->module_brackets = true;
		} else {
			ret->module = KERNEL_MODULE;
			ret->module_len = sizeof(KERNEL_MODULE) - 1;
		}
		return;
	}
	if (m) {
		ret->module = m->mapping.path;
		ret->module_len = m->mapping.path_len;
		ret->has_offset = true;
		ret->offset = m->mapping.vaddr + (addr - m->mapping.start);
		ret->build_id = m->mapping.build_id;
		ret->build_id_len = m->mapping.build_id_len;
	}
}

const char *fr_frame_module_base(const struct fr_frame *f, uint32_t *ret_len)
{
	const char *m = f->module;
	uint32_t n = f->module_len;

	if (!m) {
		*ret_len = 0;
		return NULL;
	}
	for (uint32_t i = 0; i < f->module_len; i++)
		if (f->module[i] == '/' && i + 1 < f->module_len) {
			m = f->module + i + 1;
			n = f->module_len - i - 1;
		}
	*ret_len = n;
	return m;
}

const char *fr_frame_module(const struct fr_frame *f, char *buf, size_t len)
{
	if (!f->module)
		return NULL;
	snprintf(buf, len, f->module_brackets ? "[%.*s]" : "%.*s", (int)f->module_len, f->module);
	return buf;
}

const char *fr_frame_name(const struct fr_frame *f, bool with_offset, char *buf, size_t len)
{
	uint32_t ml;
	const char *m = fr_frame_module_base(f, &ml);

	if (f->python && f->sym && f->line)
		snprintf(buf, len, "%.*s (%.*s:%" PRIu32 ")", (int)f->sym_len, f->sym, (int)f->file_len, f->file, f->line);
	else if (f->python && f->sym)
		snprintf(buf, len, "%.*s (%.*s)", (int)f->sym_len, f->sym, (int)f->file_len, f->file);
	else if (f->python)
		snprintf(buf, len, "[python]@0x%" PRIx64, fr_frame_python_code(f->addr));
	else if (f->sym && with_offset && fr_frame_sym_has_off(f))
		snprintf(buf, len, "%.*s+0x%" PRIx64, (int)f->sym_len, f->sym, f->sym_off);
	else if (f->sym)
		snprintf(buf, len, "%.*s", (int)f->sym_len, f->sym);
	else if (m && f->has_offset)
		snprintf(buf, len, "%.*s+0x%" PRIx64, (int)ml, m, f->offset);
	else
		snprintf(buf, len, f->module_brackets ? "[%.*s]@0x%" PRIx64 : "%.*s@0x%" PRIx64, m ? (int)ml : 9,
			 m ? m : "[unknown]", f->addr);
	return buf;
}
