/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names for frames (symbolizer.h).  Long because the lookups and the
 * bounded caches they fill (processes, files, inline functions, and the
 * perf maps of perf-map.c) share one set of structures and one eviction
 * order; kernel symbols are in lib/ksyms.c, unwinding in unwinder.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <malloc.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/elf-inflated.h"
#include "../lib/elf-names.h"
#include "../lib/ksyms.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "../lib/range-find.h"
#include "../lib/record-fields.h"
#include "heap.h"
#include "mapped-file.h"
#include "proc-access.h"
#include "perf-map.h"
#include "symbolizer.h"

/* Cache bounds: processes with their mappings, and the symbol tables of
 * mapped files (entries plus names).  A busy host maps a few hundred
 * files; libc's table is ~100 KiB.  A compile loop held 13 MiB of tables
 * under a 24 MiB bound, 6.6 MiB under this one, naming as many frames
 * (issue 48). */
#define PROCS_MAX 2048
#define CACHE_BYTES_MAX (8u << 20)
/* A process whose frame falls outside every known mapping (dlopen) has its
 * maps read again, at most this often. */
#define REREAD_NS 1000000000ULL
/* ... but twice sooner: maps read while the dynamic loader was still
 * mapping the libraries (a sample in ld.so just after exec) lack them,
 * and the program's first second would go unnamed; and a process that
 * opens a library and exits at once (python3 importing ctypes, then
 * crashing in it) has no second chance.  Two extra reads per process: on
 * its first frame outside them, and on the next one at least this long
 * after. */
#define REREAD_FIRST_NS 10000000ULL
#define LOADS_MAX 16
/* Debug information (for inlined frames) held open at once: at most this
 * many files and bytes of them (their sections are read, and compressed
 * ones decompressed, as lookups need them); a larger debug file is not
 * used for inlined frames at all (its symbols still are). */
#define DWARF_FILES_MAX 8
#define DWARF_BYTES_MAX (16u << 20)
/* What libdw allocates for the lookups (units' abbreviations, decompressed
 * sections, ...) is not its files' size: glibc's debug file, 4 MiB, grew
 * the daemon by 20 to 80 MiB under a syscall flood whose samples fell in
 * many of its units.  The heap that opening (decompressed sections) and
 * lookups grow is measured: a file whose opening alone takes more is not
 * used for inlined frames; past this bound the file that grew it most is
 * closed, to be opened again, empty, DWARF_REOPEN_NS later at the
 * earliest (each opening costs tens of ms). */
#define DWARF_HEAP_MAX (8u << 20)
/* ... and a file whose compressed sections alone inflate past it is not
 * opened at all: libdw would decompress them all at once, before any
 * bound could be checked (lib/elf-inflated.h). */
static const struct fr_elf_inflate_limits dwarf_inflate_limits = {
	.section_max = DWARF_HEAP_MAX,
	.total_max = DWARF_HEAP_MAX,
};
#define DWARF_REOPEN_NS (10 * 1000000000ULL)
/* JIT symbols (perf maps): names held for at most this many processes
 * and bytes; a busy Node service's map is ~1-10 MiB. */
#define JIT_BYTES_MAX (64u << 20)
#define JIT_PROCS_MAX 256
/* Code addresses whose inlined functions are remembered, per file (one
 * DWARF scope walk each, which costs up to ~100 us in a large unit). */
#define INLINE_CACHE 4096


struct elf_file {
	struct elf_file *next;
	dev_t dev;
	uint64_t ino;
	char *path;
	uint8_t build_id[FR_BUILD_ID_MAX];
	uint32_t build_id_len;
	struct { uint64_t off, vaddr, filesz; } load[LOADS_MAX];
	unsigned nload;
	struct fr_elf_symtab tab; /* its function symbols */
	struct fr_py_probe py; /* a CPython interpreter? (python-probe.h) */
	bool loaded; /* tried: a file that does not parse is not tried again */
	uint64_t open_failed_at; /* not opened (its process gone): retried after REREAD_NS */
	unsigned refs;
	uint64_t used;
	/* debug information, for inlined frames: the binary's own, else its
	 * separate debug file's; opened at the first frame that needs it */
	bool dwarf_tried;
	size_t dwarf_bytes;
	int dwarf_fd;
	dev_t dwarf_dev; /* the file it was read from */
	uint64_t dwarf_ino;
	Elf *dwarf_elf;
	Dwarf *dwarf;
	uint64_t dwarf_used;
	size_t dwarf_heap; /* heap its opening and lookups grew */
	uint64_t dwarf_reopen_at; /* CLOCK_MONOTONIC: closed for the bound until then */
	struct inline_names *inl; /* INLINE_CACHE slots by ELF address */
};

/* The inlined functions at one ELF address of a file, innermost first,
 * NUL-separated (len 0: none). */
struct inline_names {
	uint64_t vaddr; /* 0: a free slot */
	uint32_t len;
	char *names;
};

