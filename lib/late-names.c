/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "dlopen-lib.h"
#include "elf-inflated.h"
#include "elf-names.h"
#include "late-names.h"
#include "macro.h"
#include "record-fields.h"

/* libdebuginfod, opened at the first frame a server is asked for
 * (lib/dlopen-lib.h): it needs libcurl and its 30 libraries */
#define DEBUGINFOD_FUNCTIONS(X) \
	X(debuginfod_begin) X(debuginfod_end) X(debuginfod_find_debuginfo) \
	X(debuginfod_get_url) X(debuginfod_get_user_data) X(debuginfod_set_progressfn) \
	X(debuginfod_set_user_data)
#define DECLARE(f) static typeof(f) *dl_##f;
DEBUGINFOD_FUNCTIONS(DECLARE)
static pthread_once_t debuginfod_once = PTHREAD_ONCE_INIT;
static int debuginfod_loaded; /* 0, or -ELIBACC */

static void load_debuginfod(void)
{
#define SYM(f) FR_DLSYM(dl_##f, f),
	static const struct fr_dlsym syms[] = { DEBUGINFOD_FUNCTIONS(SYM) };
	const char *why;

	debuginfod_loaded = fr_dlopen_lib("libdebuginfod.so.1", syms, sizeof(syms) / sizeof(*syms), &why);
}

/* Debug files whose DWARF stays open, for inlined functions: the frames of
 * files beyond get their functions' names, without inlined frames.  A
 * window has a handful of builds that were not named at capture. */
#define DWARF_FILES_MAX 32
/* A debug file whose sections that names read (fr_elf_names_only())
 * inflate past this is used for its symbols only: libdw inflates them
 * all at once when it opens the file, before any other bound (glibc's
 * take 7.3 MB; a damaged or hostile file can claim gigabytes). */
static const struct fr_elf_inflate_limits inflate_limits = {
	.section_max = 256u << 20,
	.total_max = 256u << 20,
};

/* The functions inlined at one ELF address (len 0: none). */
struct inline_slot {
	uint64_t vaddr;
	char *names; /* NUL-separated, innermost first */
	uint32_t len;
	bool used;
};

/* One build id, looked up: its debug file's names, or none (no debug file
 * found, or not a usable one). */
struct debug_file {
	uint8_t build_id[FR_BUILD_ID_MAX];
	uint32_t build_id_len;
	struct fr_elf_symtab syms; /* empty: none */
	int fd;                    /* -EBADF once the file is mapped whole */
	Elf *elf;                  /* with dwarf, kept for it */
	Dwarf *dwarf;
	struct inline_slot *inl;   /* by ELF address, open addressing */
	size_t ninl, inlcap;       /* inlcap: 0 or a power of two */
};

struct fr_late_names {
	pthread_mutex_t lock;      /* over all of the rest */
	char *debug_dir;
	char *urls;                /* DEBUGINFOD_URLS; NULL: no servers */
	uint64_t timeout_ns;
	void (*servers_failed)(int err, const char *urls, void *userdata);
	void *userdata;
	bool elf_ready;
	struct debug_file **files; /* sorted by build id */
	size_t nfiles, cap;
	unsigned ndwarf;
	debuginfod_client *client;
	bool servers_down;         /* they did not answer: not asked again */
	/* the query under way: when it last moved, and what it had then */
	uint64_t moved_at;
	long received;
	bool sending, cancelled;
};

int fr_late_names_new(const struct fr_late_names_params *p, struct fr_late_names **ret)
{
	const char *urls = p->no_debuginfod ? NULL : getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct fr_late_names *ln = calloc(1, sizeof(*ln));

	if (!ln)
		return -ENOMEM;
	pthread_mutex_init(&ln->lock, NULL);
	/* as libdebuginfod reads it: URLs separated by spaces */
	if (urls && !urls[strspn(urls, " ")])
		urls = NULL;
	ln->debug_dir = strdup(p->debug_dir ? p->debug_dir : FR_LATE_NAMES_DEBUG_DIR);
	ln->urls = urls ? strdup(urls) : NULL;
	if (!ln->debug_dir || (urls && !ln->urls)) {
		fr_late_names_free(ln);
		return -ENOMEM;
	}
	ln->timeout_ns = p->timeout_ns ? p->timeout_ns : FR_LATE_NAMES_TIMEOUT_NS;
	ln->servers_failed = p->servers_failed;
	ln->userdata = p->userdata;
	*ret = ln;
	return 0;
}

