/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names given at read time (lib/late-names.h) from a real debug file:
 * fr-deep-inline, built -O2 -g with fr_deep_b inlined into fr_deep_a (its
 * path is the argument), put where a debug directory keeps it
 * (.build-id/xx/rest.debug), or served by a thread that speaks as much of
 * the debuginfod protocol as the client uses: the file, or 404.  Frames
 * named by ELF address (a return address one byte back), the inlined
 * function as a frame of its own, a file of another build refused, the
 * frames not to be named left alone, threads naming at once; the same
 * through a window (fr_window_frames()); and the servers: the file from
 * them (when the directory's is not one), "not found" asked once and not
 * warned of, a refused connection and a server that never answers each
 * warned of once, within the timeout, and asked no more, with no "not
 * found" left in libdebuginfod's cache for the build it gave up on.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "chunk.h"
#include "clock.h"
#include "late-names.h"
#include "record-fields.h"
#include "store-format.h"
#include "store-reader.h"
#include "store-writer.h"
#include "window.h"
#include "test.h"

#define SEC 1000000000ULL
/* where the test's process has the binary mapped (PIE: ELF address 0 there) */
#define BASE 0x555500000000ULL

/* What the test knows of fr-deep-inline, read with libelf and libdw
 * themselves. */
static struct {
	uint8_t build_id[FR_BUILD_ID_MAX];
	uint32_t build_id_len;
	char hex[2 * FR_BUILD_ID_MAX + 1];
	uint64_t c, c_size, a;        /* fr_deep_c, fr_deep_a */
	uint64_t b_lo, b_hi;          /* fr_deep_b's code inside fr_deep_a */
	void *file;                   /* all of it */
	size_t size;
} bin;

static int servers_failed_calls, servers_failed_err;

static void on_servers_failed(int err, const char *urls, void *userdata)
{
	servers_failed_calls++;
	servers_failed_err = err;
	CHECK(urls && strncmp(urls, "http://127.0.0.1:", 17) == 0);
}

static bool elf_sym(Elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;
				if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(elf, sh.sh_link, s.st_name)) &&
				    strcmp(n, name) == 0) {
					*value = s.st_value;
					*size = s.st_size;
					return true;
				}
			}
		}
	return false;
}

static bool find_inlined(Dwarf_Die *die, const char *name, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Attribute attr;
	Dwarf_Addr base, l, h;
	Dwarf_Die child;
	const char *n;
	ptrdiff_t off = 0;

	/* its first range of two bytes or more (GCC lists empty ones) */
	if (dwarf_tag(die) == DW_TAG_inlined_subroutine &&
	    (n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr))) && strcmp(n, name) == 0)
		while ((off = dwarf_ranges(die, off, &base, &l, &h)) > 0)
			if (h - l >= 2) {
				*lo = l;
				*hi = h;
				return true;
			}
	if (dwarf_child(die, &child) != 0)
		return false;
	do
		if (find_inlined(&child, name, lo, hi))
			return true;
	while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static void read_binary(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf_Off off = 0, next;
	const void *id;
	size_t hsize;
	uint64_t size;
	ssize_t len;
	struct stat st;
	Elf *elf;
	Dwarf *dw;

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	bin.size = (size_t)st.st_size;
	bin.file = malloc(bin.size);
	CHECK(bin.file && pread(fd, bin.file, bin.size, 0) == (ssize_t)bin.size);
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	len = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (len < 2 || len > FR_BUILD_ID_MAX) {
		fprintf(stderr, "%s has no GNU build id\n", path);
		exit(1);
	}
	memcpy(bin.build_id, id, (size_t)len);
	bin.build_id_len = (uint32_t)len;
	fr_format_hex(bin.build_id, bin.build_id_len, bin.hex, sizeof(bin.hex));
	CHECK(elf_sym(elf, "fr_deep_c", &bin.c, &bin.c_size));
	CHECK(elf_sym(elf, "fr_deep_a", &bin.a, &size));
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	CHECK(dw != NULL);
	while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu) && find_inlined(&cu, "fr_deep_b", &bin.b_lo, &bin.b_hi))
			break;
		off = next;
	}
	/* inlined into fr_deep_a, and not at its first byte */
	CHECK(bin.b_lo > bin.a && bin.b_hi <= bin.a + size && bin.b_hi - bin.b_lo >= 2);
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
}

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0 && write(fd, p, n) == (ssize_t)n);
	close(fd);
}

