/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "big-alloc.h"
#include "boot-files.h"
#include "ksyms.h"
#include "macro.h"
#include "range-find.h"

/* A snapshot larger than this is not a kallsyms file. */
#define SNAPSHOT_MAX (256u << 20)
/* kallsyms has no sizes: a function reaches the next symbol of any kind,
 * at most this far (the last one before a gap, e.g. _einittext, would
 * otherwise cover every address up to the modules). */
#define SIZE_MAX_GUESS (1u << 20)
#define LAST_SIZE 4096

_Static_assert(offsetof(struct fr_ksym, addr) == offsetof(struct fr_range, start) &&
	       offsetof(struct fr_ksym, size) == offsetof(struct fr_range, size), "fr_ksym starts as fr_range");

struct fr_ksyms {
	char *text;
	size_t text_map; /* 0: text is malloc'ed; else its fr_big_alloc() size */
	struct fr_ksym *v;
	size_t n;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct fr_ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Frees @k's text, however it was allocated. */
static void text_free(struct fr_ksyms *k)
{
	if (k->text_map)
		fr_big_free(k->text, k->text_map);
	else
		free(k->text);
	k->text = NULL;
}

/* Parses @text into @k (which owns it already). */
static int parse(struct fr_ksyms *k, char *text, size_t len)
{
	size_t lines = 1, nonzero = 0;
	char *p = text, *end = text + len;
	bool sorted = true;

	/* the table at its final size, not grown by copies: one entry a line */
	for (const char *q = text; (q = memchr(q, '\n', (size_t)(end - q))); q++)
		lines++;
	k->v = malloc(lines * sizeof(*k->v));
	if (!k->v)
		return -ENOMEM;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *name, *mod = NULL, *q;
		uint64_t addr;
		char type;

		if (!nl)
			nl = end; /* last line without newline: text[len] is ours (ksyms.h) */
		*nl = 0;
		addr = strtoull(p, &q, 16);
		if (q == p || q + 3 > nl || q[0] != ' ' || q[2] != ' ')
			goto next;
		type = q[1];
		name = q + 3;
		q = strchr(name, '\t');
		if (q) {
			*q = 0;
			mod = q + 1;
			if (*mod == '[') {
				mod++;
				q = strchr(mod, ']');
				if (q)
					*q = 0;
			}
		}
		if (!*name)
			goto next;
		/* other symbols only bound functions (module NULL marks them) */
		sorted = sorted && (!k->n || k->v[k->n - 1].addr <= addr);
		k->v[k->n++] = (struct fr_ksym){ .addr = addr, .name = name,
						  .module = type == 't' || type == 'T' || type == 'w' || type == 'W'
								? (mod ? mod : "") : NULL };
		nonzero += addr != 0;
next:
		p = nl + 1;
	}
	if (!nonzero)
		return -ENODATA;
	/* a snapshot is saved sorted (fr_ksyms_save()); /proc/kallsyms lists
	 * the modules' symbols after the kernel's */
	if (!sorted)
		qsort(k->v, k->n, sizeof(*k->v), cmp_sym);
	size_t nf = 0;
	for (size_t i = 0; i < k->n; i++) {
		size_t j = i + 1;
		if (!k->v[i].module)
			continue;
		/* aliases share an address: the size reaches the next other one */
		while (j < k->n && k->v[j].addr == k->v[i].addr)
			j++;
		k->v[i].size = j < k->n ? MIN(k->v[j].addr - k->v[i].addr, SIZE_MAX_GUESS) : LAST_SIZE;
		k->v[nf++] = k->v[i];
	}
	k->n = nf;
	if (nf) {
		struct fr_ksym *v = realloc(k->v, nf * sizeof(*v));
		if (v)
			k->v = v;
	}
	return 0;
}

/* Takes @text (malloc'ed, or fr_big_alloc()'ed of @text_map bytes). */
static int parse_owned(char *text, size_t len, size_t text_map, struct fr_ksyms **ret)
{
	struct fr_ksyms *k = calloc(1, sizeof(*k));
	int r;

	if (!k) {
		text_free(&(struct fr_ksyms){ .text = text, .text_map = text_map });
		return -ENOMEM;
	}
	k->text = text;
	k->text_map = text_map;
	r = parse(k, text, len);
	if (r < 0) {
		fr_ksyms_free(k);
		return r;
	}
	*ret = k;
	return 0;
}

int fr_ksyms_parse(char *text, size_t len, struct fr_ksyms **ret)
{
	return parse_owned(text, len, 0, ret);
}

