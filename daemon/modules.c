/*
 * modules.c - the start and stop order of detmd's modules.
 *
 * Owns: the order only. Starting: the store, wake-ups, displays (after the
 * data-dir lock, so only one detmd cleans up displays), recordings (before
 * the task-change hook, so a recording ends before its display stops),
 * screenshots, task files, the tool table, grounding, usage and budgets, smart waits,
 * takeover. Stopping: the engines that hold requests open first, then (after
 * the HTTP server, which the caller stops) the rest, launched programs
 * before the displays they run on, the store last.
 * Every module's lifecycle is one verb pair, X_init and X_shutdown (a
 * display, a recording or a wait is what X_start and X_stop act on).
 * Does not: take the data-dir lock, bind the socket or run the HTTP server
 * (main.c does), or start the stuck sweep (it needs the server's port up).
 */
#include <stdio.h>
#include <string.h>

#include "backends/ground.h"
#include "desktop/launch.h"
#include "desktop/live.h"
#include "desktop/loopwatch.h"
#include "desktop/target.h"
#include "gui/replay.h"
#include "desktop/takeover.h"
#include "gui/agent_bg.h"
#include "modules.h"
#include "ops/stuck.h"
#include "recorder/recorder.h"
#include "task/budget.h"
#include "task/drain.h"
#include "task/events.h"
#include "task/files.h"
#include "task/shots.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "task/usage.h"
#include "task/wake.h"
#include "tools.h"
#include "waits/waits.h"
#include "x11/clip.h"
#include "x11/display.h"
#include "x11/humanize.h"

/* A task that ends (or is deleted) stops the programs it launched and
 * gives its display back. */
static void
on_task_change(const char *task_id, int from, int to, void *arg)
{
	(void)from;
	(void)arg;
	if (to == TASK_HOOK_DELETED || task_status_final(to)) {
		launch_stop_task(task_id);
		display_stop(task_id);
	}
}

int
modules_start(struct app *app, const char **what, struct derr *e)
{
	const struct config *cfg = app->cfg;
	char path[4096], tool_err[256];

	*what = "";
	snprintf(path, sizeof path, "%s/data.db", cfg->data_dir);
	if (store_open(path, strcmp(cfg->db_sync, "full") == 0, &app->store, e) != 0 ||
	    wake_init(app->store, cfg, e) != 0)
		return -1;
	store_set_gather(app->store, cfg->commit_gather_us);
	if (display_init(cfg, e) != 0)
		return -1;
	if (rec_init(app, e) != 0)
		return *what = "recordings: ", -1;
	if (shots_init(cfg->data_dir, e) != 0)
		return *what = "screenshots: ", -1;
	if (files_init(cfg->data_dir, e) != 0)
		return *what = "task files: ", -1;
	task_hook_add(on_task_change, NULL);
	humanize_configure(cfg->humanize);
	if (tools_init(tool_err, sizeof tool_err) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "the tool table: %s", tool_err);
	if (ground_check(cfg, e) != 0)
		return -1;
	if (usage_init(app->store, cfg, e) != 0 || budget_init(app->store, cfg, e) != 0)
		return *what = "usage and budgets: ", -1;
	if (waits_init(app, e) != 0)
		return *what = "smart waits: ", -1;
	if (takeover_init(app->store, cfg->takeover_idle_s, e) != 0)
		return *what = "takeover: ", -1;
	if (loopwatch_init(app, e) != 0)
		return *what = "loop detection: ", -1;
	if (target_init(app, e) != 0)
		return *what = "replay targets: ", -1;
	if (replay_init(app, e) != 0)       /* replays a killed detmd left "running" */
		return *what = "replays: ", -1;
	return 0;
}

void
modules_stop_engines(void)
{
	agent_bg_shutdown();        /* first: background gui_agent runs end (each at its turn) */
	replay_shutdown();          /* replays stop at their next step */
	waits_shutdown();           /* long polls return, workers leave the displays */
	drain_shutdown();       /* so do POST /api/drain?wait= */
	live_shutdown();        /* MJPEG viewers end, so their connections can */
	events_shutdown();      /* so do event streams */
	rec_shutdown();         /* files finished while their displays still run */
	stuck_shutdown();
}

void
modules_stop(struct app *app)
{
	loopwatch_shutdown();       /* the requests are over: nothing feeds it */
	target_shutdown();          /* before the displays and the store it reads and writes */
	takeover_shutdown();
	budget_shutdown();      /* after the requests: no pause is queued any more */
	usage_shutdown();
	wake_shutdown();
	launch_shutdown();      /* launched programs end before their displays */
	clip_shutdown();        /* before the displays: detmd's selections end on live servers */
	display_shutdown();
	store_close(app->store);
	app->store = NULL;
}
