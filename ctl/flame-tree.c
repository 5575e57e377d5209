/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* GLib's MIN and MAX give way to lib/macro.h's (the same definitions) */
#undef MIN
#undef MAX
#include "../lib/macro.h"
#include "../lib/window.h"
#include "flame-tree.h"
#include "output-folded.h"
#include "string-counts.h"

struct fnode {
	const char *name;
	size_t len;
	uint64_t v;
	struct fnode *child, *last, *next;
};

/* Folded stacks in frame order: ';' sorts before every other byte, so
 * that the stacks under one path are together. */
static int cmp_frames(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)(*(const struct fr_count *const *)a)->key;
	const unsigned char *y = (const unsigned char *)(*(const struct fr_count *const *)b)->key;

	for (;; x++, y++) {
		int cx = *x == ';' ? 1 : *x ? *x + 1 : 0, cy = *y == ';' ? 1 : *y ? *y + 1 : 0;
		if (cx != cy)
			return cx - cy;
		if (!cx)
			return 0;
	}
}

static struct fnode *fnode_new(struct fnode *parent, const char *name, size_t len)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = name;
	n->len = len;
	if (parent->last)
		parent->last->next = n;
	else
		parent->child = n;
	parent->last = n;
	return n;
}

static void fnode_free(struct fnode *n)
{
	while (n) {
		struct fnode *next = n->next;
		fnode_free(n->child);
		free(n);
		n = next;
	}
}

/* The tree of @f's stacks under @root (its names point into @f). */
static int flame_tree(struct fr_folded *f, struct fnode *root)
{
	const struct fr_count *v;
	size_t n = fr_folded_stacks(f, &v);
	const struct fr_count **order = malloc(MAX(n, (size_t)1) * sizeof(*order));
	struct fnode *path[FR_FRAMES_EXPANDED_MAX + 2];
	size_t depth = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = &v[i];
	qsort(order, n, sizeof(*order), cmp_frames);
	for (size_t i = 0; i < n; i++) {
		const char *p = order[i]->key;
		size_t d = 0;

		root->v += order[i]->n;
		while (*p && d < ELEMENTSOF(path)) {
			size_t len = strcspn(p, ";");
			/* the same frame as the previous stack's at this depth */
			if (d < depth && path[d]->len == len && memcmp(path[d]->name, p, len) == 0)
				path[d]->v += order[i]->n;
			else {
				struct fnode *x = fnode_new(d ? path[d - 1] : root, p, len);
				if (!x) {
					free(order);
					return -ENOMEM;
				}
				x->v = order[i]->n;
				path[d] = x;
				depth = d + 1; /* deeper ones are another path's */
			}
			d++;
			p += len + (p[len] == ';');
		}
		depth = d;
	}
	free(order);
	return 0;
}

/* Frames drawn of @n's subtree when those under @min are one "[other]"
 * per parent. */
static size_t flame_count(const struct fnode *n, uint64_t min)
{
	size_t c = 1;
	bool other = false;

	for (const struct fnode *x = n->child; x; x = x->next)
		if (x->v >= min)
			c += flame_count(x, min);
		else
			other = true;
	return c + other;
}

static struct json_object *name_json(const struct fnode *n)
{
	gchar *v = g_utf8_make_valid(n->name, (gssize)n->len);
	struct json_object *o = json_object_new_string(v);

	g_free(v);
	return o;
}

/* @n's child named as @x, in the other tree; NULL when none. */
static const struct fnode *same_child(const struct fnode *n, const struct fnode *x)
{
	for (const struct fnode *c = n ? n->child : NULL; c; c = c->next)
		if (c->len == x->len && memcmp(c->name, x->name, x->len) == 0)
			return c;
	return NULL;
}

/* The tree under @n as JSON; with @base (differential), each frame's
 * weight there times @scale as "b". */
static struct json_object *node_json(const struct fnode *n, const struct fnode *base, bool diff, double scale,
				     uint64_t min, uint64_t *aggregated)
{
	struct json_object *o = json_object_new_object(), *c = json_object_new_array();
	uint64_t other = 0, nother = 0;
	double other_b = 0;

	json_object_object_add(o, "n", name_json(n));
	json_object_object_add(o, "v", json_object_new_int64((int64_t)n->v));
	if (diff)
		json_object_object_add(o, "b", json_object_new_int64(base ? (int64_t)llround((double)base->v * scale) : 0));
	for (const struct fnode *x = n->child; x; x = x->next) {
		const struct fnode *bx = diff ? same_child(base, x) : NULL;
		if (x->v >= min)
			json_object_array_add(c, node_json(x, bx, diff, scale, min, aggregated));
		else {
			other += x->v;
			other_b += bx ? (double)bx->v * scale : 0;
			nother++;
		}
	}
	if (nother) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "n", json_object_new_string(nother == 1 ? "[other: 1 frame]" : "[other]"));
		json_object_object_add(x, "v", json_object_new_int64((int64_t)other));
		if (diff)
			json_object_object_add(x, "b", json_object_new_int64((int64_t)llround(other_b)));
		json_object_array_add(c, x);
		*aggregated += nother;
	}
	json_object_object_add(o, "c", c);
	return o;
}

/* The lightest frames go first: under 1/10000 of the whole is under a
 * tenth of a pixel; then doubling until at most @max are drawn. */
static uint64_t prune_min(const struct fnode *root, size_t max)
{
	uint64_t min = MAX(root->v / 10000, (uint64_t)1);

	while (flame_count(root, min) > max)
		min *= 2;
	return min;
}

struct json_object *flame_tree_json(struct fr_folded *f, size_t max, uint64_t *aggregated)
{
	struct fnode root = { .name = "all", .len = 3 };
	struct json_object *o = NULL;

	if (flame_tree(f, &root) == 0 && root.v)
		o = node_json(&root, NULL, false, 0, prune_min(&root, max), aggregated);
	fnode_free(root.child);
	return o;
}

struct json_object *flame_diff_json(struct fr_folded *now, struct fr_folded *base, double scale, size_t max,
				    uint64_t *aggregated)
{
	struct fnode rn = { .name = "all", .len = 3 }, rb = { .name = "all", .len = 3 };
	struct json_object *o = NULL;

	if (flame_tree(now, &rn) == 0 && flame_tree(base, &rb) == 0 && rn.v && rb.v)
		o = node_json(&rn, &rb, true, scale, prune_min(&rn, max), aggregated);
	fnode_free(rn.child);
	fnode_free(rb.child);
	return o;
}