/* Reads a whole file of unknown size (proc files report 0). */
static int read_all(int fd, size_t max, char **ret, size_t *ret_len)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *b;
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			b = realloc(buf, cap + 1);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* Moves @k's names and modules into a pool of their own and frees the
 * text they were parsed in: /proc/kallsyms lines are two thirds address,
 * type and padding (5.4 MB of text for 121 k functions, the pool 2.6 MB),
 * and the daemon holds its table for its whole life. */
static int compact(struct fr_ksyms *k)
{
	size_t bytes = 0, off = 0;
	const char *last_mod = NULL, *last_copy = NULL;
	char *pool;

	for (size_t i = 0; i < k->n; i++)
		bytes += strlen(k->v[i].name) + 1 + (*k->v[i].module ? strlen(k->v[i].module) + 1 : 0);
	pool = malloc(bytes ? bytes : 1);
	if (!pool)
		return -ENOMEM;
	for (size_t i = 0; i < k->n; i++) {
		struct fr_ksym *e = &k->v[i];
		size_t l = strlen(e->name) + 1;

		memcpy(pool + off, e->name, l);
		e->name = pool + off;
		off += l;
		if (!*e->module)
			e->module = "";
		else if (last_mod && strcmp(e->module, last_mod) == 0)
			e->module = last_copy; /* a module's functions come together */
		else {
			l = strlen(e->module) + 1;
			memcpy(pool + off, e->module, l);
			last_mod = e->module;
			e->module = last_copy = pool + off;
			off += l;
		}
	}
	text_free(k);
	k->text = pool;
	k->text_map = 0;
	return 0;
}

int fr_ksyms_load_proc(struct fr_ksyms **ret)
{
	_cleanup_close_ int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	char *text;
	size_t len;
	int r;

	if (fd < 0)
		return negative_errno();
	r = read_all(fd, SNAPSHOT_MAX, &text, &len);
	if (r < 0)
		return r;
	r = fr_ksyms_parse(text, len, ret);
	if (r < 0)
		return r;
	r = compact(*ret);
	if (r < 0)
		*ret = fr_ksyms_free(*ret);
	return r;
}

struct fr_ksyms *fr_ksyms_free(struct fr_ksyms *k)
{
	if (!k)
		return NULL;
	text_free(k);
	free(k->v);
	free(k);
	return NULL;
}

size_t fr_ksyms_count(const struct fr_ksyms *k)
{
	return k ? k->n : 0;
}

const struct fr_ksym *fr_ksyms_lookup(const struct fr_ksyms *k, uint64_t addr)
{
	return k ? fr_range_find(k->v, k->n, sizeof(*k->v), addr) : NULL;
}

static void snapshot_name(const char *boot_id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.zst", FR_KSYMS_DIR, boot_id);
}

void fr_ksyms_prune(int dir_fd, uint64_t oldest_wall_ns)
{
	fr_boot_files_prune(dir_fd, FR_KSYMS_DIR, FR_KSYMS_KEEP, oldest_wall_ns);
}

bool fr_ksym_is_bpf(const struct fr_ksym *k)
{
	return strcmp(k->module, "bpf") == 0;
}

bool fr_ksyms_same_functions(const struct fr_ksyms *a, const struct fr_ksyms *b)
{
	size_t i = 0, j = 0;

	if (!a || !b)
		return false;
	/* sizes may differ: a snapshot keeps no data symbols to end functions */
	for (;; i++, j++) {
		while (i < a->n && fr_ksym_is_bpf(&a->v[i]))
			i++;
		while (j < b->n && fr_ksym_is_bpf(&b->v[j]))
			j++;
		if (i == a->n || j == b->n)
			return i == a->n && j == b->n;
		if (a->v[i].addr != b->v[j].addr || strcmp(a->v[i].name, b->v[j].name) != 0 ||
		    strcmp(a->v[i].module, b->v[j].module) != 0)
			return false;
	}
}

/* Writes @len bytes of @buf to @fd. */
static int write_all(int fd, const void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		off += (size_t)n;
	}
	return 0;
}

/* Feeds @in to @cctx, writing what comes out to @fd. */
static int compress_to(ZSTD_CCtx *cctx, int fd, ZSTD_inBuffer *in, ZSTD_EndDirective end, void *out, size_t out_cap)
{
	for (;;) {
		ZSTD_outBuffer o = { out, out_cap, 0 };
		size_t left = ZSTD_compressStream2(cctx, &o, in, end);
		int r;

		if (ZSTD_isError(left))
			return -EIO;
		r = write_all(fd, out, o.pos);
		if (r < 0)
			return r;
		if (end == ZSTD_e_end ? left == 0 : in->pos == in->size)
			return 0;
	}
}

