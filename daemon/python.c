/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "../lib/python-lines.h"
#include "../lib/python-offsets.h"
#include "log.h"
#include "python.h"

/* How long a process's descriptions outlive it: its records still in
 * the rings, or held for their wakers, are recorded before. */
#define EXITED_KEEP_NS (10ULL * 1000000000ULL)
/* The executables remembered (the py_exes map holds as many). */
#define EXES_MAX 256
/* The name of the interpreter loop's C function: its native frames are
 * where a stack's Python frames go. */
#define EVAL_FRAME "_PyEval_EvalFrameDefault"

/* One code object's description: the strings UTF-8, then its line table. */
struct py_code {
	uint64_t code;
	int32_t first;
	bool lines_cut;
	uint16_t lines_len;
	uint32_t name_len, file_len;
	char *name, *file;
	uint8_t lines[];
};

struct py_proc {
	struct py_code **slots; /* open addressing by code address */
	size_t cap, n, bytes;
	uint64_t used;       /* fr_python.clock when last used */
	uint64_t exited_at;  /* CLOCK_MONOTONIC; 0: alive */
};

struct py_exe {
	uint32_t dev;
	uint64_t ino;
	bool walked;
};

struct fr_python {
	int exes_fd;
	struct py_exe exes[EXES_MAX];
	size_t nexes;
	struct fr_pid_map procs;
	uint64_t clock;
	struct fr_python_stats st;
	/* fr_python_merge()'s output, before it goes back */
	uint64_t out[FR_SAMPLE_FRAMES_MAX];
	struct fr_frame_desc desc[FR_SAMPLE_FRAMES_MAX];
};

int fr_python_new(struct fr_python **ret)
{
	struct fr_python *py = calloc(1, sizeof(*py));

	if (!py)
		return -ENOMEM;
	py->exes_fd = -EBADF;
	*ret = py;
	return 0;
}

static void proc_free(struct py_proc *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->slots[i]);
	free(p->slots);
	free(p);
}

static void proc_drop(struct fr_python *py, uint32_t pid)
{
	struct py_proc *p = fr_pid_map_remove(&py->procs, pid);

	if (!p)
		return;
	py->st.codes -= p->n;
	py->st.bytes -= p->bytes;
	py->st.procs--;
	proc_free(p);
}

struct fr_python *fr_python_free(struct fr_python *py)
{
	struct py_proc *p;
	size_t i = 0;

	if (!py)
		return NULL;
	while ((p = fr_pid_map_next(&py->procs, &i, NULL)))
		proc_free(p);
	fr_pid_map_done(&py->procs);
	free(py);
	return NULL;
}

void fr_python_set_exes_fd(struct fr_python *py, int fd)
{
	py->exes_fd = fd;
}

static size_t slot_of(const struct py_proc *p, uint64_t code)
{
	return (size_t)(((code >> 4) * 0x9e3779b97f4a7c15ULL) >> 20) & (p->cap - 1);
}

static struct py_code **find_slot(const struct py_proc *p, uint64_t code)
{
	for (size_t i = slot_of(p, code);; i = (i + 1) & (p->cap - 1))
		if (!p->slots[i] || p->slots[i]->code == code)
			return &p->slots[i];
}

static int grow(struct py_proc *p)
{
	struct py_proc bigger = { .cap = p->cap ? 2 * p->cap : 64 };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i])
			*find_slot(&bigger, p->slots[i]->code) = p->slots[i];
	free(p->slots);
	p->slots = bigger.slots;
	p->cap = bigger.cap;
	return 0;
}

/* The characters of a CPython string (kind 1: Latin-1, 2: UCS-2, 4:
 * UCS-4; @n bytes) as UTF-8 into @out (room for 4 bytes a character);
 * a code point no character is becomes U+FFFD.  Returns the bytes. */
