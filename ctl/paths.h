/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where things are: the configuration (loaded once), and the store and
 * the control socket it names, unless --store or --socket say. */
#ifndef FR_CTL_PATHS_H
#define FR_CTL_PATHS_H

#include "frctl.h"

/* Loads the configuration (once); prints the error and returns <0. */
int frctl_load_conf(struct frctl *f);
const char *frctl_store_path(struct frctl *f);
/* The socket the daemon of this store listens on. Caller frees. */
char *frctl_socket_path(struct frctl *f);

#endif