static void file_free(struct debug_file *df)
{
	fr_elf_symtab_done(&df->syms);
	for (size_t i = 0; i < df->inlcap; i++)
		free(df->inl[i].names);
	free(df->inl);
	if (df->dwarf)
		dwarf_end(df->dwarf);
	if (df->elf)
		elf_end(df->elf);
	closep(&df->fd);
	free(df);
}

struct fr_late_names *fr_late_names_free(struct fr_late_names *ln)
{
	if (!ln)
		return NULL;
	for (size_t i = 0; i < ln->nfiles; i++)
		file_free(ln->files[i]);
	free(ln->files);
	if (ln->client)
		dl_debuginfod_end(ln->client);
	free(ln->debug_dir);
	free(ln->urls);
	pthread_mutex_destroy(&ln->lock);
	free(ln);
	return NULL;
}

/* DEBUG_DIR/.build-id/ab/cdef....debug, where distributions' -dbg and
 * -dbgsym packages put them. */
static int open_local(const struct fr_late_names *ln, const struct debug_file *df)
{
	return fr_debug_file_open(ln->debug_dir, df->build_id, df->build_id_len);
}

/* libdebuginfod calls it about once a second, and as data come: until a
 * server starts sending the file (and the client knows its URL), @a
 * counts these calls; from then on, it is the bytes received.  A query
 * that has not moved for the timeout is given up. */
static int on_progress(debuginfod_client *c, long a, long b)
{
	struct fr_late_names *ln = dl_debuginfod_get_user_data(c);
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);

	if (dl_debuginfod_get_url(c) && (!ln->sending || a != ln->received)) {
		ln->sending = true;
		ln->received = a;
		ln->moved_at = now;
	}
	if (now - ln->moved_at < ln->timeout_ns)
		return 0;
	ln->cancelled = true;
	return 1;
}

/* libdebuginfod 0.188 takes a query its progress function cancelled for
 * one the servers answered "not found", and leaves in its cache the empty
 * file that remembers such an answer: every client of that cache would
 * take the build for missing for cache_miss_s (10 minutes), though no
 * server said so.  The file goes, if it is that empty file.  The cache is
 * where debuginfod_find_debuginfo(3) says. */
static void cache_forget(const struct debug_file *df)
{
	const char *cache = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR), *home = getenv("HOME"),
		   *xdg = getenv("XDG_CACHE_HOME");
	char dir[PATH_MAX], path[PATH_MAX + 16], hex[2 * FR_BUILD_ID_MAX + 1];
	struct stat st;

	fr_format_hex(df->build_id, df->build_id_len, hex, sizeof(hex));
	if (cache && *cache)
		snprintf(dir, sizeof(dir), "%s/%s", cache, hex);
	else {
		/* the old place, if it exists, else the XDG one */
		snprintf(dir, sizeof(dir), "%s/.debuginfod_client_cache", home ? home : "/");
		if (stat(dir, &st) < 0) {
			if (xdg && *xdg)
				snprintf(dir, sizeof(dir), "%s/debuginfod_client", xdg);
			else
				snprintf(dir, sizeof(dir), "%s/.cache/debuginfod_client", home ? home : "/");
		}
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", hex);
	}
	snprintf(path, sizeof(path), "%s/debuginfo", dir);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
		(void)unlink(path);
		(void)rmdir(dir); /* only if empty */
	}
}

/* The debug file of @df from the servers (or libdebuginfod's cache of
 * their answers): a descriptor, -ENOENT when they do not have it, or
 * another -errno when they did not answer (then, and from then on, none
 * is asked). */
