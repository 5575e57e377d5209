/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JIT perf maps read the way the daemon reads them, through
 * /proc/PID/root/tmp/perf-PID.map of this test (and of children it
 * forks): names with spaces, bad and partial lines, growth between
 * lookups and its rate limit, later lines over earlier ones (against a
 * brute force), a replaced file, lines over a read, the memory and
 * process bounds, and files refused (a FIFO without blocking). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/perf-map.h"
#include "clock.h"
#include "test.h"

/* more than the 100 ms between tries for growth */
#define AFTER_RETRY_US 130000

static char path[64];

static void map_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/perf-%d.map", (int)pid);
}

/* Writes @text as a new file (another inode) in place of @p's. */
static void put_file(const char *p, const char *text, size_t len)
{
	char tmp[80];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(fchmod(fd, 0644), 0);
	CHECK_EQ(write(fd, text, len), (long long)len);
	close(fd);
	CHECK_EQ(rename(tmp, p), 0);
}

static void put(const char *text)
{
	put_file(path, text, strlen(text));
}

static void append(const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
	close(fd);
}

/* The name at @addr, "" for none, "ERR" for an error. */
static const char *name_at(struct fr_perf_maps *m, pid_t pid, uint64_t addr, struct fr_perf_sym *sym)
{
	static char buf[256];
	struct fr_perf_sym s;
	int r = fr_perf_maps_lookup(m, (uint32_t)pid, addr, &s);

	if (r < 0)
		return "ERR";
	if (r == 0)
		return "";
	if (strlen(s.name) != s.name_len)
		return "BADLEN";
	snprintf(buf, sizeof(buf), "%s", s.name);
	if (sym)
		*sym = s;
	return buf;
}

/* Whether less than the 100 ms between tries has passed since @t: a
 * check that a try waits holds only then (a loaded machine may stall us). */
static bool quick(uint64_t t)
{
	return fr_now_ns(CLOCK_MONOTONIC) - t < 90 * 1000000ULL;
}

static struct fr_perf_maps_stats stats(const struct fr_perf_maps *m)
{
	struct fr_perf_maps_stats s;

	fr_perf_maps_get_stats(m, &s);
	return s;
}

static void test_lines(struct fr_perf_maps *m, pid_t me)
{
	struct fr_perf_sym s = {};
	uint64_t t = fr_now_ns(CLOCK_MONOTONIC);
	bool unnamed5, unnamed6;

	put("1000 100 alpha\n"
	    "0x2000 0x80 beta gamma  delta  \n"
	    "3000 40 LazyCompile:*foo /app/x.js:10\r\n"
	    "zzz 10 bad\n"
	    "4000 10\n"
	    "4100 0 empty\n"
	    "\n"
	    "fffffffffffffff0 20 wraps\n"
	    "4200 10 after_bad\n"
	    "5000 20 parti");
	CHECK_STR(name_at(m, me, 0x1000, &s), "alpha");
	CHECK_EQ(s.start, 0x1000);
	CHECK_EQ(s.size, 0x100);
	CHECK_STR(name_at(m, me, 0x10ff, NULL), "alpha");
	CHECK_STR(name_at(m, me, 0x1100, NULL), "");
	CHECK_STR(name_at(m, me, 0xfff, NULL), "");
	CHECK_STR(name_at(m, me, 0x207f, &s), "beta gamma  delta");
	CHECK_EQ(s.start, 0x2000);
	CHECK_EQ(s.size, 0x80);
	CHECK_STR(name_at(m, me, 0x3001, NULL), "LazyCompile:*foo /app/x.js:10");
	CHECK_STR(name_at(m, me, 0x4205, NULL), "after_bad");
	CHECK_EQ(stats(m).lines, 4);
	CHECK_EQ(stats(m).lines_bad, 5); /* also the empty line, and the range past 2^64 */
	CHECK_EQ(stats(m).files, 1);

	/* the partial line is not taken, nor its completion within 100 ms */
	CHECK_STR(name_at(m, me, 0x5005, NULL), "");
	append("al\n6000 10 grown\n7000 10 par");
	unnamed5 = !name_at(m, me, 0x5005, NULL)[0];
	unnamed6 = !name_at(m, me, 0x6005, NULL)[0];
	if (quick(t))
		CHECK(unnamed5 && unnamed6);
	usleep(AFTER_RETRY_US);
	CHECK_STR(name_at(m, me, 0x5005, &s), "partial");
	CHECK_EQ(s.start, 0x5000);
	CHECK_STR(name_at(m, me, 0x6005, NULL), "grown");
	CHECK_STR(name_at(m, me, 0x7005, NULL), "");
	append("tial_too\n");
	usleep(AFTER_RETRY_US);
	CHECK_STR(name_at(m, me, 0x7005, NULL), "partial_too");
	CHECK_STR(name_at(m, me, 0x1000, NULL), "alpha");
	CHECK_EQ(stats(m).files, 1);
}