struct mapping {
	uint64_t start, end, pgoff, vaddr;
	char *path;
	struct elf_file *file; /* NULL for [vdso], anonymous code */
};

struct proc {
	uint32_t pid;
	bool inherited;   /* the maps are its parent's, from the fork */
	uint64_t exe_ino; /* of /proc/PID/exe when the maps were read */
	struct mapping *maps;
	size_t nmaps;
	uint64_t read_at;
	uint64_t used;
	uint8_t rereads_early; /* its sooner reads spent (REREAD_FIRST_NS) */
};

/* Mappings replaced by a re-read, freed at the next trim: descriptions
 * already handed out for the sample being resolved point into them. */
struct retired {
	struct retired *next;
	struct mapping *maps;
	size_t nmaps;
};

/* Copies of names, freed all at once. */
struct name_block {
	struct name_block *next;
	size_t len, cap;
	char data[];
};

struct fr_symbolizer {
	struct fr_ksyms *ksyms;
	/* what readers name this boot's kernel frames with: the store's
	 * snapshot (ksyms itself when it is the same); NULL: none */
	struct fr_ksyms *snapshot;
	unsigned ndwarf; /* files with debug information open */
	size_t dwarf_bytes; /* their sizes */
	size_t dwarf_heap;  /* the heap their lookups grew */
	struct fr_perf_maps *jit;
	/* JIT and inline names handed out since the last trim (their caches
	 * may move or free them at the next lookup) */
	struct name_block *names;
	struct retired *retired;
	struct fr_pid_map procs;
	struct elf_file *files;
	uint64_t clock; /* use counter, for least recently used */
	long page_size;
	bool no_user; /* user frames stay unnamed: fr_symbolizer_set_user_frames() */
	struct fr_symbolizer_stats st;
};


int fr_symbolizer_new(struct fr_ksyms *ksyms, struct fr_symbolizer **ret)
{
	struct fr_symbolizer *s;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (fr_perf_maps_new(JIT_BYTES_MAX, JIT_PROCS_MAX, &s->jit) < 0) {
		free(s);
		return -ENOMEM;
	}
	s->ksyms = ksyms;
	s->page_size = sysconf(_SC_PAGESIZE);
	*ret = s;
	return 0;
}

static void file_close_dwarf(struct fr_symbolizer *s, struct elf_file *f)
{
	if (f->inl) {
		for (unsigned i = 0; i < INLINE_CACHE; i++)
			free(f->inl[i].names);
		free(f->inl);
		f->inl = NULL;
	}
	if (f->dwarf_elf) {
		s->ndwarf--;
		s->dwarf_bytes -= f->dwarf_bytes;
		f->dwarf_bytes = 0;
	}
	s->dwarf_heap -= f->dwarf_heap;
	f->dwarf_heap = 0;
	dwarf_end(f->dwarf);
	elf_end(f->dwarf_elf);
	if (f->dwarf_fd >= 0)
		close(f->dwarf_fd);
	f->dwarf = NULL;
	f->dwarf_elf = NULL;
	f->dwarf_fd = -EBADF;
}

static void file_unload(struct fr_symbolizer *s, struct elf_file *f)
{
	file_close_dwarf(s, f);
	f->dwarf_tried = false;
	s->st.cache_bytes -= f->tab.bytes;
	fr_elf_symtab_done(&f->tab);
	f->loaded = false;
}

static void maps_free(struct mapping *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

static void maps_unref(struct mapping *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].file)
			maps[i].file->refs--;
}

static void free_retired(struct fr_symbolizer *s)
{
	while (s->retired) {
		struct retired *r = s->retired;
		s->retired = r->next;
		maps_free(r->maps, r->nmaps);
		free(r);
	}
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	maps_unref(p->maps, p->nmaps);
	maps_free(p->maps, p->nmaps);
	free(p);
}

static char *copy_name(struct fr_symbolizer *s, const char *name, size_t len)
{
	struct name_block *b = s->names;
	char *r;

	if (!b || b->len + len + 1 > b->cap) {
		size_t cap = MAX((size_t)65536, len + 1);
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		*b = (struct name_block){ .next = s->names, .cap = cap };
		s->names = b;
	}
	r = b->data + b->len;
	memcpy(r, name, len);
	r[len] = 0;
	b->len += len + 1;
	return r;
}

static void free_names(struct fr_symbolizer *s)
{
	while (s->names) {
		struct name_block *b = s->names;
		s->names = b->next;
		free(b);
	}
}

struct fr_symbolizer *fr_symbolizer_free(struct fr_symbolizer *s)
{
	size_t i = 0;
	struct proc *p;

