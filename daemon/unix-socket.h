/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's unix sockets (control, annotations): created, bound over a
 * stale file, opened to local users, and removed again. */
#ifndef FR_UNIX_SOCKET_H
#define FR_UNIX_SOCKET_H

#include <stdbool.h>
#include <sys/types.h>

/* A non-blocking socket of @type (SOCK_SEQPACKET listens, SOCK_DGRAM
 * receives) bound at @path, given @mode; @passcred asks for the senders'
 * credentials with each datagram.  Returns the fd or -errno. */
int fr_unix_socket_bind(const char *path, int type, bool passcred, mode_t mode);
/* Closes @fd (if open) and removes @path. */
void fr_unix_socket_close(int fd, const char *path);

#endif