static int ask_servers(struct fr_late_names *ln, const struct debug_file *df)
{
	_cleanup_free_ char *path = NULL;
	int fd;

	if (!ln->urls || ln->servers_down)
		return -ENOENT;
	if (!ln->client) {
		(void)pthread_once(&debuginfod_once, load_debuginfod);
		if (debuginfod_loaded < 0) {
			/* said as servers that do not answer are */
			ln->servers_down = true;
			if (ln->servers_failed)
				ln->servers_failed(debuginfod_loaded, ln->urls, ln->userdata);
			return debuginfod_loaded;
		}
		ln->client = dl_debuginfod_begin();
		if (!ln->client) {
			ln->servers_down = true;
			return -ENOMEM;
		}
		dl_debuginfod_set_user_data(ln->client, ln);
		dl_debuginfod_set_progressfn(ln->client, on_progress);
	}
	ln->moved_at = fr_now_ns(CLOCK_MONOTONIC);
	ln->sending = ln->cancelled = false;
	fd = dl_debuginfod_find_debuginfo(ln->client, df->build_id, (int)df->build_id_len, &path);
	if (fd >= 0) {
		/* (libdebuginfod opens it without O_CLOEXEC) */
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	if (ln->cancelled) {
		cache_forget(df);
		fd = -ETIMEDOUT;
	}
	if (fd == -ENOENT)
		return fd;
	ln->servers_down = true;
	if (ln->servers_failed && fd != -ENOSYS)
		ln->servers_failed(fd, ln->urls, ln->userdata);
	return fd;
}

/* Reads @df's names from debug file @fd (taken when kept open for its
 * DWARF).  -EBADMSG: not a usable debug file of that build. */
static int file_read(struct fr_late_names *ln, struct debug_file *df, int *fd)
{
	const void *bid;
	ssize_t bl;
	Elf *elf;

	if (!ln->elf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return -EBADMSG;
		ln->elf_ready = true;
	}
	/* private: fr_elf_names_only() writes to its section headers */
	elf = elf_begin(*fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!elf)
		return -EBADMSG;
	/* a file of another build (a stale link in the directory) would
	 * name every frame wrongly */
	bl = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
	if (bl != (ssize_t)df->build_id_len || memcmp(bid, df->build_id, (size_t)bl) != 0 ||
	    fr_elf_symtab_read(elf, false, &df->syms) < 0) {
		elf_end(elf);
		return -EBADMSG;
	}
	if (ln->ndwarf < DWARF_FILES_MAX && fr_elf_names_only(elf) == 0 &&
	    fr_elf_inflated_check(elf, &inflate_limits, NULL) == 0 && (df->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL))) {
		ln->ndwarf++;
		df->elf = elf;
		/* the whole file is mapped: no descriptor held */
		if (elf_cntl(elf, ELF_C_FDDONE) != 0)
			df->fd = TAKE_FD(*fd);
		return 0;
	}
	elf_end(elf);
	return 0;
}

/* Finds @df's debug file, in the directory, else on the servers, and
 * reads its names; without one, @df has none (and is not looked for
 * again). */
static void file_load(struct fr_late_names *ln, struct debug_file *df)
{
	for (int i = 0; i < 2; i++) {
		_cleanup_close_ int fd = i == 0 ? open_local(ln, df) : ask_servers(ln, df);

		if (fd >= 0 && file_read(ln, df, &fd) == 0)
			return;
	}
}

static int cmp_build_id(const struct debug_file *df, const uint8_t *id, uint32_t len)
{
	int c = memcmp(df->build_id, id, MIN(df->build_id_len, len));

	if (c)
		return c;
	return df->build_id_len < len ? -1 : df->build_id_len > len;
}

/* The entry of build id @id, looked up at the first call.  NULL only when
 * out of memory. */
