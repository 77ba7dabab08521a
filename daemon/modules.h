/*
 * modules.h - starting and stopping detmd's modules in dependency order.
 *
 * One place knows the order, so detmd's main and the fuzz harness (which
 * drives the route handlers without a server) start the same daemon.
 */
#ifndef DETM_MODULES_H
#define DETM_MODULES_H

#include "core/app.h"
#include "derr.h"

/* Opens the store (app->cfg->data_dir/data.db into app->store) and starts
 * every module but the HTTP server and the stuck-task sweep. 0, or -1 with
 * e set and *what pointing at a prefix naming the module ("" if e says it).
 * On failure the caller still calls modules_stop_engines and modules_stop. */
int modules_start(struct app *app, const char **what, struct derr *e) DETM_NODISCARD;

/* Ends what keeps requests open or works in the background (waits, live
 * views, event streams, recordings, the stuck sweep): call before the
 * HTTP server stops. Safe if modules_start failed or never ran. */
void modules_stop_engines(void);

/* Stops the rest after the server, then checkpoints and closes the store
 * (app->store becomes NULL). Safe if modules_start failed or never ran. */
void modules_stop(struct app *app);

#endif
