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
/* Gives the socket file at @path (bound by us) to @uid:@gid with @mode,
 * through a descriptor of that file (O_PATH | O_NOFOLLOW): a symbolic
 * link, or a socket someone else made, put in its place is refused
 * (-ELOOP, -EPERM), never followed. */
int fr_unix_socket_set_owner(const char *path, uid_t uid, gid_t gid, mode_t mode);
/* The directory of @path may hold the daemon's sockets: owned by root or
 * us, and not writable by group or others unless sticky (as /tmp).
 * Otherwise someone else could swap the sockets for their own or for a
 * symbolic link.  0, or -EPERM with @why set. */
int fr_unix_socket_check_dir(const char *path, char *why, size_t len);
/* Closes @fd (if open) and removes @path. */
void fr_unix_socket_close(int fd, const char *path);

#endif