	if (!s)
		return NULL;
	while ((p = fr_pid_map_next(&s->procs, &i, NULL)))
		proc_free(p);
	fr_pid_map_done(&s->procs);
	free_retired(s);
	while (s->files) {
		struct elf_file *f = s->files;
		s->files = f->next;
		file_unload(s, f);
		free(f);
	}
	if (s->snapshot != s->ksyms)
		fr_ksyms_free(s->snapshot);
	fr_ksyms_free(s->ksyms);
	fr_perf_maps_free(s->jit);
	free_names(s);
	free(s);
	return NULL;
}

void fr_symbolizer_set_user_frames(struct fr_symbolizer *s, bool on)
{
	s->no_user = !on;
}

const struct fr_ksyms *fr_symbolizer_ksyms(const struct fr_symbolizer *s)
{
	return s->ksyms;
}

void fr_symbolizer_set_snapshot(struct fr_symbolizer *s, struct fr_ksyms *snapshot)
{
	if (s->snapshot != s->ksyms)
		fr_ksyms_free(s->snapshot);
	s->snapshot = snapshot;
}

const struct fr_ksyms *fr_symbolizer_snapshot(const struct fr_symbolizer *s)
{
	return s->snapshot;
}

/* Whether readers name the frame at @a as @k without a description: the
 * snapshot has the same function there. */
static bool in_snapshot(const struct fr_symbolizer *s, const struct fr_ksym *k, uint64_t a)
{
	const struct fr_ksym *o;

	/* a BPF program's: the snapshot may hold another program there
	 * (fr_ksyms_same_functions() does not compare them) */
	if (!s->snapshot || fr_ksym_is_bpf(k))
		return false;
	if (s->snapshot == s->ksyms)
		return true;
	o = fr_ksyms_lookup(s->snapshot, a);
	return o && o->addr == k->addr && strcmp(o->name, k->name) == 0 && strcmp(o->module, k->module) == 0;
}

void fr_symbolizer_kernel(struct fr_symbolizer *s, uint64_t addr, bool leaf, struct fr_frame_desc *ret)
{
	/* the same lookup address as readers use (lib/symtab.c) */
	uint64_t a = fr_frame_lookup_addr(addr, leaf);
	const struct fr_ksym *k = fr_ksyms_lookup(s->ksyms, a);

	*ret = (struct fr_frame_desc){};
	if (!k) {
		s->st.kernel_unknown++;
		return;
	}
	s->st.kernel_named++;
	/* chunks repeat what the snapshot has (a quarter of the store's
	 * bytes, every chunk describing the same hot functions again);
	 * incidents carry what theirs need (lib/kernel-names.h) */
	if (in_snapshot(s, k, a)) {
		s->st.kernel_by_snapshot++;
		return;
	}
	ret->symbol.type = FR_REC_SYMBOL;
	ret->symbol.symbol.start = k->addr;
	ret->symbol.symbol.size = k->size;
	ret->symbol.symbol.name = k->name;
	ret->symbol.symbol.name_len = (uint32_t)strlen(k->name);
	ret->symbol.symbol.module = k->module;
	ret->symbol.symbol.module_len = (uint32_t)strlen(k->module);
}

static int open_debug_file(const struct fr_symbolizer *s, const struct elf_file *f)
{
	return fr_access_debug(f->build_id, f->build_id_len);
}

/* A stripped binary's symbols from its separate debug file, if installed. */
static int read_debug_file(const struct fr_symbolizer *s, struct elf_file *f)
{
	Elf *elf;
	int fd = open_debug_file(s, f), r;

	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	r = elf && elf_kind(elf) == ELF_K_ELF ? fr_elf_symtab_read(elf, false, &f->tab) : -EBADMSG;
	elf_end(elf);
	close(fd);
	return r;
}

/* Reads @f's load segments, build id and symbols from @fd. */
static int file_load_fd(const struct fr_symbolizer *s, struct elf_file *f, int fd)
{
	const void *bid;
	ssize_t bl;
	size_t nph;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int r;

	if (!elf)
		return -EBADMSG;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) != 0) {
		elf_end(elf);
		return -EBADMSG;
	}
	f->nload = 0;
	for (size_t i = 0; i < nph && f->nload < LOADS_MAX; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->load[f->nload++] = (typeof(f->load[0])){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	fr_python_probe_elf(elf, &f->py);
	bl = dwelf_elf_gnu_build_id(elf, &bid);
	if (bl > 0 && bl <= FR_BUILD_ID_MAX) {
		memcpy(f->build_id, bid, (size_t)bl);
		f->build_id_len = (uint32_t)bl;
	}
	/* the full table (.symtab), else that of the separate debug file
	 * of a stripped binary, else the exported functions (.dynsym) */
	r = fr_elf_symtab_read(elf, false, &f->tab);
	if (r < 0)
		r = read_debug_file(s, f);
	if (r < 0)
		r = fr_elf_symtab_read(elf, true, &f->tab);
	elf_end(elf);
	return r;
}

/* The file of @f mapped at @m in @pid (fr_open_mapped_file()). */
static int open_mapped(uint32_t pid, const struct mapping *m, const struct elf_file *f)
{
	return fr_access_mapped(pid, m->start, m->end, m->path, f->dev, f->ino);
}

static int file_load(struct fr_symbolizer *s, struct elf_file *f, uint32_t pid, const struct mapping *m)
{
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);
	int fd, r;

	if (f->open_failed_at && now - f->open_failed_at < REREAD_NS)
		return -ENOENT;
	fd = open_mapped(pid, m, f);
	if (fd < 0) {
		/* not "loaded": the next process mapping it may still be there */
		f->open_failed_at = now;
		s->st.files_unopened++;
		if (fd == -ESTALE)
			s->st.files_refused++;
		return fd;
	}
	f->loaded = true;
	f->open_failed_at = 0;
	r = file_load_fd(s, f, fd);
	close(fd);
	s->st.cache_bytes += f->tab.bytes;
	return r;
}