static struct debug_file *file_get(struct fr_late_names *ln, const uint8_t *id, uint32_t len)
{
	size_t lo = 0, hi = ln->nfiles;
	struct debug_file *df;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_build_id(ln->files[mid], id, len);

		if (c == 0)
			return ln->files[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (ln->nfiles == ln->cap) {
		size_t c = ln->cap ? ln->cap * 2 : 16;
		struct debug_file **v = realloc(ln->files, c * sizeof(*v));

		if (!v)
			return NULL;
		ln->files = v;
		ln->cap = c;
	}
	df = calloc(1, sizeof(*df));
	if (!df)
		return NULL;
	memcpy(df->build_id, id, len);
	df->build_id_len = len;
	df->fd = -EBADF;
	memmove(&ln->files[lo + 1], &ln->files[lo], (ln->nfiles - lo) * sizeof(*ln->files));
	ln->files[lo] = df;
	ln->nfiles++;
	file_load(ln, df);
	return df;
}

static size_t inline_hash(uint64_t vaddr, size_t cap)
{
	return (size_t)((vaddr * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

/* The functions inlined at ELF address @vaddr of @df, from its DWARF at
 * the first call (a scope walk: up to ~100 us in a large unit), then
 * remembered: samples hit the same return addresses again and again.
 * NULL when there is no DWARF (or no memory). */
static const struct inline_slot *file_inlines(struct debug_file *df, uint64_t vaddr)
{
	struct inline_slot *s;
	size_t i;

	if (!df->dwarf)
		return NULL;
	if (df->inlcap)
		for (i = inline_hash(vaddr, df->inlcap); df->inl[i].used; i = (i + 1) & (df->inlcap - 1))
			if (df->inl[i].vaddr == vaddr)
				return &df->inl[i];
	/* at most half full */
	if (2 * (df->ninl + 1) > df->inlcap) {
		size_t cap = df->inlcap ? 2 * df->inlcap : 64;
		struct inline_slot *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t k = 0; k < df->inlcap; k++) {
			if (!df->inl[k].used)
				continue;
			for (i = inline_hash(df->inl[k].vaddr, cap); v[i].used; i = (i + 1) & (cap - 1))
				;
			v[i] = df->inl[k];
		}
		free(df->inl);
		df->inl = v;
		df->inlcap = cap;
	}
	for (i = inline_hash(vaddr, df->inlcap); df->inl[i].used; i = (i + 1) & (df->inlcap - 1))
		;
	s = &df->inl[i];
	if (fr_elf_inlined_names(df->dwarf, vaddr, &s->names, &s->len) < 0)
		return NULL;
	s->vaddr = vaddr;
	s->used = true;
	df->ninl++;
	return s;
}

size_t fr_late_names_resolve(struct fr_late_names *ln, struct fr_frame *f, bool leaf, struct fr_frame *out,
			     size_t max)
{
	/* a return address is looked up one byte back, in the call, as
	 * fr_symtab_resolve() does */
	uint64_t back = f->addr - fr_frame_lookup_addr(f->addr, leaf), vaddr = f->offset - back;
	const struct inline_slot *in = NULL;
	const struct fr_elf_sym *s = NULL;
	struct debug_file *df;
	size_t n = 0;

	if (!ln || f->kernel || f->sym || !f->has_offset || !f->build_id_len || f->build_id_len > FR_BUILD_ID_MAX ||
	    f->addr < FR_FRAME_MARKER_MAX || f->offset < back)
		return 0;
	pthread_mutex_lock(&ln->lock);
	df = file_get(ln, f->build_id, f->build_id_len);
	if (df)
		s = fr_elf_symtab_find(&df->syms, vaddr);
	if (s) {
		const char *name = fr_elf_sym_name(&df->syms, s);

		f->sym = name;
		f->sym_len = (uint32_t)strlen(name);
		f->sym_off = f->offset - s->value;
		in = file_inlines(df, vaddr);
		if (in)
			n = fr_frame_inlined(f, in->names, in->len, out, max);
	}
	pthread_mutex_unlock(&ln->lock);
	return n;
}
