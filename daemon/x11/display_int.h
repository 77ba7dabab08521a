/*
 * display_int.h - what display.c and display_proc.c share (not for other
 * modules; display.h is the contract): a registry entry (struct dentry)
 * and the X server processes' side of starting and stopping one.
 *
 * A struct dentry is display.c's: its fields are written before it enters
 * the table or under the locks display.c names; display_proc.c only fills
 * the process fields (pid, wm_pid, start_us) of an entry being started,
 * which nothing else sees yet (or the static shared entry at init).
 * display_wm.c starts the window manager of an entry being started.
 */
#ifndef DETM_DISPLAY_INT_H
#define DETM_DISPLAY_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <X11/Xlib.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"
#include "display.h"

#define READY_TIMEOUT_MS 10000
#define STOP_GRACE_MS 2000
#define COOKIE_LEN 16

enum dstate { D_RUNNING, D_DIED, D_STOPPED };

struct dentry {
	pthread_mutex_t mu;     /* the connection: d, cap, look */
	int refs;               /* under reg_lock */
	enum dstate state;      /* under reg_lock */
	bool managed;
	char task_id[ID_LEN];
	char name[16];          /* ":101" */
	int number;
	int width, height;
	pid_t pid, wm_pid;
	int exit_status;        /* when D_DIED */
	int64_t started_at;     /* ms since epoch */
	int64_t start_us;       /* how long Xvfb took to become ready */
	unsigned char cookie[COOKIE_LEN];
	char auth_path[PATH_MAX];
	Display *d;
	struct xcap *cap;
	struct display_look look;
	unsigned long damage;   /* XDamage handle on the root, 0 if none */
	int damage_event;       /* XDamageNotify's event type */
	uint64_t damage_seq;
	struct xhist *hist;     /* the drawing history (xhist.h), or NULL; set under mu */
};

/* An Xauthority file at path with one FamilyWild entry for display n. 0, or -1. */
int dproc_write_auth(const char *path, int n, const unsigned char *cookie);
/* n bytes from /dev/urandom (logged and weak if it cannot be read). */
void dproc_random_bytes(unsigned char *p, size_t n);
/* SIGTERM to pid's process group, up to STOP_GRACE_MS, then SIGKILL; reaps. */
void dproc_kill_wait(pid_t pid);
/* Spawns Xvfb for de->number (logs in log_dir) and waits for it to report
 * ready on the displayfd pipe. 0 ready; 1 the number was taken (try
 * another); -1 with e. */
int dproc_xvfb_launch(struct dentry *de, const struct config *cfg, const char *log_dir,
    struct derr *e);
/* ---- the window manager (display_wm.c) ---- */
/* Once at init: the configuration, and detm's openbox configuration file
 * in dir (DATA_DIR) when the command is openbox. */
void dwm_init(const struct config *cfg, const char *dir);
/* Starts the configured window manager on de (de->wm_pid, 0 when none
 * started: none configured, not installed, or it failed; logged) and,
 * given d (a connection to de), waits up to 3 s until it manages the
 * screen. */
void dwm_start(struct dentry *de, Display *d, const char *log_dir);
/* Whether a window manager is configured and its program installed; its
 * full path into path[cap] (path may be NULL). */
bool dwm_found(char *path, size_t cap);
/* True if pid is an X server started with -auth auth_path. */
bool dproc_is_our_server(pid_t pid, const char *auth_path);
/* Alive and not a zombie. */
bool dproc_alive(pid_t pid);

#endif
