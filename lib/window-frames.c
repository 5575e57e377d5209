/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sample's frames, named: from the code its chunk describes, kernel
 * frames also from the store's snapshot of the boot's kernel symbols
 * (loaded once per boot, on first use) or in an incident file from its
 * names chunks of the boot (lib/kernel-names.h), user frames the chunk
 * left unnamed from the window's late names (lib/late-names.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "boots.h"
#include "demangle.h"
#include "kernel-names.h"
#include "ksyms.h"
#include "late-names.h"
#include "macro.h"
#include "record-fields.h"
#include "record.h"
#include "store-format.h"
#include "window-internal.h"

struct fr_window_ksyms {
	uint8_t boot_id[16];
	struct fr_ksyms *k; /* NULL: no snapshot */
};
_Static_assert(offsetof(struct fr_window_ksyms, boot_id) == 0, "fr_boot_slot()");

/* The store's kernel symbol snapshot of @boot_id, loaded once (under the
 * lock: threads print in parallel). */
static const struct fr_ksyms *window_ksyms(struct fr_window *w, const uint8_t boot_id[16])
{
	struct fr_window_ksyms *v;
	const struct fr_ksyms *k = NULL;
	bool added;
	char id[33];

	if (w->store_fd < 0)
		return NULL;
	pthread_mutex_lock(&w->ksyms_lock);
	v = fr_boot_slot((void **)&w->ksyms, &w->nksyms, sizeof(*v), boot_id, &added);
	if (v && added)
		(void)fr_ksyms_load_snapshot(w->store_fd, fr_format_boot_id(boot_id, id, sizeof(id)), &v->k);
	if (v)
		k = v->k;
	pthread_mutex_unlock(&w->ksyms_lock);
	return k;
}

struct prefetch {
	struct fr_window *w;
	uint8_t boot_id[16];
};

static void *prefetch_run(void *userdata)
{
	struct prefetch *p = userdata;

	(void)window_ksyms(p->w, p->boot_id);
	free(p);
	return NULL;
}

/* Loads the snapshot of @boot_id in a thread of its own while the window's
 * chunks load (its 1 MB of zstd and 121 k lines took 13 ms of every dump,
 * on the first kernel frame); the first lookup waits for it on the lock. */
void window_ksyms_prefetch(struct fr_window *w, const uint8_t boot_id[16])
{
	struct prefetch *p;

	if (w->store_fd < 0 || w->ksyms_prefetching || !(p = malloc(sizeof(*p))))
		return;
	p->w = w;
	memcpy(p->boot_id, boot_id, 16);
	if (pthread_create(&w->ksyms_prefetch, NULL, prefetch_run, p) == 0)
		w->ksyms_prefetching = true;
	else
		free(p);
}

void fr_window_set_late_names(struct fr_window *w, struct fr_late_names *ln)
{
	w->late_names = ln;
}

int fr_window_frames(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *out,
		     size_t max)
{
	uint64_t addr[FR_SAMPLE_FRAMES_MAX];
	const struct fr_symtab *t = e->chunk < w->nchunks ? &w->cd[e->chunk].symtab : NULL;
	const struct fr_ksyms *ks = NULL;
	int n = fr_record_frames(&e->r, addr, FR_SAMPLE_FRAMES_MAX);
	size_t k = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n && k < max; i++) {
		struct fr_frame f;

		fr_symtab_resolve(t, ks, &e->r, (unsigned)i, addr[i], &f);
		/* a kernel frame the chunk did not name: try the snapshot,
		 * or the names an incident carries in its stead (the same) */
		if (f.kernel && !f.sym && !ks && t) {
			const struct fr_symtab *nt;
			ks = window_ksyms(w, w->chunks[e->chunk].boot_id);
			if (ks)
				fr_symtab_resolve(t, ks, &e->r, (unsigned)i, addr[i], &f);
			else if ((nt = fr_kernel_names_find(w->names, w->chunks[e->chunk].boot_id)))
				fr_symtab_resolve(nt, NULL, &e->r, (unsigned)i, addr[i], &f);
		}
		/* the functions inlined where a user frame is are called
		 * from it, as it were: leaf side of it, innermost first */
		if (!f.kernel) {
			size_t m = fr_symtab_inlined(t, &e->r, (unsigned)i, &f, out + k, max - k);

			/* one the chunk did not name: its build's debug file
			 * may be here (names, and inlined functions) */
			if (!m && !f.sym && w->late_names)
				m = fr_late_names_resolve(w->late_names, &f, i == 0, out + k, max - k);
			k += m;
		}
		if (k < max)
			out[k++] = f;
	}
	for (size_t i = 0; i < k; i++)
		fr_frame_demangle(w->demangler, &out[i]);
	return (int)k;
}

int fr_window_waker_frames(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *out,
			   size_t max)
{
	struct fr_window_entry v;

	if (e->r.type != FR_REC_OFFCPU || !e->r.sched.waker.context)
		return 0;
	v = *e;
	fr_record_waker_view(&e->r, &v.r);
	return fr_window_frames(w, &v, out, max);
}

unsigned fr_window_ncpu(const struct fr_window *w)
{
	unsigned n = 0;

	/* not keyframes or an incident's kernel names (FR_CPU_META,
	 * FR_CPU_NAMES), nor a hostile header's cpu */
	for (size_t i = 0; i < w->nchunks; i++)
		if (w->chunks[i].cpu != FR_CPU_META && w->chunks[i].cpu != FR_CPU_NAMES && w->chunks[i].cpu < 4096)
			n = MAX(n, w->chunks[i].cpu + 1);
	return n;
}

void window_ksyms_free(struct fr_window *w)
{
	if (w->ksyms_prefetching)
		pthread_join(w->ksyms_prefetch, NULL);
	w->ksyms_prefetching = false;
	for (size_t i = 0; i < w->nksyms; i++)
		fr_ksyms_free(w->ksyms[i].k);
	free(w->ksyms);
	w->ksyms = NULL;
	w->nksyms = 0;
}
