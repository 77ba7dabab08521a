/*
 * walvfs.h - a SQLite VFS that writes each commit's WAL frames with one
 * system call instead of two per page (walvfs.c says how, and why it loses
 * nothing).
 *
 * Thread-safe. Registered once, at the first call; never the default VFS.
 */
#ifndef DETM_WALVFS_H
#define DETM_WALVFS_H

#include <sqlite3.h>

#define WALVFS_NAME "detm-wal"

/* The VFS's name for sqlite3_open_v2, registering it at the first call;
 * NULL (SQLite's default VFS then) if it cannot be registered. */
const char *walvfs_name(void);

#endif
