/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "pid-map.h"

static size_t slot(uint32_t pid, size_t cap)
{
	return (size_t)((pid * 0x9E3779B1u) & (cap - 1));
}

void *fr_pid_map_get(const struct fr_pid_map *m, uint32_t pid)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot(pid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == pid)
			return m->vals[i];
	}
}

static int grow(struct fr_pid_map *m)
{
	struct fr_pid_map n = { .cap = m->cap ? m->cap * 2 : 64 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i])
			fr_pid_map_put(&n, m->keys[i], m->vals[i], NULL);
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

int fr_pid_map_put(struct fr_pid_map *m, uint32_t pid, void *val, void **old)
{
	if (old)
		*old = NULL;
	if (!val)
		return -EINVAL;
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return -ENOMEM;
	for (size_t i = slot(pid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i]) {
			m->keys[i] = pid;
			m->vals[i] = val;
			m->n++;
			return 0;
		}
		if (m->keys[i] == pid) {
			if (old)
				*old = m->vals[i];
			m->vals[i] = val;
			return 0;
		}
	}
}

void *fr_pid_map_remove(struct fr_pid_map *m, uint32_t pid)
{
	size_t i, j;
	void *v;

	if (!m->cap)
		return NULL;
	for (i = slot(pid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == pid)
			break;
	}
	v = m->vals[i];
	m->vals[i] = NULL;
	m->n--;
	/* re-place the rest of the cluster (no tombstones) */
	for (j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		uint32_t k = m->keys[j];
		void *val = m->vals[j];
		m->vals[j] = NULL;
		m->n--;
		fr_pid_map_put(m, k, val, NULL);
	}
	return v;
}

void *fr_pid_map_next(const struct fr_pid_map *m, size_t *i, uint32_t *ret_pid)
{
	for (; *i < m->cap; (*i)++)
		if (m->vals[*i]) {
			if (ret_pid)
				*ret_pid = m->keys[*i];
			return m->vals[(*i)++];
		}
	return NULL;
}

void fr_pid_map_done(struct fr_pid_map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct fr_pid_map){};
}