static void test_overlaps(struct fr_perf_maps *m, pid_t me)
{
	struct fr_perf_sym s = {};

	put("10000 100 A\n"
	    "10080 100 B\n"
	    "10040 10 C\n");
	fr_perf_maps_forget(m, (uint32_t)me);
	CHECK_STR(name_at(m, me, 0x10038, &s), "A");
	CHECK_STR(name_at(m, me, 0x10045, NULL), "C");
	/* the part of A after C is still A, with A's own start and size */
	CHECK_STR(name_at(m, me, 0x10050, &s), "A");
	CHECK_EQ(s.start, 0x10000);
	CHECK_EQ(s.size, 0x100);
	CHECK_STR(name_at(m, me, 0x1007f, NULL), "A");
	CHECK_STR(name_at(m, me, 0x10080, &s), "B");
	CHECK_EQ(s.start, 0x10080);
	CHECK_STR(name_at(m, me, 0x1017f, NULL), "B");

	/* a later line starting below, and one at the same start */
	append("ff00 180 D\n"
	       "10080 100 E\n");
	usleep(AFTER_RETRY_US);
	CHECK_STR(name_at(m, me, 0xff00, &s), "D"); /* a miss: reads */
	CHECK_EQ(s.start, 0xff00);
	CHECK_EQ(s.size, 0x180);
	CHECK_STR(name_at(m, me, 0x10045, NULL), "D");
	CHECK_STR(name_at(m, me, 0x1007f, NULL), "D");
	CHECK_STR(name_at(m, me, 0x10080, NULL), "E");
	CHECK_STR(name_at(m, me, 0x10100, NULL), "E");
	CHECK_STR(name_at(m, me, 0x10180, NULL), "");

	/* a new file at the path (the pid reused without a forget): start over */
	uint64_t files = stats(m).files;
	put("20000 10 fresh\n");
	usleep(AFTER_RETRY_US);
	CHECK_STR(name_at(m, me, 0x20000, NULL), "fresh");
	CHECK_STR(name_at(m, me, 0x10045, NULL), "");
	CHECK_EQ(stats(m).files, files + 1);
}

/* Random lines, many overlapping, some appended in order as JITs do,
 * against the newest line holding each address: a file read at once, then
 * a few lines more (painted over recent segments, not all of them). */
#define NLINES 2500
#define NMORE 50
static uint64_t rstart[NLINES + NMORE], rsize[NLINES + NMORE];
static uint64_t cursor = 0x400000;
static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static size_t random_lines(int from, int to, char *text, size_t cap)
{
	size_t len = 0;

	for (int i = from; i < to; i++) {
		unsigned long long r = test_xorshift(&rng);
		if (r & 1) {
			rstart[i] = cursor;
			cursor += 1 + r % 0x200;
		} else {
			rstart[i] = 0x400000 + (r >> 8) % (cursor - 0x400000 + 0x400);
		}
		rsize[i] = 1 + (r >> 40) % 0x300;
		len += (size_t)snprintf(text + len, cap - len, "%" PRIx64 " %" PRIx64 " n%d\n", rstart[i], rsize[i], i);
	}
	return len;
}

static void check_random(struct fr_perf_maps *m, pid_t me, int nlines)
{
	unsigned bad = 0;

	for (int q = 0; q < 30000; q++) {
		unsigned long long r = test_xorshift(&rng);
		uint64_t addr;
		int want = -1, i = (int)(r % (unsigned)nlines);
		char name[16];
		struct fr_perf_sym s = {};

		if (q % 3 == 0) /* at a start, an end, one past it */
			addr = rstart[i] + (r & 2 ? rsize[i] - (r & 4 ? 1 : 0) : 0);
		else
			addr = 0x400000 - 0x10 + (r >> 8) % (cursor - 0x400000 + 0x800);
		for (i = nlines - 1; i >= 0; i--)
			if (addr >= rstart[i] && addr - rstart[i] < rsize[i]) {
				want = i;
				break;
			}
		snprintf(name, sizeof(name), "n%d", want);
		const char *got = name_at(m, me, addr, &s);
		if (want < 0 ? got[0] != '\0' : strcmp(got, name) || s.start != rstart[want] || s.size != rsize[want]) {
			if (bad++ < 5)
				fprintf(stderr, "0x%" PRIx64 ": got \"%s\", want \"%s\"\n", addr, got,
					want < 0 ? "" : name);
		}
	}
	CHECK_EQ(bad, 0);
}

