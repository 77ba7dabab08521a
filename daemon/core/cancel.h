/*
 * cancel.h - "has the client given up on this request?", asked by long
 * work (the gui_agent loop) on the thread that runs it.
 *
 * The HTTP layer binds the request's socket to the handler thread (a
 * client that hangs up cancels), and the MCP transport (api_mcp.c) binds
 * the flag that notifications/cancelled sets. Either binding may be
 * absent. Thread-local: no locks; the flag is read atomically.
 * Does not: stop anything itself; the work decides where it can stop.
 */
#ifndef DETM_CANCEL_H
#define DETM_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

/* Bind this thread's request: flag (may be NULL; must outlive the
 * binding) and the client's socket (-1: none). cancel_bind(NULL, -1)
 * unbinds. */
void cancel_bind(atomic_int *flag, int fd);

/* True when the bound flag is set or the bound socket's peer hung up. */
bool cancel_requested(void);

#endif