/* Opens @f's debug information: its separate debug file, else its own
 * (a binary built with -g and not stripped).  At most DWARF_FILES_MAX
 * files have theirs open: the least recently used one is closed. */
static bool file_open_dwarf(struct fr_symbolizer *s, struct elf_file *f, uint32_t pid, const struct mapping *m)
{
	f->dwarf_tried = true;
	for (int i = 0; i < 2; i++) {
		int fd = i == 0 ? open_debug_file(s, f) : open_mapped(pid, m, f);
		struct stat st;
		Elf *elf;
		Dwarf *dw;

		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || (uint64_t)st.st_size > DWARF_BYTES_MAX) {
			close(fd);
			continue;
		}
		/* room: the least recently used go */
		while (s->ndwarf >= DWARF_FILES_MAX || s->dwarf_bytes + (size_t)st.st_size > DWARF_BYTES_MAX) {
			struct elf_file *victim = NULL;
			for (struct elf_file *g = s->files; g; g = g->next)
				if (g->dwarf_elf && (!victim || g->dwarf_used < victim->dwarf_used))
					victim = g;
			if (!victim)
				break;
			file_close_dwarf(s, victim);
		}
		/* opening decompresses its sections: that counts too */
		size_t before = fr_heap_in_use();
		/* private: fr_elf_names_only() writes to its section headers */
		elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
		if (elf && elf_kind(elf) == ELF_K_ELF &&
		    fr_elf_inflated_check(elf, &dwarf_inflate_limits, NULL) == -EFBIG) {
			s->st.dwarf_too_big++;
			elf_end(elf);
			close(fd);
			continue;
		}
		/* the same files as when all of their sections were inflated
		 * (checked above), with less heap each: only the sections that
		 * inlined functions' names need */
		dw = elf && elf_kind(elf) == ELF_K_ELF && fr_elf_names_only(elf) == 0
			     ? dwarf_begin_elf(elf, DWARF_C_READ, NULL)
			     : NULL;
		if (!dw) {
			elf_end(elf);
			close(fd);
			continue;
		}
		f->inl = calloc(INLINE_CACHE, sizeof(*f->inl));
		if (!f->inl) {
			dwarf_end(dw);
			elf_end(elf);
			close(fd);
			return false;
		}
		/* the whole file is mapped: no descriptor held */
		if (elf_cntl(elf, ELF_C_FDDONE) == 0) {
			close(fd);
			fd = -EBADF;
		}
		f->dwarf_fd = fd;
		f->dwarf_dev = st.st_dev;
		f->dwarf_ino = st.st_ino;
		f->dwarf_elf = elf;
		f->dwarf = dw;
		f->dwarf_bytes = (size_t)st.st_size;
		s->dwarf_bytes += f->dwarf_bytes;
		s->ndwarf++;
		size_t after = fr_heap_in_use();
		f->dwarf_heap = after > before ? after - before : 0;
		s->dwarf_heap += f->dwarf_heap;
		if (f->dwarf_heap > DWARF_HEAP_MAX) {
			/* for good: dwarf_tried stays set */
			file_close_dwarf(s, f);
			(void)malloc_trim(0);
			s->st.dwarf_too_big++;
			return false;
		}
		return true;
	}
	return false;
}

/* The functions inlined at ELF address @vaddr of @f, innermost first
 * (the function they were inlined into is the symbol's).  Remembered per
 * address: samples hit the same few return addresses again and again. */
