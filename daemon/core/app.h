/*
 * app.h - struct app: what the daemon shares between requests and between
 * its modules (the configuration, the store, when it started, its port).
 *
 * main.c fills one before the server and the engines start; it is
 * read-only afterwards. Every layer may see it: model and X11 modules take
 * a struct app * without seeing the HTTP layer's struct req (api.h).
 * Does not: own anything (main.c opens and closes the store).
 */
#ifndef DETM_APP_H
#define DETM_APP_H

#include <stdint.h>

#include "config.h"

struct store;           /* store/store.h: the database (a layer above core; main.c opens it) */

struct app {
	const struct config *cfg;
	struct store *store;
	int64_t started_ms;
	int64_t started_mono_us;
	int port;               /* the bound port */
};

#endif