static size_t to_utf8(const uint8_t *s, size_t n, unsigned kind, char *out)
{
	size_t k = 0;

	for (size_t i = 0; kind && i + kind <= n; i += kind) {
		uint32_t c = kind == 1 ? s[i] : kind == 2 ? (uint32_t)(s[i] | s[i + 1] << 8) :
			     (uint32_t)(s[i] | s[i + 1] << 8 | s[i + 2] << 16 | (uint32_t)s[i + 3] << 24);
		if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
			c = 0xfffd;
		if (c < 0x80) {
			out[k++] = (char)c;
		} else if (c < 0x800) {
			out[k++] = (char)(0xc0 | c >> 6);
			out[k++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[k++] = (char)(0xe0 | c >> 12);
			out[k++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[k++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[k++] = (char)(0xf0 | c >> 18);
			out[k++] = (char)(0x80 | (c >> 12 & 0x3f));
			out[k++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return k;
}

void fr_python_add_code(struct fr_python *py, const struct fr_event_pycode *e, size_t size, uint64_t now)
{
	uint32_t name_len, file_len, lines_len;
	struct py_proc *p;
	struct py_code *c, **slot;
	size_t bytes;
	char *at;

	if (size < sizeof(*e))
		return;
	py->st.descriptions++;
	name_len = MIN(e->name_len, (uint32_t)FR_PY_NAME_MAX);
	file_len = MIN(e->file_len, (uint32_t)FR_PY_FILE_MAX);
	lines_len = MIN(e->lines_len, (uint32_t)FR_PY_LINES_MAX);
	p = fr_pid_map_get(&py->procs, e->hdr.pid);
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || fr_pid_map_put(&py->procs, e->hdr.pid, p, NULL) < 0) {
			free(p);
			return;
		}
		py->st.procs++;
	}
	/* a description after the exit: a new process of the same pid */
	p->exited_at = 0;
	p->used = ++py->clock;
	if ((p->n + 1) * 2 > p->cap && grow(p) < 0)
		return;
	/* UTF-8 takes at most 4 bytes a character, and a cut name "..." */
	bytes = sizeof(*c) + lines_len + 4 * (name_len + file_len) + 8;
	c = malloc(bytes);
	if (!c)
		return;
	*c = (struct py_code){ .code = e->code, .first = e->firstlineno, .lines_cut = e->lines_cut,
			       .lines_len = (uint16_t)lines_len };
	memcpy(c->lines, e->lines, lines_len);
	at = (char *)c->lines + lines_len;
	c->name = at;
	c->name_len = (uint32_t)to_utf8(e->name, name_len, e->name_kind, at);
	if (e->name_cut) {
		memcpy(at + c->name_len, "...", 3);
		c->name_len += 3;
	}
	at += c->name_len;
	c->file = at;
	if (e->file_cut) {
		memcpy(at, "...", 3);
		at += 3;
	}
	c->file_len = (uint32_t)(to_utf8(e->file, file_len, e->file_kind, at) + (e->file_cut ? 3 : 0));
	slot = find_slot(p, e->code);
	if (*slot) { /* described again: freed and made anew, or from another CPU */
		p->bytes -= sizeof(**slot) + (*slot)->lines_len + (*slot)->name_len + (*slot)->file_len;
		py->st.bytes -= sizeof(**slot) + (*slot)->lines_len + (*slot)->name_len + (*slot)->file_len;
		free(*slot);
	} else {
		p->n++;
		py->st.codes++;
	}
	*slot = c;
	p->bytes += sizeof(*c) + c->lines_len + c->name_len + c->file_len;
	py->st.bytes += sizeof(*c) + c->lines_len + c->name_len + c->file_len;
	(void)now;
}

void fr_python_learn(struct fr_python *py, uint32_t dev, uint64_t ino, const struct fr_py_probe *probe,
		     const char *comm)
{
	struct fr_py_exe_key key = { .dev = dev, .ino = ino };
	struct fr_py_exe val = { .runtime_rel = probe->runtime_rel, .version = probe->version };
	const struct fr_py_offsets *off;
	struct py_exe *x;
	char v[16];
	int k;

	if (!probe->found || !ino)
		return;
	for (size_t i = 0; i < py->nexes; i++)
		if (py->exes[i].dev == dev && py->exes[i].ino == ino)
			return;
	if (py->nexes == EXES_MAX)
		return;
	x = &py->exes[py->nexes++];
	*x = (struct py_exe){ .dev = dev, .ino = ino };
	off = fr_py_offsets_of(probe->version);
	if (!off) {
		py->st.exes_unknown++;
		if (probe->version)
			log_notice("%s runs CPython %s, whose frames flightrec does not know: its stacks keep their native frames.",
				   comm, fr_py_version_str(probe->version, v));
		else
			log_notice("%s runs a CPython older than 3.11 (no Py_Version), whose frames flightrec does not know: its stacks keep their native frames.",
				   comm);
		return;
	}
	val.off = *off;
	k = py->exes_fd >= 0 ? bpf_map_update_elem(py->exes_fd, &key, &val, BPF_ANY) : -EBADF;
	if (k < 0) {
		log_warning_errno(k < -1 ? k : -errno, "Cannot walk the Python frames of %s (inode %" PRIu64 "): %m", comm,
				  ino);
		return;
	}
	x->walked = true;
	py->st.exes++;
	log_info("%s runs CPython %s: its stacks get Python frames.", comm, fr_py_version_str(probe->version, v));
}

static bool is_eval_frame(const struct fr_frame_desc *d)
{
	return d->symbol.type == FR_REC_SYMBOL && d->symbol.symbol.name_len == sizeof(EVAL_FRAME) - 1 &&
	       memcmp(d->symbol.symbol.name, EVAL_FRAME, sizeof(EVAL_FRAME) - 1) == 0;
}

/* Python frame @f of process @p (NULL: none described), with its
 * description into @d. */
static uint64_t python_frame(struct fr_python *py, struct py_proc *p, uint32_t pid, uint64_t ts,
			     const struct fr_py_frame *f, struct fr_frame_desc *d)
{
	struct py_code *c = p ? *find_slot(p, f->code) : NULL;
	uint32_t line;

	*d = (struct fr_frame_desc){};
	py->st.frames++;
	if (!c) {
		py->st.frames_unnamed++;
		return fr_frame_python(f->code, 0);
	}
	line = fr_py_line(c->lines, c->lines_len, c->first, f->lasti);
	if (!line)
		py->st.lines_unknown++;
	d->py = (struct fr_record){ .type = FR_REC_PYCODE, .pid = pid, .ts = ts };
	d->py.pycode.code = c->code;
	d->py.pycode.firstlineno = c->first;
	d->py.pycode.name = c->name;
	d->py.pycode.name_len = c->name_len;
	d->py.pycode.file = c->file;
	d->py.pycode.file_len = c->file_len;
	return fr_frame_python(f->code, line);
}

size_t fr_python_merge(struct fr_python *py, uint32_t pid, uint64_t ts, const struct fr_py_stack *ps,
		       uint64_t *uframes, struct fr_frame_desc *udesc, size_t n, size_t max)
{
	struct py_proc *p;
	size_t k = 0, j = 0, npy;

	if (ps->status == FR_PY_NOT_PYTHON || ps->status >= FR_PY__STATUS_MAX)
		return n;
	py->st.stacks[ps->status]++;
	py->st.names_over += ps->names_over;
	npy = MIN((size_t)ps->n, (size_t)FR_PY_DEPTH);
	if (!npy)
		return n;
	if (!udesc) {
		py->st.frames_unplaced += npy;
		return n;
	}
	p = fr_pid_map_get(&py->procs, pid);
	if (p)
		p->used = ++py->clock;
	max = MIN(max, (size_t)FR_SAMPLE_FRAMES_MAX);
	for (size_t i = 0; i < n && k < max; i++) {
		bool entry = false;

		if (j >= npy || !is_eval_frame(&udesc[i])) {
			py->out[k] = uframes[i];
			py->desc[k++] = udesc[i];
			continue;
		}
		/* the frames this C call of the loop ran: up to the one it
		 * began with */
		while (j < npy && !entry && k < max) {
			entry = ps->f[j].flags & FR_PY_ENTRY;
			py->out[k] = python_frame(py, p, pid, ts, &ps->f[j], &py->desc[k]);
			k++;
			j++;
		}
	}
	py->st.frames_unplaced += npy - j;
	memcpy(uframes, py->out, k * sizeof(*uframes));
	memcpy(udesc, py->desc, k * sizeof(*udesc));
	return k;
}

void fr_python_exit(struct fr_python *py, uint32_t pid, uint64_t now)
{
	struct py_proc *p = fr_pid_map_get(&py->procs, pid);

	if (p)
		p->exited_at = now ? now : 1;
}

void fr_python_tick(struct fr_python *py, uint64_t now)
{
	struct py_proc *p;
	uint32_t pid;
	size_t i = 0;

	while ((p = fr_pid_map_next(&py->procs, &i, &pid)))
		if (p->exited_at && now - p->exited_at > EXITED_KEEP_NS) {
			proc_drop(py, pid);
			i = 0; /* removing moves entries: from the start */
		}
	/* over the bound: the least recently used processes, to 3/4 of it */
	if (py->st.bytes <= FR_PYTHON_BYTES)
		return;
	while (py->st.bytes > FR_PYTHON_BYTES / 4 * 3) {
		uint64_t oldest = UINT64_MAX;
		uint32_t victim = 0;

		i = 0;
		while ((p = fr_pid_map_next(&py->procs, &i, &pid)))
			if (p->used < oldest) {
				oldest = p->used;
				victim = pid;
			}
		if (oldest == UINT64_MAX)
			break;
		proc_drop(py, victim);
		py->st.evicted++;
	}
}

void fr_python_get_stats(const struct fr_python *py, struct fr_python_stats *ret)
{
	*ret = py->st;
}