static const struct inline_names *file_inlines(struct fr_symbolizer *s, struct elf_file *f, uint64_t vaddr)
{
	struct inline_names *slot = &f->inl[(vaddr * 0x9e3779b97f4a7c15ULL) >> 52 & (INLINE_CACHE - 1)];
	char *names;
	uint32_t len;

	_Static_assert((INLINE_CACHE & (INLINE_CACHE - 1)) == 0 && INLINE_CACHE <= 4096, "INLINE_CACHE: 2^n, 12 bits");
	if (slot->vaddr == vaddr)
		return slot;
	free(slot->names); /* a collision replaces the older address */
	*slot = (struct inline_names){ .vaddr = vaddr };
	size_t before = fr_heap_in_use();
	fr_access_parsing(f->dwarf_dev, f->dwarf_ino);
	if (fr_elf_inlined_names(f->dwarf, vaddr, &names, &len) == 0) {
		slot->names = names;
		slot->len = len;
	}
	size_t after = fr_heap_in_use();
	if (after > before) {
		f->dwarf_heap += after - before;
		s->dwarf_heap += after - before;
	}
	return slot;
}

static struct elf_file *file_get(struct fr_symbolizer *s, dev_t dev, uint64_t ino)
{
	struct elf_file *f;

	for (f = s->files; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->dwarf_fd = -EBADF;
	f->next = s->files;
	s->files = f;
	s->st.files++;
	return f;
}

/* A stream over the maps in descriptor @fd (closed on failure); NULL
 * with *err set when there is none. */
static FILE *maps_file(int fd, int *err)
{
	FILE *f;

	*err = fd;
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		*err = -ENOMEM;
	}
	return f;
}

/* The executable mappings in maps file @f into *@v, *@n (which hold a
 * reference to each mapped file). */
static void parse_maps(struct fr_symbolizer *s, FILE *f, struct mapping **v, size_t *n)
{
	char *line = NULL;
	size_t linecap = 0, cap = 0;

	*v = NULL;
	*n = 0;
	while (getline(&line, &linecap, f) > 0) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		const char *name;
		struct mapping *m;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &ino,
			   &pos) < 7 || perms[2] != 'x')
			continue;
		if (*n == FR_MAPS_FILES_MAX) {
			s->st.maps_capped++;
			break;
		}
		name = line + pos;
		line[strcspn(line, "\n")] = 0;
		if (*n == cap) {
			size_t c = cap ? cap * 2 : 32;
			struct mapping *q = realloc(*v, c * sizeof(**v));
			if (!q)
				break;
			*v = q;
			cap = c;
		}
		m = &(*v)[*n];
		*m = (struct mapping){ .start = start, .end = end, .pgoff = off, .vaddr = off };
		m->path = strdup(*name ? name : "[anon]");
		if (!m->path)
			break;
		if (ino && *name == '/')
			m->file = file_get(s, makedev(maj, min), ino);
		if (m->file)
			m->file->refs++;
		(*n)++;
	}
	free(line);
}

/* @v[0..n) are @p's mappings now, of image @exe_ino; the old ones are
 * retired (descriptions handed out for this sample point into them). */
static int install_maps(struct fr_symbolizer *s, struct proc *p, struct mapping *v, size_t n, uint64_t exe_ino)
{
	struct retired *r = p->nmaps ? malloc(sizeof(*r)) : NULL;

	if (p->nmaps && !r) {
		maps_unref(v, n);
		maps_free(v, n);
		return -ENOMEM;
	}
	p->exe_ino = exe_ino;
	maps_unref(p->maps, p->nmaps);
	if (p->nmaps) {
		r->maps = p->maps;
		r->nmaps = p->nmaps;
		r->next = s->retired;
		s->retired = r;
	} else
		free(p->maps);
	p->maps = v;
	p->nmaps = n;
	return 0;
}

/* Reads the executable mappings of @pid.  -ESRCH when it is gone. */
static int read_maps(struct fr_symbolizer *s, struct proc *p)
{
	struct mapping *v = NULL;
	size_t n = 0;
	uint64_t exe_ino;
	bool gone = false;
	FILE *f;
	int fd;

	p->read_at = fr_now_ns(CLOCK_MONOTONIC); /* tried: a process that is gone is not retried at once */
	p->inherited = false;
	s->st.maps_read++;
	f = maps_file(fr_access_maps(p->pid, &exe_ino), &fd);
	/* empty: it exited between the opening and the reading; what it
	 * mapped, as the daemon learned it */
	if (f && fgetc(f) == EOF) {
		fclose(f);
		f = maps_file(fr_access_maps_gone(p->pid, &exe_ino), &fd);
	} else if (f)
		rewind(f);
again:
	if (!f)
		return fd;
	parse_maps(s, f, &v, &n);
	/* cut: it exited while it was read; likewise */
	if (!gone && n && !fr_maps_fd_whole(fileno(f))) {
		int gfd = fr_access_maps_gone(p->pid, &exe_ino);
		gone = true;
		if (gfd >= 0) { /* else what was read is better than nothing */
			maps_unref(v, n);
			maps_free(v, n);
			fclose(f);
			f = maps_file(gfd, &fd);
			goto again;
		}
	}
	fclose(f);
	return install_maps(s, p, v, n, exe_ino);
}

/* A new entry for @pid, without mappings. */
static struct proc *proc_add(struct fr_symbolizer *s, uint32_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p || fr_pid_map_put(&s->procs, pid, p, NULL) < 0) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	return p;
}

