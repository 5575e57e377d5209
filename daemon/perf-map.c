/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per process: the lines read so far, as sorted arrays of disjoint
 * segments, each the visible part of one line's symbol (a later line
 * hides what it covers of earlier ones, possibly splitting one in two).
 * Lines that start past the end of everything held, as JITs mostly write
 * them, are appended to the segments directly.  Any other line goes to a
 * pending list, in file order; after each read those are painted over a
 * smaller array of recent segments, which is painted over the segments
 * when it has grown to a sixteenth of them.  A lookup tries the recent
 * segments, then the others.  Names live in one buffer per process; a
 * hidden or trimmed segment leaves its name there until the buffer is
 * compacted under memory pressure.
 *
 * The file is not kept open: each read opens it again through
 * /proc/PID, so no descriptors are held and a replaced file (other
 * inode, or shorter than what was read) is noticed and read from the
 * start.  p->off is where the next unread line starts; a partial last
 * line is read again next time rather than kept.
 *
 * Memory counts capacities: the three arrays, names and the process
 * record.  Before an array grows (by half), the least recently used
 * other processes go; if the one growing is alone over the bound, it is
 * trimmed to half of it, keeping its newest lines, so that it takes many
 * more lines before the next trim.
 *
 * Long because reading, painting and trimming work on the same three
 * arrays, and each keeps the invariants the others rely on.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "perf-map.h"
#include "proc-access.h"

/* One read; also the longest line taken. */
#define BLOCK (64 * 1024)
#define MIN_BYTES (64 * 1024)
/* Between tries for growth of one process's file. */
#define RETRY_NS (100 * 1000000ULL)
/* Between reads of the rest of long files, over all processes.  A block
 * takes some 0.3 ms to take in (1 ms when most lines overlap earlier
 * ones, among a million): at most a quarter of a CPU while a huge file
 * loads, at 16 MiB/s. */
#define CONTINUE_NS (4 * 1000000ULL)

struct seg {
	uint64_t start;     /* visible part: [start, start + len) */
	uint32_t len;
	uint32_t head;      /* start - the symbol's start (a piece after a later line) */
	uint32_t sym_size;  /* lines over 4 GiB are refused: no JIT emits such code */
	uint32_t name_off;  /* into names, NUL-terminated */
	uint32_t name_len;
	uint32_t seq;       /* line number, saturating: trimming keeps the highest */
};
_Static_assert(sizeof(struct seg) == 32, "a segment is 32 bytes");

struct proc {
	uint32_t pid;
	struct proc *prev, *next; /* LRU, most recent at head */
	struct seg *segs, *rec, *pend;
	size_t nsegs, segs_cap, nrec, rec_cap, npend, pend_cap;
	char *names;
	size_t names_len, names_cap;
	size_t bytes;             /* what this record counts against max_bytes */
	uint64_t off;             /* file offset of the next unread line */
	uint64_t size_seen;       /* file size at the last read */
	uint64_t tried_ns;        /* CLOCK_MONOTONIC of the last try */
	dev_t dev;
	ino_t ino;
	uint32_t seq;
	bool have_file;
	bool skipping;            /* inside a line longer than BLOCK */
	bool more;                /* the last read filled BLOCK: there may be more */
};

struct fr_perf_maps {
	size_t max_bytes, proc_max; /* proc_max: one process, also bounded by 32-bit name offsets */
	unsigned max_procs, nprocs;
	struct fr_pid_map procs;
	struct proc *head, *tail;
	uint64_t continue_ns;       /* no continued read before */
	char *buf;                  /* BLOCK bytes */
	struct fr_perf_maps_stats stats;
};

static uint64_t seg_end(const struct seg *s)
{
	return s->start + s->len;
}

static size_t proc_bytes(const struct proc *p)
{
	return sizeof(*p) + (p->segs_cap + p->rec_cap + p->pend_cap) * sizeof(struct seg) + p->names_cap;
}

static void account(struct fr_perf_maps *m, struct proc *p)
{
	m->stats.held -= p->bytes;
	p->bytes = proc_bytes(p);
	m->stats.held += p->bytes;
}

static void lru_unlink(struct fr_perf_maps *m, struct proc *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		m->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		m->tail = p->prev;
	p->prev = p->next = NULL;
}

