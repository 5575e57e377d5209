/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The attack of issue 42 on the daemon's loop, as an unprivileged user:
 * fr-fifo-swap DIR SECONDS copies its own executable to DIR/victim and
 * maps its code from there; spins 1.5 s of CPU outside it (so a sampling
 * daemon reads its maps, with DIR/victim in them); then renames
 * DIR/victim away, puts a FIFO in its place, remaps the range as an
 * anonymous copy, prints "swapped", spins SECONDS in the copy; then remaps
 * the range from another file (DIR/other, a second copy), prints
 * "remapped", and spins SECONDS more there.  A daemon that opens the
 * mapped file by its path opens the FIFO and waits for a writer; one that
 * opens only what is mapped finds nothing, then another file, and refuses.
 * fr-fifo-swap --jit SECONDS: prints its pid, then runs the same code from
 * an anonymous mapping only (as JIT code is) for SECONDS of CPU, at
 * 0x10000000000 (FR_JIT_ADDR), so a perf map written beforehand names it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FR_JIT_ADDR 0x10000000000ULL

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Called from its copy: no calls out, no data but its arguments. */
__attribute__((noinline, aligned(64))) static void spin_here(volatile uint64_t *counter, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		(*counter)++;
}

static void spin(void (*f)(volatile uint64_t *, uint64_t), double seconds)
{
	static volatile uint64_t counter;
	uint64_t end = cpu_ns() + (uint64_t)(seconds * 1e9);

	while (cpu_ns() < end)
		f(&counter, 200000);
}

static void copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (in < 0 || out < 0) {
		perror(to);
		exit(1);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			exit(1);
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	char victim[4096], old[4096], other[4096], line[4096];
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t fn = (uintptr_t)spin_here, lo = 0, hi = 0, off = 0;
	uint64_t file_off;
	size_t len = 2 * (size_t)page;
	void (*copy_fn)(volatile uint64_t *, uint64_t);
	unsigned char *region, *save;
	FILE *maps;
	int fd;

	if (argc == 3 && strcmp(argv[1], "--jit") == 0) {
		len = 2 * (size_t)page;
		region = mmap((void *)FR_JIT_ADDR, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (region == MAP_FAILED)
			return 1;
		/* the function and what follows it, from its page */
		memcpy(region, (void *)(fn & ~(uintptr_t)(page - 1)), len);
		mprotect(region, len, PROT_READ | PROT_EXEC);
		copy_fn = (void (*)(volatile uint64_t *, uint64_t))(region + (fn & (uintptr_t)(page - 1)));
		printf("%d\n", getpid());
		fflush(stdout);
		spin(copy_fn, atof(argv[2]));
		return 0;
	}
	if (argc != 3)
		return 2;
	snprintf(victim, sizeof(victim), "%s/victim", argv[1]);
	snprintf(old, sizeof(old), "%s/victim.old", argv[1]);
	snprintf(other, sizeof(other), "%s/other", argv[1]);
	copy("/proc/self/exe", victim);
	copy("/proc/self/exe", other);
	/* where spin_here() is in our executable's file */
	maps = fopen("/proc/self/maps", "re");
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long a, b, o;
		if (sscanf(line, "%lx-%lx %*s %lx", &a, &b, &o) == 3 && fn >= a && fn < b) {
			lo = a, hi = b, off = o;
			break;
		}
	}
	if (!hi)
		return 1;
	file_off = (fn - lo + off) & ~(uint64_t)(page - 1);
	fd = open(victim, O_RDONLY | O_CLOEXEC);
	region = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)file_off);
	close(fd);
	if (region == MAP_FAILED)
		return 1;
	copy_fn = (void (*)(volatile uint64_t *, uint64_t))(region + ((fn - lo + off) - file_off));
	printf("%d\n", getpid());
	fflush(stdout);

	spin(spin_here, 1.5); /* the daemon reads our maps */

	save = malloc(len);
	memcpy(save, region, len);
	if (rename(victim, old) < 0 || mkfifo(victim, 0644) < 0) {
		perror("swap");
		return 1;
	}
	if (mmap(region, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		return 1;
	memcpy(region, save, len);
	mprotect(region, len, PROT_READ | PROT_EXEC);
	printf("swapped\n");
	fflush(stdout);
	spin(copy_fn, atof(argv[2]));

	fd = open(other, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || mmap(region, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, (off_t)file_off) == MAP_FAILED)
		return 1;
	close(fd);
	printf("remapped\n");
	fflush(stdout);
	spin(copy_fn, atof(argv[2]));
	return 0;
}