static struct proc *proc_get(struct fr_symbolizer *s, uint32_t pid)
{
	struct proc *p = fr_pid_map_get(&s->procs, pid);

	if (p)
		return p;
	if (s->no_user) /* every /proc/PID read starts here */
		return NULL;
	p = proc_add(s, pid);
	/* a process already gone keeps an empty entry: no retry for every
	 * frame of its samples */
	if (p)
		(void)read_maps(s, p);
	return p;
}

void fr_symbolizer_take_maps(struct fr_symbolizer *s, uint32_t pid, uint64_t exe_ino, const char *text)
{
	struct proc *p = fr_pid_map_get(&s->procs, pid);
	struct mapping *v;
	size_t n;
	FILE *f;

	if (s->no_user || (!p && !(p = proc_add(s, pid))))
		return;
	f = fmemopen((void *)text, strlen(text), "r");
	if (!f)
		return; /* read at its first frame, as before */
	parse_maps(s, f, &v, &n);
	fclose(f);
	if (install_maps(s, p, v, n, exe_ino) < 0)
		return;
	p->read_at = fr_now_ns(CLOCK_MONOTONIC);
	p->inherited = false;
	s->st.maps_taken++;
}

static struct mapping *find_mapping(struct proc *p, uint64_t addr)
{
	_Static_assert(offsetof(struct mapping, start) == offsetof(struct fr_span, start) &&
			       offsetof(struct mapping, end) == offsetof(struct fr_span, end),
		       "a mapping starts as a span");
	/* /proc/PID/maps is sorted by address */
	return (struct mapping *)fr_span_find(p->maps, p->nmaps, sizeof(*p->maps), addr);
}

/* File offset -> ELF address, by the load segment holding it. */
static bool file_vaddr(const struct elf_file *f, uint64_t foff, long page, uint64_t *ret)
{
	for (unsigned i = 0; i < f->nload; i++) {
		uint64_t lo = f->load[i].off & ~(uint64_t)(page - 1);
		if (foff >= lo && foff < f->load[i].off + f->load[i].filesz) {
			*ret = foff - f->load[i].off + f->load[i].vaddr;
			return true;
		}
	}
	return false;
}

static const struct fr_elf_sym *file_lookup(const struct elf_file *f, uint64_t vaddr)
{
	return fr_elf_symtab_find(&f->tab, vaddr);
}

/* Anonymous code (or code outside every mapping read) named by the
 * process's perf map, if it has one: JIT code. */
static bool jit_symbol(struct fr_symbolizer *s, uint32_t pid, uint64_t a, struct fr_frame_desc *ret)
{
	struct fr_perf_sym js;
	char *name;

	if (fr_perf_maps_lookup(s->jit, pid, a, &js) <= 0)
		return false;
	name = copy_name(s, js.name, js.name_len);
	if (!name)
		return false;
	s->st.frames_named++;
	s->st.frames_jit++;
	ret->symbol = (struct fr_record){ .type = FR_REC_SYMBOL, .pid = pid };
	ret->symbol.symbol.start = js.start;
	ret->symbol.symbol.size = js.size;
	ret->symbol.symbol.name = name;
	ret->symbol.symbol.name_len = js.name_len;
	ret->symbol.symbol.module = "";
	return true;
}

void fr_symbolizer_python(struct fr_symbolizer *s, uint32_t pid, uint64_t exe_ino, struct fr_py_probe *ret)
{
	struct proc *p = fr_pid_map_get(&s->procs, pid);

	*ret = (struct fr_py_probe){};
	for (size_t i = 0; p && exe_ino && i < p->nmaps; i++) {
		const struct elf_file *f = p->maps[i].file;
		if (f && f->loaded && f->ino == exe_ino) {
			*ret = f->py;
			return;
		}
	}
}

void fr_symbolizer_user(struct fr_symbolizer *s, uint32_t pid, uint64_t exe_ino, uint64_t addr, bool leaf,
			struct fr_frame_desc *ret)
{
	uint64_t a = fr_frame_lookup_addr(addr, leaf), vaddr;
	struct proc *p = proc_get(s, pid);
	struct mapping *m;
	const struct fr_elf_sym *sym;
	struct elf_file *f;

