/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers in the systemd style: cleanup attributes and ownership moves. */
#ifndef FR_MACRO_H
#define FR_MACRO_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _always_inline_ inline __attribute__((always_inline))
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN8(x) (((x) + 7) & ~(size_t)7)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define SWAP(a, b)                              \
	do {                                    \
		__typeof__(a) _swap_tmp = (a);  \
		(a) = (b);                      \
		(b) = _swap_tmp;                \
	} while (0)

/* Take a pointer out of a _cleanup_ variable so it is not freed. */
#define TAKE_PTR(p)                          \
	({                                   \
		typeof(p) _p_ = (p);         \
		(p) = NULL;                  \
		_p_;                         \
	})
#define TAKE_FD(fd)                          \
	({                                   \
		int _fd_ = (fd);             \
		(fd) = -EBADF;               \
		_fd_;                        \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -EBADF;
}
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* -errno for a libc call that returned -1. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* to[i] += from[i] for @n counters (stats structs of uint64_t only). */
static inline void fr_add_counters(uint64_t *to, const uint64_t *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		to[i] += from[i];
}

#endif