static void test_random(struct fr_perf_maps *m, pid_t me)
{
	static char text[NLINES * 32];
	size_t len = random_lines(0, NLINES, text, sizeof(text));

	CHECK(len < 64 * 1024); /* one read */
	put_file(path, text, len);
	fr_perf_maps_forget(m, (uint32_t)me);
	check_random(m, me, NLINES);

	len = random_lines(NLINES, NLINES + NMORE, text, sizeof(text));
	text[len] = '\0';
	append(text);
	usleep(AFTER_RETRY_US);
	CHECK_STR(name_at(m, me, 1, NULL), ""); /* a miss: reads */
	check_random(m, me, NLINES + NMORE);
	CHECK_EQ(stats(m).lines_bad, 5);
}

/* A line longer than a read is skipped; the lines after it are taken. */
static void test_long_line(struct fr_perf_maps *m, pid_t me)
{
	size_t n = 70000;
	char *text = malloc(n + 64);

	CHECK(text != NULL);
	if (!text)
		return;
	memset(text, 'x', n);
	memcpy(text, "8000 10 ", 8);
	n += (size_t)snprintf(text + n, 64, "\n9000 10 after_long\n");
	put_file(path, text, n);
	free(text);
	fr_perf_maps_forget(m, (uint32_t)me);
	uint64_t bad = stats(m).lines_bad;
	const char *got = "";
	/* the rest of a long file comes one read per miss, at most one per 4 ms */
	for (int i = 0; i < 10 && !got[0]; i++) {
		got = name_at(m, me, 0x9000, NULL);
		usleep(5000);
	}
	CHECK_STR(got, "after_long");
	CHECK_STR(name_at(m, me, 0x8000, NULL), "");
	CHECK_EQ(stats(m).lines_bad, bad + 1);
}

static void test_refused(struct fr_perf_maps *m, pid_t me)
{
	uint64_t refused = stats(m).refused;
	struct fr_perf_sym s;

	/* writable by anyone: anyone could have named the frames */
	put("a000 10 planted\n");
	CHECK_EQ(chmod(path, 0666), 0);
	fr_perf_maps_forget(m, (uint32_t)me);
	uint64_t t = fr_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(fr_perf_maps_lookup(m, (uint32_t)me, 0xa000, &s), -EPERM);
	/* the error is for the lookup that tried; the next ones wait */
	int r = fr_perf_maps_lookup(m, (uint32_t)me, 0xa000, &s);
	if (quick(t))
		CHECK_EQ(r, 0);

	/* a FIFO must not block the daemon (alarm() in main fails the test if it does) */
	CHECK_EQ(unlink(path), 0);
	CHECK_EQ(mkfifo(path, 0644), 0);
	fr_perf_maps_forget(m, (uint32_t)me);
	CHECK_EQ(fr_perf_maps_lookup(m, (uint32_t)me, 0xa000, &s), -EPERM);
	CHECK_EQ(unlink(path), 0);

	CHECK_EQ(symlink("/etc/hostname", path), 0);
	fr_perf_maps_forget(m, (uint32_t)me);
	CHECK_EQ(fr_perf_maps_lookup(m, (uint32_t)me, 0xa000, &s), -EPERM);
	CHECK_EQ(unlink(path), 0);
	CHECK_EQ(stats(m).refused, refused + 3);

	/* no file: nothing, not an error */
	fr_perf_maps_forget(m, (uint32_t)me);
	CHECK_EQ(fr_perf_maps_lookup(m, (uint32_t)me, 0xa000, &s), 0);
}

/* One process over the bound keeps its newest lines, within the bound. */
static void test_one_over_bound(pid_t me)
{
	struct fr_perf_maps *m = NULL;
	const int n = 6000;
	char *text = malloc((size_t)n * 32);
	size_t len = 0;

	CHECK(text != NULL);
	if (!text)
		return;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, 32, "%x 10 sym%d\n", 0x100000 + i * 0x10, i);
	put_file(path, text, len);
	free(text);
	CHECK_EQ(fr_perf_maps_new(64 * 1024, 4, &m), 0);
	/* one read a miss, at most one per 4 ms */
	const char *got = "";
	for (int i = 0; i < 20 && !got[0]; i++) {
		got = name_at(m, me, 0x100000 + (n - 1) * 0x10, NULL);
		CHECK(stats(m).held <= 64 * 1024);
		usleep(5000);
	}
	CHECK_STR(got, "sym5999");
	CHECK(stats(m).bytes >= len); /* a partial line at the end of a read is read again */
	CHECK_EQ(stats(m).lines, n);
	CHECK(stats(m).trimmed > 0);
	CHECK(stats(m).held <= 64 * 1024);
	CHECK_STR(name_at(m, me, 0x100000 + (n - 1) * 0x10, NULL), "sym5999");
	CHECK_STR(name_at(m, me, 0x100000 + (n - 100) * 0x10, NULL), "sym5900");
	CHECK_STR(name_at(m, me, 0x100000, NULL), "");
	CHECK_EQ(stats(m).evicted, 0);
	fr_perf_maps_free(m);
}

