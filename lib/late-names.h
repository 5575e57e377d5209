/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names given at read time to the user frames the daemon could not name
 * (a stripped binary whose debug file was not installed where it ran): by
 * the build id and ELF address their mapping records keep, from the
 * function symbols, and the DWARF for inlined functions, of that build's
 * separate debug file, found in a directory of them
 * (DIR/.build-id/xx/rest.debug) or else on the debuginfod servers of
 * DEBUGINFOD_URLS (libdebuginfod, with its cache).  Each build id is
 * looked up once, and nothing is opened or asked before a frame needs it.
 * Servers that do not answer (a refused connection, no answer within the
 * timeout) cost that once: they are not asked again, and the caller hears
 * of it once.  Frames of one object can be named by several threads at
 * once; its names live as long as it does.
 */
#ifndef FR_LATE_NAMES_H
#define FR_LATE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symtab.h"

#define FR_LATE_NAMES_DEBUG_DIR "/usr/lib/debug"
/* The longest a debuginfod query waits for a server to start sending the
 * file, and then for each next part of it: a server that is down must not
 * hold up a reader for libdebuginfod's 90 s (times its retries), nor a
 * large file that is coming be given up on. */
#define FR_LATE_NAMES_TIMEOUT_NS (10 * 1000000000ULL)

struct fr_late_names;

struct fr_late_names_params {
	const char *debug_dir; /* NULL: FR_LATE_NAMES_DEBUG_DIR */
	bool no_debuginfod;    /* the directory only, whatever DEBUGINFOD_URLS says */
	uint64_t timeout_ns;   /* 0: FR_LATE_NAMES_TIMEOUT_NS */
	/* Called once, when the servers did not answer (-ETIMEDOUT: not
	 * within the timeout; -ECONNREFUSED, -EHOSTUNREACH, ...: as
	 * libdebuginfod says), with DEBUGINFOD_URLS; no server is asked
	 * again.  From the thread that was naming a frame, under the
	 * object's lock.  A "not found" is an answer: no call. */
	void (*servers_failed)(int err, const char *urls, void *userdata);
	void *userdata;
};

/* Reads DEBUGINFOD_URLS (unset or empty: no servers); opens nothing. */
int fr_late_names_new(const struct fr_late_names_params *p, struct fr_late_names **ret);
struct fr_late_names *fr_late_names_free(struct fr_late_names *ln);

/* A user frame fr_symtab_resolve() left unnamed, with a mapping that has
 * a build id: names @f (sym, sym_len, sym_off, as if named at capture;
 * the rest unchanged) if that build's debug file has a function there,
 * and puts a frame for each function inlined where it is into
 * out[0..max), as fr_symtab_inlined() does.  @leaf: @f is the interrupted
 * instruction (frame 0), not a return address.  Any other frame is left
 * alone.  Returns how many inlined frames. */
size_t fr_late_names_resolve(struct fr_late_names *ln, struct fr_frame *f, bool leaf, struct fr_frame *out,
			     size_t max);

#endif
