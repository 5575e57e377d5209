/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workloads for the system call of off-CPU records: ways to be off
 * the CPU that are not a system call.
 *   fr-offcpu spin
 *       loops on the CPU without a system call until killed, so that a
 *       SIGSTOP stops it on its way back to user space from an interrupt
 *       (the test stops it, waits, continues it and kills it)
 *   fr-offcpu fault MS
 *       a second thread writes to a page that is not there yet, registered
 *       with userfaultfd; the main thread sleeps MS milliseconds in
 *       nanosleep() and then supplies the page.  The thread is blocked in a
 *       page fault (whose error code sits where a system call's number
 *       would), the main thread in clock_nanosleep.  Prints
 *       {"pid":N,"tid":T,"waited_ns":W}: the faulting thread's tid and how
 *       long its write took.
 *   fr-offcpu uring MS
 *       an io_uring read of an empty pipe, forced to a worker thread
 *       (iou-wrk-PID, a user thread made by the kernel, with registers
 *       copied from the submitting call but no return address); the main
 *       thread sleeps MS milliseconds in nanosleep() and submits a second
 *       one, which wakes the worker from idle.  Prints
 *       {"pid":N,"worker":T}: the worker's tid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int spin(void)
{
	volatile uint64_t n = 0;

	for (;;)
		n++;
	return 0;
}

struct toucher {
	volatile char *page;
	pid_t tid;
	uint64_t waited_ns;
};

static void *touch(void *arg)
{
	struct toucher *t = arg;
	uint64_t t0;

	t->tid = gettid();
	t0 = mono();
	t->page[0] = 1; /* blocks in the page fault until the page is supplied */
	t->waited_ns = mono() - t0;
	return NULL;
}

static int fault(long ms)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {};
	struct uffdio_copy copy = {};
	struct uffd_msg msg;
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
	struct toucher t = {};
	pthread_t th;
	char *page, *src;
	int uffd;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0) {
		fprintf(stderr, "fr-offcpu: userfaultfd: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(uffd, UFFDIO_API, &api) < 0) {
		fprintf(stderr, "fr-offcpu: UFFDIO_API: %s\n", strerror(errno));
		return 1;
	}
	page = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || src == MAP_FAILED)
		return 1;
	reg.range.start = (uintptr_t)page;
	reg.range.len = (uint64_t)psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
		fprintf(stderr, "fr-offcpu: UFFDIO_REGISTER: %s\n", strerror(errno));
		return 1;
	}
	t.page = page;
	if (pthread_create(&th, NULL, touch, &t) != 0)
		return 1;
	/* the fault has happened once it is reported */
	if (read(uffd, &msg, sizeof(msg)) != (ssize_t)sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		return 1;
	nanosleep(&d, NULL);
	src[0] = 1;
	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)src;
	copy.len = (uint64_t)psz;
	if (ioctl(uffd, UFFDIO_COPY, &copy) < 0) {
		fprintf(stderr, "fr-offcpu: UFFDIO_COPY: %s\n", strerror(errno));
		return 1;
	}
	pthread_join(th, NULL);
	printf("{\"pid\":%d,\"tid\":%d,\"waited_ns\":%llu}\n", getpid(), t.tid, (unsigned long long)t.waited_ns);
	return 0;
}

/* The tid of this process's io_uring worker, or 0. */
static pid_t uring_worker(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	pid_t tid = 0;

	while (d && !tid && (de = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, "iou-wrk-", 8) == 0)
			tid = atoi(de->d_name);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return tid;
}

static int uring(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char buf[2];
	pid_t worker = 0;
	int fd[2], k;

	k = io_uring_queue_init(4, &ring, 0);
	if (k < 0) {
		fprintf(stderr, "fr-offcpu: io_uring_queue_init: %s\n", strerror(-k));
		return 1;
	}
	if (pipe2(fd, O_CLOEXEC) < 0)
		return 1;
	for (int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, fd[0], buf + i, 1, 0);
		sqe->flags |= IOSQE_ASYNC; /* to a worker, not tried inline */
		k = io_uring_submit(&ring);
		if (k != 1) {
			fprintf(stderr, "fr-offcpu: io_uring_submit: %s\n", strerror(k < 0 ? -k : EIO));
			return 1;
		}
		if (i == 0) {
			/* the worker was made by the submission; it names
			 * itself, arms a poll for the read and goes idle */
			struct timespec ms1 = { 0, 1000000 };
			for (int t = 0; t < 1000 && !(worker = uring_worker()); t++)
				nanosleep(&ms1, NULL);
			nanosleep(&d, NULL);
		}
	}
	if (write(fd[1], "xy", 2) != 2)
		return 1;
	for (int i = 0; i < 2; i++) {
		if (io_uring_wait_cqe(&ring, &cqe) < 0 || cqe->res != 1)
			return 1;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	if (!worker) {
		fprintf(stderr, "fr-offcpu: no io_uring worker thread was seen\n");
		return 1;
	}
	printf("{\"pid\":%d,\"worker\":%d}\n", getpid(), worker);
	return 0;
}

int main(int argc, char **argv)
{
	long ms;

	if (argc == 2 && strcmp(argv[1], "spin") == 0)
		return spin();
	if (argc == 3 && strcmp(argv[1], "fault") == 0 && (ms = strtol(argv[2], NULL, 10)) > 0)
		return fault(ms);
	if (argc == 3 && strcmp(argv[1], "uring") == 0 && (ms = strtol(argv[2], NULL, 10)) > 0)
		return uring(ms);
	fprintf(stderr, "usage: fr-offcpu spin | fr-offcpu fault MS | fr-offcpu uring MS\n");
	return 2;
}