/* Children, each with its map: least recently used first out. */
static void test_bounds(void)
{
	pid_t kids[3];
	char kpath[3][64];
	struct fr_perf_maps *m = NULL;

	for (int k = 0; k < 3; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			for (;;)
				pause();
		}
		CHECK(kids[k] > 0);
		map_path(kids[k], kpath[k], sizeof(kpath[k]));
		/* ~1200 lines: some 50 KiB held each */
		char *text = malloc(1200 * 32);
		size_t len = 0;
		for (int i = 0; i < 1200; i++)
			len += (size_t)snprintf(text + len, 32, "%x 10 k%d_%d\n", 0x1000 + i * 0x10, k, i);
		put_file(kpath[k], text, len);
		free(text);
	}

	/* memory: 128 KiB holds two children's maps, not three */
	CHECK_EQ(fr_perf_maps_new(128 * 1024, 16, &m), 0);
	CHECK_STR(name_at(m, kids[0], 0x1000, NULL), "k0_0");
	CHECK_STR(name_at(m, kids[1], 0x1000, NULL), "k1_0");
	CHECK_STR(name_at(m, kids[0], 0x1010, NULL), "k0_1"); /* kids[1] is now the oldest */
	CHECK_EQ(stats(m).evicted, 0);
	CHECK_STR(name_at(m, kids[2], 0x1000, NULL), "k2_0");
	CHECK_EQ(stats(m).evicted, 1);
	CHECK(stats(m).held <= 128 * 1024);
	CHECK_EQ(stats(m).trimmed, 0);
	uint64_t files = stats(m).files;
	CHECK_STR(name_at(m, kids[0], 0x1020, NULL), "k0_2"); /* still held */
	CHECK_EQ(stats(m).files, files);
	CHECK_STR(name_at(m, kids[1], 0x1020, NULL), "k1_2"); /* read again */
	CHECK_EQ(stats(m).files, files + 1);
	fr_perf_maps_free(m);

	/* processes: two at most */
	CHECK_EQ(fr_perf_maps_new(1024 * 1024, 2, &m), 0);
	for (int k = 0; k < 3; k++)
		CHECK_STR(name_at(m, kids[k], 0x1000, NULL), k == 0 ? "k0_0" : k == 1 ? "k1_0" : "k2_0");
	CHECK_EQ(stats(m).evicted, 1);
	CHECK_EQ(stats(m).files, 3);
	CHECK_STR(name_at(m, kids[2], 0x1010, NULL), "k2_1");
	CHECK_EQ(stats(m).files, 3);
	/* forget: the next lookup reads the file again */
	fr_perf_maps_forget(m, (uint32_t)kids[2]);
	CHECK_STR(name_at(m, kids[2], 0x1010, NULL), "k2_1");
	CHECK_EQ(stats(m).files, 4);
	CHECK_EQ(stats(m).evicted, 1);
	fr_perf_maps_free(m);

	for (int k = 0; k < 3; k++) {
		unlink(kpath[k]);
		kill(kids[k], SIGKILL);
		waitpid(kids[k], NULL, 0);
	}
}

int main(void)
{
	struct fr_perf_maps *m = NULL;
	pid_t me = getpid();

	alarm(50); /* a blocked open fails the test rather than hang it */
	map_path(me, path, sizeof(path));
	unlink(path);

	CHECK_EQ(fr_perf_maps_new(1024, 4, &m), -EINVAL);
	CHECK_EQ(fr_perf_maps_new(1 << 20, 0, &m), -EINVAL);
	CHECK_EQ(fr_perf_maps_new(1 << 20, 8, &m), 0);
	if (!m)
		return 1;
	test_lines(m, me);
	test_overlaps(m, me);
	test_random(m, me);
	test_long_line(m, me);
	test_refused(m, me);
	CHECK_EQ(stats(m).evicted, 0);
	CHECK(stats(m).lookups >= stats(m).named);
	fr_perf_maps_forget(m, (uint32_t)me);
	CHECK_EQ(stats(m).held, 0);
	fr_perf_maps_free(m);

	test_one_over_bound(me);
	test_bounds();
	unlink(path);
	return TEST_DONE();
}