/* One line of the snapshot for @s into @buf (at most @cap bytes): its
 * length, which may be @cap or more (then nothing usable was written). */
static size_t format_line(const struct fr_ksym *s, char *buf, size_t cap)
{
	int n = *s->module ? snprintf(buf, cap, "%016" PRIx64 " t %s\t[%s]\n", s->addr, s->name, s->module)
			   : snprintf(buf, cap, "%016" PRIx64 " t %s\n", s->addr, s->name);
	return n < 0 ? cap : (size_t)n;
}

/* The snapshot's text, compressed as it is formatted, into @fd: neither
 * the text nor its compressed form is held whole (5.4 and ~1 MB for 121 k
 * functions, with zstd's context for the whole input besides: 5.6 MB of
 * the daemon's peak RSS at its first start of a boot).  The frame says
 * the text's size, as readers require (fr_ksyms_load_snapshot()). */
static int write_snapshot(const struct fr_ksyms *k, int fd)
{
	enum { IN_CAP = 64 << 10 };
	_cleanup_free_ char *in = malloc(IN_CAP), *out = NULL;
	size_t total = 0, fill = 0, out_cap = ZSTD_CStreamOutSize();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_inBuffer ib;
	int r = -ENOMEM;

	out = malloc(out_cap);
	if (!in || !out || !cctx)
		goto done;
	for (size_t i = 0; i < k->n; i++) {
		size_t l = format_line(&k->v[i], in, IN_CAP);
		if (l >= IN_CAP) {
			r = -E2BIG; /* a name kallsyms cannot have */
			goto done;
		}
		total += l;
	}
	r = -EIO;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, total)))
		goto done;
	for (size_t i = 0; i <= k->n; i++) {
		size_t l = i < k->n ? format_line(&k->v[i], in + fill, IN_CAP - fill) : 0;
		/* full (or the end): what it has goes, and the line again */
		if (i == k->n || l >= IN_CAP - fill) {
			ib = (ZSTD_inBuffer){ in, fill, 0 };
			r = compress_to(cctx, fd, &ib, i == k->n ? ZSTD_e_end : ZSTD_e_continue, out, out_cap);
			if (r < 0 || i == k->n)
				goto done;
			fill = 0;
			l = format_line(&k->v[i], in, IN_CAP);
		}
		fill += l;
	}
done:
	ZSTD_freeCCtx(cctx);
	return r;
}

int fr_ksyms_save(const struct fr_ksyms *k, int dir_fd, const char *boot_id)
{
	_cleanup_close_ int fd = -EBADF;
	char name[128], tmp[160];
	int r;

	snapshot_name(boot_id, name, sizeof(name));
	if (faccessat(dir_fd, name, F_OK, 0) == 0)
		return 0;
	if (mkdirat(dir_fd, FR_KSYMS_DIR, 0750) < 0 && errno != EEXIST)
		return negative_errno();
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	/* a new file of ours, never one (or a link) left there */
	(void)unlinkat(dir_fd, tmp, 0);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return negative_errno();
	r = write_snapshot(k, fd);
	if (r < 0)
		goto fail;
	if (fchmod(fd, 0640) < 0 || fsync(fd) < 0 || renameat(dir_fd, tmp, dir_fd, name) < 0) {
		r = negative_errno();
		goto fail;
	}
	fr_ksyms_prune(dir_fd, 0);
	return 1;
fail:
	(void)unlinkat(dir_fd, tmp, 0);
	return r;
}

int fr_ksyms_load_snapshot(int dir_fd, const char *boot_id, struct fr_ksyms **ret)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *z = NULL;
	char name[128], *text;
	unsigned long long size;
	size_t zlen, n;
	int r;

	snapshot_name(boot_id, name, sizeof(name));
	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	r = read_all(fd, SNAPSHOT_MAX, &z, &zlen);
	if (r < 0)
		return r;
	size = ZSTD_getFrameContentSize(z, zlen);
	if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > SNAPSHOT_MAX)
		return -EBADMSG;
	/* megabytes written once: huge pages where the kernel has them */
	text = fr_big_alloc(size + 1);
	if (!text)
		return -ENOMEM;
	n = ZSTD_decompress(text, size, z, zlen);
	if (ZSTD_isError(n) || n != size) {
		fr_big_free(text, size + 1);
		return -EBADMSG;
	}
	text[n] = 0;
	return parse_owned(text, n, size + 1, ret);
}

uint64_t fr_ksyms_disk_usage(int dir_fd)
{
	return fr_boot_files_disk_usage(dir_fd, FR_KSYMS_DIR);
}