static void lru_push(struct fr_perf_maps *m, struct proc *p)
{
	p->next = m->head;
	if (m->head)
		m->head->prev = p;
	m->head = p;
	if (!m->tail)
		m->tail = p;
}

/* Forgets what was read (the file changed under us, or a new process). */
static void proc_reset(struct fr_perf_maps *m, struct proc *p)
{
	free(p->segs);
	free(p->rec);
	free(p->pend);
	free(p->names);
	p->segs = p->rec = p->pend = NULL;
	p->names = NULL;
	p->nsegs = p->segs_cap = p->nrec = p->rec_cap = p->npend = p->pend_cap = 0;
	p->names_len = p->names_cap = 0;
	p->off = p->size_seen = 0;
	p->seq = 0;
	p->have_file = p->skipping = p->more = false;
	account(m, p);
}

static void proc_drop(struct fr_perf_maps *m, struct proc *p)
{
	proc_reset(m, p);
	m->stats.held -= p->bytes;
	lru_unlink(m, p);
	fr_pid_map_remove(&m->procs, p->pid);
	m->nprocs--;
	free(p);
}

/* Paints @b (later lines, sorted, disjoint) over @a (earlier ones,
 * likewise) into @out: all of @b and what of @a it leaves visible, sorted
 * and disjoint.  @out holds na + 2 * nb (each of @b splits at most one
 * piece of @a in two). */
static size_t paint(const struct seg *a, size_t na, const struct seg *b, size_t nb, struct seg *out)
{
	size_t i = 0, j = 0, n = 0;
	struct seg cur = {};
	bool have = false;

	for (;;) {
		if (!have) {
			if (i == na)
				break;
			cur = a[i++];
			have = true;
		}
		if (j == nb) {
			out[n++] = cur;
			have = false;
			continue;
		}
		const struct seg *y = &b[j];
		if (seg_end(y) <= cur.start) {
			out[n++] = *y;
			j++;
			continue;
		}
		if (seg_end(&cur) <= y->start) {
			out[n++] = cur;
			have = false;
			continue;
		}
		/* they overlap: the part of cur before y stays visible */
		if (cur.start < y->start) {
			out[n] = cur;
			out[n++].len = (uint32_t)(y->start - cur.start);
		}
		if (seg_end(&cur) > seg_end(y)) {
			/* so does the part after it; y ends before any later piece of a */
			uint64_t end = seg_end(&cur);
			cur.head += (uint32_t)(seg_end(y) - cur.start);
			cur.start = seg_end(y);
			cur.len = (uint32_t)(end - cur.start);
			out[n++] = *y;
			j++;
			continue;
		}
		have = false;
	}
	while (j < nb)
		out[n++] = b[j++];
	return n;
}

/* Paints @b (sorted, disjoint, later than all of it) over the array
 * *@v of *@n, growing it.  Only the part of *@v from the first segment
 * ending past @b's start is touched (segments are disjoint and sorted,
 * so their ends are sorted too). */