	*ret = (struct fr_frame_desc){};
	if (!p) {
		s->st.frames_unknown++;
		return;
	}
	p->used = ++s->clock;
	/* an exec we have not seen yet?  (Its record may wait in another
	 * CPU's ring; a child's inherited maps are its parent's image.) */
	if (exe_ino && p->exe_ino != exe_ino && (p->inherited || fr_now_ns(CLOCK_MONOTONIC) - p->read_at >= REREAD_NS))
		(void)read_maps(s, p);
	if (exe_ino && p->exe_ino != exe_ino) {
		s->st.frames_unknown++; /* sampled before the image now running */
		return;
	}
	m = find_mapping(p, a);
	if (!m) {
		uint64_t since = fr_now_ns(CLOCK_MONOTONIC) - p->read_at;
		if (since >= REREAD_NS || p->rereads_early == 0 || (p->rereads_early == 1 && since >= REREAD_FIRST_NS)) {
			if (since < REREAD_NS)
				p->rereads_early++;
			(void)read_maps(s, p); /* a library loaded since */
			m = find_mapping(p, a);
		}
	}
	if (!m) {
		if (!jit_symbol(s, pid, a, ret))
			s->st.frames_unknown++;
		return;
	}
	f = m->file;
	if (f) {
		f->used = s->clock;
		if (!f->loaded)
			(void)file_load(s, f, pid, m);
		if (!file_vaddr(f, m->pgoff, s->page_size, &m->vaddr))
			m->vaddr = m->pgoff;
	}
	ret->mapping = (struct fr_record){ .type = FR_REC_MAPPING, .pid = pid };
	ret->mapping.mapping.start = m->start;
	ret->mapping.mapping.end = m->end;
	ret->mapping.mapping.offset = m->pgoff;
	ret->mapping.mapping.vaddr = m->vaddr;
	ret->mapping.mapping.path = m->path;
	ret->mapping.mapping.path_len = (uint32_t)strlen(m->path);
	if (f) {
		ret->mapping.mapping.build_id = f->build_id;
		ret->mapping.mapping.build_id_len = f->build_id_len;
	}
	if (!f) {
		if (!jit_symbol(s, pid, a, ret))
			s->st.frames_module++;
		return;
	}
	if (!file_vaddr(f, a - m->start + m->pgoff, s->page_size, &vaddr) || !(sym = file_lookup(f, vaddr))) {
		s->st.frames_module++;
		return;
	}
	s->st.frames_named++;
	if (!f->dwarf_tried && (!f->dwarf_reopen_at || fr_now_ns(CLOCK_MONOTONIC) >= f->dwarf_reopen_at))
		(void)file_open_dwarf(s, f, pid, m);
	if (f->dwarf) {
		const struct inline_names *in = file_inlines(s, f, vaddr);

		f->dwarf_used = s->clock;
		/* a copy: the next frame of this sample may close this file's
		 * debug information, or reuse the cache slot */
		const char *names = in->len ? copy_name(s, in->names, in->len) : NULL;

		if (names) {
			s->st.frames_inlined++;
			ret->inl = (struct fr_record){ .type = FR_REC_INLINE, .pid = pid };
			ret->inl.inl.addr = a;
			ret->inl.inl.names = names;
			ret->inl.inl.names_len = in->len;
		}
		/* over the bound: what grew most goes (@in with it: copied),
		 * and the heap it freed goes back to the system */
		bool trimmed = false;
		while (s->dwarf_heap > DWARF_HEAP_MAX) {
			struct elf_file *big = NULL;
			for (struct elf_file *g = s->files; g; g = g->next)
				if (g->dwarf && (!big || g->dwarf_heap > big->dwarf_heap))
					big = g;
			if (!big)
				break;
			file_close_dwarf(s, big);
			big->dwarf_tried = false;
			big->dwarf_reopen_at = fr_now_ns(CLOCK_MONOTONIC) + DWARF_REOPEN_NS;
			s->st.dwarf_trimmed++;
			trimmed = true;
		}
		if (trimmed)
			(void)malloc_trim(0);
	}
	ret->symbol = (struct fr_record){ .type = FR_REC_SYMBOL, .pid = pid };
	ret->symbol.symbol.start = a - (vaddr - sym->value);
	ret->symbol.symbol.size = sym->size;
	ret->symbol.symbol.name = fr_elf_sym_name(&f->tab, sym);
	ret->symbol.symbol.name_len = (uint32_t)strlen(ret->symbol.symbol.name);
	ret->symbol.symbol.module = "";
}

void fr_symbolizer_forget(struct fr_symbolizer *s, uint32_t pid)
{
	struct proc *p = fr_pid_map_remove(&s->procs, pid);

	fr_perf_maps_forget(s->jit, pid);
	proc_free(p);
}

void fr_symbolizer_fork(struct fr_symbolizer *s, uint32_t parent, uint32_t child)
{
	const struct proc *pp = fr_pid_map_get(&s->procs, parent);
	struct proc *c;
	size_t i;

	fr_symbolizer_forget(s, child); /* a reused pid */
	if (!pp || pp->nmaps == 0 || parent == child)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	*c = (struct proc){ .pid = child, .inherited = true, .exe_ino = pp->exe_ino, .read_at = pp->read_at, .used = pp->used };
	c->maps = calloc(pp->nmaps, sizeof(*c->maps));
	for (i = 0; c->maps && i < pp->nmaps; i++) {
		c->maps[i] = pp->maps[i];
		c->maps[i].path = strdup(pp->maps[i].path);
		if (!c->maps[i].path)
			break;
		if (c->maps[i].file)
			c->maps[i].file->refs++;
	}
	c->nmaps = i;
	if (!c->maps || i < pp->nmaps || fr_pid_map_put(&s->procs, child, c, NULL) < 0) {
		proc_free(c); /* read from /proc when first sampled, as without */
		return;
	}
	s->st.maps_inherited++;
}