/* @dir/.build-id/xx/rest.debug for build id @hex: the binary itself (it
 * has what a debug file has: .symtab and the DWARF). */
static void put_debug_file(const char *dir, const char *hex)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/.build-id", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	write_file(path, bin.file, bin.size);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *dir)
{
	CHECK_EQ(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A user frame at ELF address @vaddr of a build (frame 0 when @leaf). */
static struct fr_frame frame(uint64_t vaddr, const uint8_t *id, uint32_t id_len)
{
	return (struct fr_frame){ .addr = BASE + vaddr, .module = "/opt/fr-deep-inline", .module_len = 19,
				  .has_offset = true, .offset = vaddr, .build_id = id, .build_id_len = id_len };
}

static bool named(const struct fr_frame *f, const char *name, uint64_t off)
{
	return f->sym && f->sym_len == strlen(name) && memcmp(f->sym, name, f->sym_len) == 0 && f->sym_off == off &&
	       !f->inlined;
}

static struct fr_late_names *late_names(const char *debug_dir, uint64_t timeout_ns)
{
	struct fr_late_names_params p = { .debug_dir = debug_dir, .timeout_ns = timeout_ns,
					  .servers_failed = on_servers_failed };
	struct fr_late_names *ln = NULL;

	CHECK_EQ(fr_late_names_new(&p, &ln), 0);
	return ln;
}

struct namer {
	struct fr_late_names *ln;
	unsigned k;
	unsigned bad;
};

static void *name_many(void *userdata)
{
	struct namer *t = userdata;

	for (unsigned i = 0; i < 2000; i++) {
		uint8_t other[20] = { 0xee, (uint8_t)t->k, (uint8_t)i, (uint8_t)(i >> 8) };
		struct fr_frame f = frame(bin.c + i % bin.c_size, bin.build_id, bin.build_id_len), in[4];
		struct fr_frame g = frame(bin.c, other, sizeof(other));

		fr_late_names_resolve(t->ln, &f, true, in, 4);
		fr_late_names_resolve(t->ln, &g, true, in, 4);
		t->bad += !named(&f, "fr_deep_c", i % bin.c_size) || g.sym;
	}
	return NULL;
}

/* From a debug directory: names, inlined frames, what is left alone. */
static void test_debug_dir(const char *tmp)
{
	static const uint8_t other_id[20] = { 0xab, 0xcd, 1, 2, 3 };
	char dir[256], other_hex[41];
	struct fr_frame f, in[4];
	struct fr_late_names *ln;
	struct namer t[4];
	pthread_t th[4];

	snprintf(dir, sizeof(dir), "%s/debug", tmp);
	CHECK_EQ(mkdir(dir, 0755), 0);
	put_debug_file(dir, bin.hex);
	/* the same file under another build id: not that build's */
	put_debug_file(dir, fr_format_hex(other_id, sizeof(other_id), other_hex, sizeof(other_hex)));
	unsetenv("DEBUGINFOD_URLS");
	ln = late_names(dir, 0);

	/* the interrupted instruction at itself; a return address one byte
	 * back, in the call it returns from (the end of fr_deep_c is not
	 * fr_deep_c's, unless it is where a call returns to) */
	f = frame(bin.c + 4, bin.build_id, bin.build_id_len);
	CHECK_EQ(fr_late_names_resolve(ln, &f, true, in, 4), 0);
	CHECK(named(&f, "fr_deep_c", 4));
	CHECK(f.module && f.has_offset && f.offset == bin.c + 4);
	f = frame(bin.c + bin.c_size, bin.build_id, bin.build_id_len);
	fr_late_names_resolve(ln, &f, false, in, 4);
	CHECK(named(&f, "fr_deep_c", bin.c_size));
	f = frame(bin.c + bin.c_size, bin.build_id, bin.build_id_len);
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!named(&f, "fr_deep_c", bin.c_size));

	/* fr_deep_b's code in fr_deep_a: a frame for it first */
	f = frame(bin.b_lo, bin.build_id, bin.build_id_len);
	CHECK_EQ(fr_late_names_resolve(ln, &f, true, in, 4), 1);
	CHECK(named(&f, "fr_deep_a", bin.b_lo - bin.a));
	CHECK(in[0].inlined && in[0].sym_len == 9 && memcmp(in[0].sym, "fr_deep_b", 9) == 0 && in[0].sym_off == 0 &&
	      in[0].offset == bin.b_lo && in[0].addr == f.addr);
	f = frame(bin.b_lo + 1, bin.build_id, bin.build_id_len);
	CHECK_EQ(fr_late_names_resolve(ln, &f, false, in, 4), 1);
	CHECK(named(&f, "fr_deep_a", bin.b_lo + 1 - bin.a));
	f = frame(bin.b_lo, bin.build_id, bin.build_id_len);
	CHECK_EQ(fr_late_names_resolve(ln, &f, true, in, 0), 0); /* no room */
	CHECK(named(&f, "fr_deep_a", bin.b_lo - bin.a));

	/* left alone: a file of another build, no debug file, named at
	 * capture, a kernel frame, no mapping, a marker */
	f = frame(bin.c + 4, other_id, sizeof(other_id));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	f = frame(bin.c + 4, (const uint8_t *)"\x01\x02\x03\x04", 4);
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	f = frame(bin.c + 4, bin.build_id, bin.build_id_len);
	f.sym = "captured";
	f.sym_len = 8;
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(f.sym_len == 8 && memcmp(f.sym, "captured", 8) == 0);
	f = frame(bin.c + 4, bin.build_id, bin.build_id_len);
	f.kernel = true;
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	f = frame(bin.c + 4, bin.build_id, bin.build_id_len);
	f.has_offset = false;
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	f = frame(bin.c + 4, bin.build_id, bin.build_id_len);
	f.addr = FR_FRAME_TRUNCATED;
	fr_late_names_resolve(ln, &f, false, in, 4);
	CHECK(!f.sym);

	/* threads at once, each adding builds as the others look up */
	for (unsigned i = 0; i < 4; i++) {
		t[i] = (struct namer){ .ln = ln, .k = i };
		CHECK_EQ(pthread_create(&th[i], NULL, name_many, &t[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(t[i].bad, 0);
	}
	CHECK_EQ(servers_failed_calls, 0);
	fr_late_names_free(ln);
	fr_late_names_free(NULL);
}

static void flush(struct fr_store_writer *w, ZSTD_CCtx *cctx, struct fr_chunk_builder *b, int64_t offset)
{
	uint8_t boot[16] = { 7, 7, 7 };
	void *buf;
	size_t len;

	CHECK_EQ(fr_chunk_builder_close(b, cctx, 0, boot, &buf, &len), 0);
	((struct fr_chunk_header *)buf)->realtime_offset = (int64_t)htole64((uint64_t)offset);
	CHECK_EQ(fr_store_writer_append(w, buf, len), 0);
	fr_store_writer_submit(w);
	fr_store_writer_process(w);
}

/* The frames of @w's one sample as "name|name (inlined)|...". */
static void sample_frames(struct fr_window *w, char *out, size_t n)
{
	struct fr_frame f[FR_FRAMES_EXPANDED_MAX];
	size_t len = 0;
	char name[128];

	out[0] = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct fr_window_entry e;
		int k;

		if (fr_window_get(w, i, &e) < 0 || e.r.type != FR_REC_SAMPLE)
			continue;
		k = fr_window_frames(w, &e, f, FR_FRAMES_EXPANDED_MAX);
		for (int j = 0; j < k && len < n; j++)
			len += (size_t)snprintf(out + len, n - len, "%s%s%s", j ? "|" : "",
						fr_frame_name(&f[j], true, name, sizeof(name)),
						f[j].inlined ? " (inlined)" : "");
	}
}

/* Through a window: a sample of the stripped binary, its mapping with the
 * build id, no symbol records (the daemon found no debug file). */
static void test_window(const char *tmp)
{
	struct fr_store_params p = { .size = 8u << 20, .nsegments = 2, .max_chunk = 8192 };
	struct fr_window_query q = { .since_ns = 0, .until_ns = UINT64_MAX, .skip_exe = true };
	uint64_t uf[] = { BASE + bin.c + 4, BASE + bin.b_lo + 1 };
	struct fr_record m = { .type = FR_REC_MAPPING, .ts = SEC, .pid = 7, .tid = 7 };
	struct fr_record s = { .type = FR_REC_SAMPLE, .ts = SEC + 1000, .pid = 7, .tid = 7, .comm = "fr-deep-inline",
			       .comm_len = 14 };
	char dir[256], debug[256], got[512], want[512];
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct fr_chunk_builder *b;
	struct fr_store_writer *w;
	struct fr_store_reader *r;
	struct fr_late_names *ln;
	struct fr_window *win;

	snprintf(dir, sizeof(dir), "%s/store", tmp);
	snprintf(debug, sizeof(debug), "%s/debug", tmp);
	m.mapping.start = BASE;
	m.mapping.end = BASE + 0x100000;
	m.mapping.path = "/opt/fr-deep-inline";
	m.mapping.path_len = 19;
	m.mapping.build_id = bin.build_id;
	m.mapping.build_id_len = bin.build_id_len;
	s.stack.user_frames = 2;
	s.stack.uframes = uf;
	CHECK_EQ(fr_store_writer_open(dir, &p, NULL, NULL, &w), 0);
	CHECK_EQ(fr_chunk_builder_new(0, 4096, &b), 0);
	CHECK_EQ(fr_chunk_builder_add(b, &m), 0);
	CHECK_EQ(fr_chunk_builder_add(b, &s), 0);
	flush(w, cctx, b, (int64_t)(fr_now_ns(CLOCK_REALTIME) - 60 * SEC));
	fr_chunk_builder_free(b);
	CHECK_EQ(fr_store_writer_sync(w), 0);
	CHECK_EQ(fr_store_writer_drain(w), 0);
	fr_store_writer_close(w);
	ZSTD_freeCCtx(cctx);

	for (int streamed = 0; streamed < 2; streamed++) {
		CHECK_EQ(fr_store_reader_open(dir, &r), 0);
		CHECK_EQ(streamed ? fr_window_stream_open(r, &q, &win) : fr_window_load(r, &q, &win), 0);
		ln = late_names(debug, 0);
		CHECK(!streamed || fr_window_stream_next(win) > 0);
		/* unnamed as stored, named once the window has late names */
		sample_frames(win, got, sizeof(got));
		snprintf(want, sizeof(want), "fr-deep-inline+0x%llx|fr-deep-inline+0x%llx", (unsigned long long)bin.c + 4,
			 (unsigned long long)bin.b_lo + 1);
		CHECK_STR(got, want);
		fr_window_set_late_names(win, ln);
		sample_frames(win, got, sizeof(got));
		snprintf(want, sizeof(want), "fr_deep_c+0x4|fr_deep_b (inlined)|fr_deep_a+0x%llx",
			 (unsigned long long)(bin.b_lo + 1 - bin.a));
		CHECK_STR(got, want);
		fr_window_free(win);
		fr_late_names_free(ln);
		fr_store_reader_free(r);
	}
}

/* Enough of a debuginfod server: GET /buildid/HEX/debuginfo gets the
 * binary for its build id, 404 for any other.  Counts the requests. */
struct server {
	int fd;
	unsigned requests; /* atomic */
	bool stop;         /* atomic */
	pthread_t thread;
};

static void reply(int c, const char *head, const void *body, size_t n)
{
	CHECK(write(c, head, strlen(head)) == (ssize_t)strlen(head));
	for (size_t done = 0; done < n;) {
		ssize_t k = write(c, (const char *)body + done, n - done);
		if (k <= 0)
			break;
		done += (size_t)k;
	}
}

static void *serve(void *userdata)
{
	struct server *s = userdata;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		char req[4096], hex[2 * FR_BUILD_ID_MAX + 1], head[256];
		size_t len = 0;
		int c;

		if (poll(&p, 1, 50) <= 0 || (c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		while (len < sizeof(req) - 1) {
			ssize_t k = read(c, req + len, sizeof(req) - 1 - len);
			if (k <= 0)
				break;
			len += (size_t)k;
			req[len] = 0;
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[len] = 0;
		__atomic_add_fetch(&s->requests, 1, __ATOMIC_RELEASE);
		if (sscanf(req, "GET /buildid/%128[0-9a-f]/debuginfo ", hex) == 1 && strcmp(hex, bin.hex) == 0) {
			snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
				 bin.size);
			reply(c, head, bin.file, bin.size);
		} else
			reply(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", NULL, 0);
		close(c);
	}
	return NULL;
}

/* A socket listening on a free loopback port; its port in *ret_port. */
static int listen_loopback(int *ret_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 16) == 0 &&
	      getsockname(fd, (struct sockaddr *)&a, &l) == 0);
	*ret_port = ntohs(a.sin_port);
	return fd;
}

static void set_urls(int port)
{
	char urls[64];

	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
}

/* A cache of its own for libdebuginfod: what one case leaves there must
 * not answer the next. */
static void set_cache(char *out, size_t n, const char *tmp, const char *name)
{
	snprintf(out, n, "%s/%s", tmp, name);
	setenv("DEBUGINFOD_CACHE_PATH", out, 1);
}

static uint64_t ms_since(uint64_t t)
{
	return (fr_now_ns(CLOCK_MONOTONIC) - t) / 1000000;
}

static void test_servers(const char *tmp)
{
	uint8_t missing[20] = { 0x5a, 1 }, missing2[20] = { 0x5a, 2 };
	char empty[256], stale[256], cache[256], path[512], hex[41];
	struct server srv = {};
	struct fr_late_names *ln;
	struct fr_frame f, in[4];
	struct stat st;
	unsigned n;
	uint64_t t;
	int port;

	snprintf(empty, sizeof(empty), "%s/empty", tmp);
	CHECK_EQ(mkdir(empty, 0755), 0);
	unsetenv("DEBUGINFOD_TIMEOUT");
	unsetenv("DEBUGINFOD_PROGRESS");

	/* a server with the file: named from it (the directory's file for
	 * that build is not one); one without: no warning, asked once per
	 * build */
	snprintf(stale, sizeof(stale), "%s/stale", tmp);
	CHECK_EQ(mkdir(stale, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id", stale);
	CHECK_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", stale, bin.hex);
	CHECK_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", stale, bin.hex, bin.hex + 2);
	write_file(path, "not an ELF file", 15);
	srv.fd = listen_loopback(&port);
	CHECK_EQ(pthread_create(&srv.thread, NULL, serve, &srv), 0);
	set_urls(port);
	set_cache(cache, sizeof(cache), tmp, "cache-404");
	servers_failed_calls = 0;
	ln = late_names(stale, 0);
	f = frame(bin.b_lo, bin.build_id, bin.build_id_len);
	CHECK_EQ(fr_late_names_resolve(ln, &f, true, in, 4), 1);
	CHECK(named(&f, "fr_deep_a", bin.b_lo - bin.a) && in[0].sym_len == 9 && memcmp(in[0].sym, "fr_deep_b", 9) == 0);
	snprintf(path, sizeof(path), "%s/%s/debuginfo", cache, bin.hex);
	CHECK(stat(path, &st) == 0 && (size_t)st.st_size == bin.size); /* in libdebuginfod's cache */
	f = frame(bin.c, missing, sizeof(missing));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	n = __atomic_load_n(&srv.requests, __ATOMIC_ACQUIRE);
	CHECK_EQ(n, 2);
	f = frame(bin.c + 1, missing, sizeof(missing));
	fr_late_names_resolve(ln, &f, true, in, 4);
	f = frame(bin.c, missing2, sizeof(missing2));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	CHECK_EQ(__atomic_load_n(&srv.requests, __ATOMIC_ACQUIRE), n + 1);
	CHECK_EQ(servers_failed_calls, 0);
	fr_late_names_free(ln);
	__atomic_store_n(&srv.stop, true, __ATOMIC_RELEASE);
	pthread_join(srv.thread, NULL);
	close(srv.fd);

	/* nobody listening: one warning, and no more asking */
	srv.fd = listen_loopback(&port);
	close(srv.fd);
	set_urls(port);
	set_cache(cache, sizeof(cache), tmp, "cache-refused");
	servers_failed_calls = 0;
	ln = late_names(empty, 0);
	f = frame(bin.c, missing, sizeof(missing));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	CHECK_EQ(servers_failed_calls, 1);
	CHECK_EQ(servers_failed_err, -ECONNREFUSED);
	f = frame(bin.c, missing2, sizeof(missing2));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK_EQ(servers_failed_calls, 1);
	fr_late_names_free(ln);

	/* a server that takes the connection and never answers: given up
	 * after the timeout (libdebuginfod looks in every second or so),
	 * once; the build it was asked for is not "not found" in the cache */
	srv.fd = listen_loopback(&port);
	set_urls(port);
	set_cache(cache, sizeof(cache), tmp, "cache-silent");
	servers_failed_calls = 0;
	ln = late_names(empty, SEC);
	t = fr_now_ns(CLOCK_MONOTONIC);
	f = frame(bin.c, missing, sizeof(missing));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(!f.sym);
	CHECK_EQ(servers_failed_calls, 1);
	CHECK_EQ(servers_failed_err, -ETIMEDOUT);
	CHECK(ms_since(t) >= 1000 && ms_since(t) < 3500);
	snprintf(path, sizeof(path), "%s/%s/debuginfo", cache, fr_format_hex(missing, sizeof(missing), hex, sizeof(hex)));
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	t = fr_now_ns(CLOCK_MONOTONIC);
	f = frame(bin.c, missing2, sizeof(missing2));
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(ms_since(t) < 500);
	CHECK_EQ(servers_failed_calls, 1);
	fr_late_names_free(ln);
	close(srv.fd);

	/* the local directory is looked in first: no server asked at all */
	set_urls(port);
	servers_failed_calls = 0;
	snprintf(path, sizeof(path), "%s/debug", tmp);
	ln = late_names(path, SEC);
	f = frame(bin.c + 4, bin.build_id, bin.build_id_len);
	fr_late_names_resolve(ln, &f, true, in, 4);
	CHECK(named(&f, "fr_deep_c", 4));
	CHECK_EQ(servers_failed_calls, 0);
	fr_late_names_free(ln);
	unsetenv("DEBUGINFOD_URLS");
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/fr-test-late-names-XXXXXX";

	if (argc != 2) {
		fprintf(stderr, "usage: test-late-names FR-DEEP-INLINE\n");
		return 2;
	}
	read_binary(argv[1]);
	CHECK(mkdtemp(tmp) != NULL);
	test_debug_dir(tmp);
	test_window(tmp);
	test_servers(tmp);
	rm_rf(tmp);
	free(bin.file);
	return TEST_DONE();
}