static int paint_over(struct seg **v, size_t *n, size_t *cap, const struct seg *b, size_t nb)
{
	_cleanup_free_ struct seg *out = NULL;
	size_t lo = 0, hi = *n, nout;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (seg_end(&(*v)[mid]) <= b[0].start)
			lo = mid + 1;
		else
			hi = mid;
	}
	out = malloc((*n - lo + 2 * nb) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	nout = paint(*v + lo, *n - lo, b, nb, out);
	if (lo + nout > *cap) {
		struct seg *g = realloc(*v, (lo + nout) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		*v = g;
		*cap = lo + nout;
	}
	memcpy(*v + lo, out, nout * sizeof(*out));
	*n = lo + nout;
	return 0;
}

/* Paints the pending lines over the recent segments, and those over the
 * segments when they are a sixteenth of them (or @all): repainting the
 * segments for every read would copy all of them each time, with a
 * million lines ms per read; this way a line is copied a few times, and
 * a lookup searches two arrays.
 *
 * The pending lines are cut into runs that are sorted and disjoint
 * already (usually one), then adjacent runs are painted later over
 * earlier, pairwise, until one is left: a merge sort where a merge is a
 * paint.  The painting of k lines has at most 2k - 1 pieces (their
 * boundaries are among the 2k ends), so buffers of 2 * npend hold every
 * level. */
static int resolve(struct proc *p, bool all)
{
	size_t np = p->npend, nr = 0, k, n;
	int r;

	if (np) {
		_cleanup_free_ struct seg *x = malloc(2 * np * sizeof(*x)), *y = malloc(2 * np * sizeof(*y));
		_cleanup_free_ size_t *bx = malloc((np + 1) * sizeof(*bx)), *by = malloc((np + 1) * sizeof(*by));

		if (!x || !y || !bx || !by)
			return -ENOMEM;
		memcpy(x, p->pend, np * sizeof(*x));
		bx[0] = 0;
		for (size_t i = 1; i < np; i++)
			if (x[i].start < seg_end(&x[i - 1]))
				bx[++nr] = i;
		bx[++nr] = np;
		while (nr > 1) {
			k = n = 0;
			for (size_t i = 0; i < nr; i += 2) {
				by[k++] = n;
				if (i + 1 < nr) {
					n += paint(x + bx[i], bx[i + 1] - bx[i], x + bx[i + 1], bx[i + 2] - bx[i + 1], y + n);
				} else {
					memcpy(y + n, x + bx[i], (bx[i + 1] - bx[i]) * sizeof(*y));
					n += bx[i + 1] - bx[i];
				}
			}
			by[k] = n;
			nr = k;
			SWAP(x, y);
			SWAP(bx, by);
		}
		r = paint_over(&p->rec, &p->nrec, &p->rec_cap, x, bx[1]);
		if (r < 0)
			return r;
		free(p->pend);
		p->pend = NULL;
		p->npend = p->pend_cap = 0;
	}
	if (p->nrec && (all || p->nrec * 16 > p->nsegs)) {
		r = paint_over(&p->segs, &p->nsegs, &p->segs_cap, p->rec, p->nrec);
		if (r < 0)
			return r;
		free(p->rec);
		p->rec = NULL;
		p->nrec = p->rec_cap = 0;
	}
	return 0;
}

struct name_ref {
	uint32_t off;
	size_t seg;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Rebuilds the name buffer with only the names segments use (pieces of
 * one line share theirs), sized to fit; the segments too.  Every line
 * must be in the segments (resolve(p, true)). */
static int compact(struct proc *p)
{
	_cleanup_free_ struct name_ref *refs = NULL;
	size_t total = 0, at = 0;
	char *names;

	if (!p->nsegs) {
		free(p->segs);
		free(p->names);
		p->segs = NULL;
		p->names = NULL;
		p->segs_cap = p->names_len = p->names_cap = 0;
		return 0;
	}
	refs = malloc(p->nsegs * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsegs; i++)
		refs[i] = (struct name_ref){ p->segs[i].name_off, i };
	qsort(refs, p->nsegs, sizeof(*refs), name_ref_cmp);
	for (size_t i = 0; i < p->nsegs; i++)
		if (i == 0 || refs[i].off != refs[i - 1].off)
			total += p->segs[refs[i].seg].name_len + 1;
	names = malloc(total);
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsegs; i++) {
		struct seg *s = &p->segs[refs[i].seg];
		if (i == 0 || refs[i].off != refs[i - 1].off) {
			memcpy(names + at, p->names + s->name_off, s->name_len + 1);
			at += s->name_len + 1;
		}
		s->name_off = (uint32_t)(at - s->name_len - 1);
	}
	free(p->names);
	p->names = names;
	p->names_len = p->names_cap = total;
	if (p->segs_cap > p->nsegs) {
		struct seg *s = realloc(p->segs, p->nsegs * sizeof(*s));
		if (s) {
			p->segs = s;
			p->segs_cap = p->nsegs;
		}
	}
	return 0;
}

struct seq_cost {
	uint32_t seq;
	size_t cost;
};

static int seq_cost_cmp_desc(const void *a, const void *b)
{
	const struct seq_cost *x = a, *y = b;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/* Brings @p within @target bytes: first by dropping what is hidden or
 * unused, then by keeping only its newest lines (all pieces of a line, or
 * none).  Costs count a shared name once per piece: a little under the
 * target rather than over. */
static int trim(struct fr_perf_maps *m, struct proc *p, size_t target)
{
	_cleanup_free_ struct seq_cost *v = NULL;
	size_t budget, acc = 0, kept = 0;
	uint32_t threshold = 0;
	bool any = false;
	int r;

	r = resolve(p, true);
	if (r >= 0)
		r = compact(p);
	account(m, p);
	if (r < 0 || p->bytes <= target)
		return r;
	budget = target > sizeof(*p) ? target - sizeof(*p) : 0;
	v = malloc(p->nsegs * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsegs; i++)
		v[i] = (struct seq_cost){ p->segs[i].seq, sizeof(struct seg) + p->segs[i].name_len + 1 };
	qsort(v, p->nsegs, sizeof(*v), seq_cost_cmp_desc);
	for (size_t i = 0; i < p->nsegs;) {
		size_t j = i, c = 0;
		for (; j < p->nsegs && v[j].seq == v[i].seq; j++)
			c += v[j].cost;
		if (acc + c > budget)
			break;
		acc += c;
		threshold = v[i].seq;
		any = true;
		i = j;
	}
	for (size_t i = 0; i < p->nsegs; i++)
		if (any && p->segs[i].seq >= threshold)
			p->segs[kept++] = p->segs[i];
	m->stats.trimmed += p->nsegs - kept;
	p->nsegs = kept;
	r = compact(p);
	account(m, p);
	return r;
}

/* Evicts least recently used processes other than @p while the total
 * with @extra more bytes is over the bound. */
static void evict_others(struct fr_perf_maps *m, struct proc *p, size_t extra)
{
	while (m->stats.held + extra > m->max_bytes && m->tail && m->tail != p) {
		proc_drop(m, m->tail);
		m->stats.evicted++;
	}
}

/* After a read: the pending lines painted in (lookups do not search
 * them), and the bounds kept. */
static int settle(struct fr_perf_maps *m, struct proc *p)
{
	int r = resolve(p, false);

	account(m, p);
	if (r < 0)
		return r;
	evict_others(m, p, 0);
	if (m->stats.held > m->max_bytes || p->bytes > m->proc_max)
		return trim(m, p, m->proc_max / 2);
	return 0;
}

static bool appends(const struct proc *p, uint64_t start)
{
	return !p->npend && (!p->nsegs || start >= seg_end(&p->segs[p->nsegs - 1])) &&
	       (!p->nrec || start >= seg_end(&p->rec[p->nrec - 1]));
}

/* Makes room for one more line with a name of @name_bytes, growing by
 * half (a trim to half the bound leaves room for that).  -ENOBUFS if even
 * a trimmed process has no room for it. */
static int reserve(struct fr_perf_maps *m, struct proc *p, uint64_t start, size_t name_bytes)
{
	for (int attempt = 0;; attempt++) {
		bool direct = appends(p, start);
		size_t n = direct ? p->nsegs : p->npend, cap = direct ? p->segs_cap : p->pend_cap;
		size_t ecap = cap, ncap = p->names_cap, delta;
		int r;

		if (n == cap)
			ecap = MAX((size_t)64, cap + cap / 2);
		if (p->names_len + name_bytes > ncap)
			ncap = MAX(MAX((size_t)1024, ncap + ncap / 2), p->names_len + name_bytes);
		delta = (ecap - cap) * sizeof(struct seg) + (ncap - p->names_cap);
		if (!delta)
			return 0;
		evict_others(m, p, delta);
		if (m->stats.held + delta > m->max_bytes || p->bytes + delta > m->proc_max) {
			if (attempt)
				return -ENOBUFS;
			r = trim(m, p, m->proc_max / 2);
			if (r < 0)
				return r;
			continue;
		}
		if (ecap != cap) {
			struct seg **a = direct ? &p->segs : &p->pend;
			struct seg *s = realloc(*a, ecap * sizeof(*s));
			if (!s)
				return -ENOMEM;
			*a = s;
			*(direct ? &p->segs_cap : &p->pend_cap) = ecap;
		}
		if (ncap != p->names_cap) {
			char *s = realloc(p->names, ncap);
			if (!s) {
				account(m, p);
				return -ENOMEM;
			}
			p->names = s;
			p->names_cap = ncap;
		}
		account(m, p);
		return 0;
	}
}

/* Hex with an optional 0x; advances *s.  false without digits or over 64 bits. */
static bool parse_hex(const char **s, const char *end, uint64_t *ret)
{
	const char *q = *s;
	uint64_t v = 0;

	if (end - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	if (q == end)
		return false;
	const char *digits = q;
	for (; q < end; q++) {
		unsigned d;
		if (*q >= '0' && *q <= '9')
			d = (unsigned)(*q - '0');
		else if (*q >= 'a' && *q <= 'f')
			d = (unsigned)(*q - 'a' + 10);
		else if (*q >= 'A' && *q <= 'F')
			d = (unsigned)(*q - 'A' + 10);
		else
			break;
		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (q == digits)
		return false;
	*s = q;
	*ret = v;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line, without its newline.  0 whether taken or counted bad. */
static int take_line(struct fr_perf_maps *m, struct proc *p, const char *s, size_t len)
{
	const char *end = s + len, *name;
	uint64_t start, size;
	size_t name_len;
	int r;

	while (end > s && (end[-1] == '\r' || is_blank(end[-1])))
		end--;
	while (s < end && is_blank(*s))
		s++;
	if (!parse_hex(&s, end, &start) || s == end || !is_blank(*s))
		goto bad;
	while (s < end && is_blank(*s))
		s++;
	if (!parse_hex(&s, end, &size) || s == end || !is_blank(*s))
		goto bad;
	while (s < end && is_blank(*s))
		s++;
	name = s;
	name_len = (size_t)(end - s);
	if (!name_len || memchr(name, '\0', name_len) || !size || size > UINT32_MAX || start > UINT64_MAX - size)
		goto bad;

	r = reserve(m, p, start, name_len + 1);
	if (r == -ENOBUFS) {
		m->stats.trimmed++;
		return 0;
	}
	if (r < 0)
		return r;
	struct seg seg = {
		.start = start,
		.len = (uint32_t)size,
		.sym_size = (uint32_t)size,
		.name_off = (uint32_t)p->names_len,
		.name_len = (uint32_t)name_len,
		.seq = p->seq,
	};
	memcpy(p->names + p->names_len, name, name_len);
	p->names[p->names_len + name_len] = '\0';
	p->names_len += name_len + 1;
	if (appends(p, start))
		p->segs[p->nsegs++] = seg;
	else
		p->pend[p->npend++] = seg;
	if (p->seq < UINT32_MAX)
		p->seq++;
	m->stats.lines++;
	return 0;
bad:
	m->stats.lines_bad++;
	return 0;
}

/* Takes the complete lines of @n bytes read at p->off, advancing it. */
static int take_block(struct fr_perf_maps *m, struct proc *p, const char *buf, size_t n)
{
	size_t pos = 0;
	const char *nl;
	int r = 0;

	if (p->skipping) {
		nl = memchr(buf, '\n', n);
		if (!nl) {
			p->off += n;
			return 0;
		}
		pos = (size_t)(nl - buf) + 1;
		p->skipping = false;
	}
	while (pos < n && (nl = memchr(buf + pos, '\n', n - pos))) {
		r = take_line(m, p, buf + pos, (size_t)(nl - buf) - pos);
		if (r < 0)
			break; /* that line is read again next time */
		pos = (size_t)(nl - buf) + 1;
	}
	if (r >= 0 && pos == 0 && n == BLOCK) {
		/* one line fills the block: skip to its end */
		m->stats.lines_bad++;
		p->skipping = true;
		pos = n;
	}
	p->off += pos;
	return r;
}

/* Opens the file as the process sees it (fr_access_perf_map(), which
 * checks it) and reads one block of what is new. */
static int read_more(struct fr_perf_maps *m, struct proc *p, uint64_t now)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	bool more = p->more;
	ssize_t n;
	int r;

	p->tried_ns = now;
	fd = fr_access_perf_map(p->pid);
	if (fd == -ENOENT)
		return 0;
	if (fd == -EPERM)
		m->stats.refused++;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!p->have_file || st.st_dev != p->dev || st.st_ino != p->ino || (uint64_t)st.st_size < p->off) {
		proc_reset(m, p);
		p->have_file = true;
		p->dev = st.st_dev;
		p->ino = st.st_ino;
		more = false;
		m->stats.files++;
	}
	if (!more && (uint64_t)st.st_size <= p->size_seen)
		return 0;
	p->size_seen = (uint64_t)st.st_size;
	n = pread(fd, m->buf, BLOCK, (off_t)p->off);
	if (n < 0)
		return negative_errno();
	m->stats.bytes += (uint64_t)n;
	r = take_block(m, p, m->buf, (size_t)n);
	/* what a failure left unread is read at the next try */
	p->more = n == BLOCK || r < 0;
	return r;
}

static bool may_read(struct fr_perf_maps *m, const struct proc *p, uint64_t now)
{
	if (now - p->tried_ns >= RETRY_NS)
		return true;
	if (p->more && now >= m->continue_ns) {
		m->continue_ns = now + CONTINUE_NS;
		return true;
	}
	return false;
}

static const struct seg *find_in(const struct seg *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr - v[lo - 1].start < v[lo - 1].len ? &v[lo - 1] : NULL;
}

/* The recent segments first: where they cover, they are the later lines. */
static const struct seg *find(const struct proc *p, uint64_t addr)
{
	const struct seg *s = find_in(p->rec, p->nrec, addr);

	return s ? s : find_in(p->segs, p->nsegs, addr);
}

static int proc_add(struct fr_perf_maps *m, uint32_t pid, struct proc **ret)
{
	struct proc *p;
	int r;

	if (m->nprocs >= m->max_procs && m->tail) {
		proc_drop(m, m->tail);
		m->stats.evicted++;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	r = fr_pid_map_put(&m->procs, pid, p, NULL);
	if (r < 0) {
		free(p);
		return r;
	}
	lru_push(m, p);
	m->nprocs++;
	account(m, p);
	evict_others(m, p, 0);
	*ret = p;
	return 0;
}

int fr_perf_maps_new(size_t max_bytes, unsigned max_procs, struct fr_perf_maps **ret)
{
	struct fr_perf_maps *m;

	if (!ret || max_bytes < MIN_BYTES || !max_procs)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->buf = malloc(BLOCK);
	if (!m->buf) {
		free(m);
		return -ENOMEM;
	}
	m->max_bytes = max_bytes;
	m->proc_max = MIN(max_bytes, (size_t)UINT32_MAX);
	m->max_procs = max_procs;
	*ret = m;
	return 0;
}

struct fr_perf_maps *fr_perf_maps_free(struct fr_perf_maps *m)
{
	if (!m)
		return NULL;
	while (m->head)
		proc_drop(m, m->head);
	fr_pid_map_done(&m->procs);
	free(m->buf);
	free(m);
	return NULL;
}

int fr_perf_maps_lookup(struct fr_perf_maps *m, uint32_t pid, uint64_t addr, struct fr_perf_sym *ret)
{
	uint64_t now;
	const struct seg *s = NULL;
	struct proc *p;
	int r;

	if (!m || !ret)
		return -EINVAL;
	m->stats.lookups++;
	p = fr_pid_map_get(&m->procs, pid);
	if (p) {
		lru_unlink(m, p);
		lru_push(m, p);
		s = find(p, addr);
		if (!s && may_read(m, p, now = fr_now_ns(CLOCK_MONOTONIC))) {
			r = read_more(m, p, now);
			if (r < 0)
				return r;
			r = settle(m, p);
			if (r < 0)
				return r;
			s = find(p, addr);
		}
	} else {
		r = proc_add(m, pid, &p);
		if (r < 0)
			return r;
		r = read_more(m, p, fr_now_ns(CLOCK_MONOTONIC));
		if (r < 0)
			return r;
		r = settle(m, p);
		if (r < 0)
			return r;
		s = find(p, addr);
	}
	if (!s)
		return 0;
	*ret = (struct fr_perf_sym){
		.start = s->start - s->head,
		.size = s->sym_size,
		.name = p->names + s->name_off,
		.name_len = s->name_len,
	};
	m->stats.named++;
	return 1;
}

void fr_perf_maps_forget(struct fr_perf_maps *m, uint32_t pid)
{
	struct proc *p = m ? fr_pid_map_get(&m->procs, pid) : NULL;

	if (p)
		proc_drop(m, p);
}

void fr_perf_maps_get_stats(const struct fr_perf_maps *m, struct fr_perf_maps_stats *ret)
{
	*ret = m ? m->stats : (struct fr_perf_maps_stats){};
}