/* @ppid's entry if it runs image @exe_ino, with its maps.  What it is
 * known by may be from before an exec whose record waits in another CPU's
 * ring: then it is read again, as fr_symbolizer_user() would. */
static struct proc *parent_of_image(struct fr_symbolizer *s, uint32_t ppid, uint64_t exe_ino)
{
	struct proc *pp = proc_get(s, ppid);

	if (pp && pp->exe_ino != exe_ino && (pp->inherited || fr_now_ns(CLOCK_MONOTONIC) - pp->read_at >= REREAD_NS))
		(void)read_maps(s, pp);
	return pp && pp->nmaps && pp->exe_ino == exe_ino ? pp : NULL;
}

void fr_symbolizer_parent(struct fr_symbolizer *s, uint32_t pid, uint32_t ppid, uint64_t exe_ino)
{
	struct proc *p;

	if (!ppid || ppid == pid || !exe_ino)
		return;
	p = fr_pid_map_get(&s->procs, pid);
	/* maps inherited at a fork whose record came before that of the
	 * parent's exec (rings of two CPUs): another image's, start over */
	if (p && p->inherited && p->exe_ino != exe_ino) {
		proc_free(fr_pid_map_remove(&s->procs, pid));
		p = NULL;
	}
	/* not seen yet, and its parent runs the same image: forked without
	 * exec (the fork record may wait in another CPU's ring), its maps
	 * are its parent's; one read of them serves all its children (a
	 * read per child was most of the daemon's CPU under perf bench sched
	 * messaging).  A frame outside them has its own read (REREAD_NS). */
	if (!p) {
		if (parent_of_image(s, ppid, exe_ino)) {
			fr_symbolizer_fork(s, ppid, pid);
			return;
		}
		p = proc_get(s, pid);
	}
	/* gone before its maps were read: its parent's, if it runs the same
	 * image (a fork without exec) */
	if (p && !p->nmaps && parent_of_image(s, ppid, exe_ino))
		fr_symbolizer_fork(s, ppid, pid);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void fr_symbolizer_trim(struct fr_symbolizer *s)
{
	free_retired(s);
	free_names(s);
	/* processes: down to three quarters of the bound, least recently
	 * used first */
	if (s->procs.n > PROCS_MAX) {
		uint64_t *used = malloc(s->procs.n * sizeof(*used)), cut;
		uint32_t *victims = malloc(s->procs.n * sizeof(*victims));
		size_t i = 0, n = 0, nv = 0;
		struct proc *p;
		uint32_t pid;

		if (used && victims) {
			while ((p = fr_pid_map_next(&s->procs, &i, NULL)))
				used[n++] = p->used;
			qsort(used, n, sizeof(*used), cmp_u64);
			cut = used[n - PROCS_MAX * 3 / 4];
			for (i = 0; (p = fr_pid_map_next(&s->procs, &i, &pid));)
				if (p->used < cut)
					victims[nv++] = pid;
			for (i = 0; i < nv; i++)
				fr_symbolizer_forget(s, victims[i]);
		}
		free(used);
		free(victims);
	}
	/* symbol tables: unused files go first, then the least recently used */
	while (s->st.cache_bytes > CACHE_BYTES_MAX) {
		struct elf_file **pp, **victim = NULL;

		for (pp = &s->files; *pp; pp = &(*pp)->next)
			if ((*pp)->tab.bytes && (!victim || ((*pp)->refs == 0) > ((*victim)->refs == 0) ||
					     (((*pp)->refs == 0) == ((*victim)->refs == 0) && (*pp)->used < (*victim)->used)))
				victim = pp;
		if (!victim)
			break;
		file_unload(s, *victim);
	}
	/* entries of files no process maps any more, once their table is
	 * gone (kept until then: the same binary is often run again) */
	for (struct elf_file **pp = &s->files; *pp;) {
		struct elf_file *f = *pp;
		if (f->refs == 0 && f->tab.bytes == 0) {
			*pp = f->next;
			file_unload(s, f);
			free(f);
			s->st.files--;
		} else
			pp = &f->next;
	}
}

void fr_symbolizer_get_stats(const struct fr_symbolizer *s, struct fr_symbolizer_stats *ret)
{
	*ret = s->st;
	ret->processes = s->procs.n;
}

void fr_symbolizer_get_jit_stats(const struct fr_symbolizer *s, struct fr_perf_maps_stats *ret)
{
	fr_perf_maps_get_stats(s->jit, ret);
}
