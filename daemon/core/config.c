/*
 * config.c - the options table and its parser. Adding an option is adding a
 * row (and a field in struct config); --help and docs come from the table.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "util.h"

enum opt_type { OPT_STR, OPT_INT, OPT_BOOL };

struct opt {
	const char *flag;       /* --flag */
	const char *env;        /* ACU_* */
	enum opt_type type;
	size_t offset;          /* into struct config */
	const char *def;
	long min, max;
	const char *help;
};

#define O(f) offsetof(struct config, f)

static const struct opt opts[] = {
	{ "listen", "ACU_DAEMON_HOST", OPT_STR, O(listen), "127.0.0.1", 0, 0,
	  "address to listen on; a non-loopback address requires --token" },
	{ "port", "ACU_DAEMON_PORT", OPT_INT, O(port), "18790", 0, 65535,
	  "TCP port (0 picks a free one and writes it to DATA_DIR/detmd.port)" },
	{ "data-dir", "ACU_DATA_DIR", OPT_STR, O(data_dir), "~/.agentic-computer-use", 0, 0,
	  "database, logs/ and recordings/ live here" },
	{ "token", "ACU_TOKEN", OPT_STR, O(token), "", 0, 0,
	  "if set, every request needs 'Authorization: Bearer TOKEN'" },
	{ "debug", "ACU_DEBUG", OPT_BOOL, O(debug), "0", 0, 1,
	  "verbose logging to DATA_DIR/logs/debug.log (every request)" },
	{ "max-connections", "ACU_MAX_CONNECTIONS", OPT_INT, O(max_conns), "256", 4, 10000,
	  "concurrent HTTP connections (idle ones cost no thread)" },
	{ "http-threads", "ACU_HTTP_THREADS", OPT_INT, O(http_threads), "0", 0, 64,
	  "HTTP worker threads (epoll); 0: one per CPU. Slow routes run beside them" },
	{ "connection-timeout", "ACU_CONNECTION_TIMEOUT", OPT_INT, O(conn_timeout_s), "30", 1, 3600,
	  "seconds an idle or stalled connection is kept" },
	{ "header-timeout", "ACU_HEADER_TIMEOUT", OPT_INT, O(header_timeout_s), "10", 1, 3600,
	  "seconds a request's headers may take (from connect, or the previous reply); then it is closed" },
	{ "max-streams", "ACU_MAX_STREAMS", OPT_INT, O(max_streams), "0", 0, 10000,
	  "event streams and live views open at once, past it 503; 0: max-connections/4" },
	{ "connection-reserve", "ACU_CONNECTION_RESERVE", OPT_INT, O(conn_reserve), "0", 0, 10000,
	  "slots kept free: past max-connections minus this, the oldest request-less connection closes; 0: max-connections/8" },
	{ "db-sync", "ACU_DB_SYNC", OPT_STR, O(db_sync), "normal", 0, 0,
	  "normal: commits survive a crash of detmd; full: also an OS crash (slower)" },
	{ "commit-gather-us", "ACU_COMMIT_GATHER_US", OPT_INT, O(commit_gather_us), "500", 0, 100000,
	  "microseconds a busy write stream's COMMIT waits for more writes to share it (0: none)" },
	{ "display", "DISPLAY", OPT_STR, O(display), ":99", 0, 0,
	  "the shared desktop: desktop tools without a task (or a task without a display) act here" },
	{ "task-displays", "ACU_TASK_DISPLAYS", OPT_BOOL, O(task_displays), "0", 0, 1,
	  "give every new task its own Xvfb display (a task can also ask: display: true)" },
	{ "display-resolution", "ACU_DISPLAY_RESOLUTION", OPT_STR, O(display_res), "1280x720", 0, 0,
	  "size of per-task displays, WIDTHxHEIGHT" },
	{ "max-displays", "ACU_MAX_DISPLAYS", OPT_INT, O(max_displays), "32", 1, 500,
	  "per-task Xvfb displays running at once" },
	{ "xvfb", "ACU_XVFB", OPT_STR, O(xvfb), "Xvfb", 0, 0,
	  "the Xvfb program (looked up in PATH)" },
	{ "window-manager", "ACU_WINDOW_MANAGER", OPT_STR, O(window_manager), "openbox", 0, 0,
	  "window manager started on each task display (and a shared one detmd starts): places new windows on screen and focuses them; none: no window manager" },
	{ "launch", "ACU_LAUNCH", OPT_STR, O(launch), "auto", 0, 0,
	  "desktop_launch: on, off, or auto (on while detmd listens on loopback only, off beyond it)" },
	{ "launch-allow", "ACU_LAUNCH_ALLOW", OPT_STR, O(launch_allow), CONFIG_LAUNCH_ALLOW_DEFAULT, 0, 0,
	  "programs desktop_launch may start (names looked up in PATH, or absolute paths; comma or blank separated); a shell only if listed (sh)" },
	{ "osworld-exec", "ACU_OSWORLD_EXEC", OPT_BOOL, O(osworld_exec), "0", 0, 1,
	  "the OSWorld server's /execute and /setup/execute run commands (arbitrary code) on task displays, in the task's folder and process group" },
	{ "display-wait-ms", "ACU_DISPLAY_WAIT_MS", OPT_INT, O(display_wait_ms), "5000", 100, 600000,
	  "an action waiting for a display another thread holds gives up after this long without an answer from its X server (stopped, hung): 503 display_unresponsive" },
	{ "display-glx", "ACU_DISPLAY_GLX", OPT_BOOL, O(display_glx), "0", 0, 1,
	  "enable the GLX extension on task displays (off: smaller, faster start)" },
	{ "shared-xvfb", "ACU_SHARED_XVFB", OPT_STR, O(shared_xvfb), "", 0, 0,
	  "WxH: start an Xvfb of this size on the shared display if none answers (make run: 1920x1080)" },
	{ "mcp-conformance-tools", "ACU_MCP_CONFORMANCE_TOOLS", OPT_BOOL, O(mcp_conformance_tools), "0", 0, 1,
	  "/mcp also serves the MCP conformance suite's fixture tools (test_*); for that suite only" },
	{ "humanize", "ACU_HUMANIZE", OPT_BOOL, O(humanize), "0", 0, 1,
	  "human-like pointer paths, click holds and typing gaps (slower; humanize_set toggles it)" },
	{ "vision-backend", "ACU_VISION_BACKEND", OPT_STR, O(vision_backend), "ollama", 0, 0,
	  "who judges smart-wait conditions: ollama, vllm, claude, openrouter, passthrough, ocr (text only, in process)" },
	{ "ollama-url", "OLLAMA_URL", OPT_STR, O(ollama_url), "http://127.0.0.1:11434", 0, 0,
	  "Ollama server" },
	{ "vision-model", "ACU_VISION_MODEL", OPT_STR, O(vision_model), "minicpm-v", 0, 0,
	  "Ollama vision model" },
	{ "ollama-keep-alive", "OLLAMA_KEEP_ALIVE", OPT_STR, O(ollama_keep_alive), "10m", 0, 0,
	  "how long Ollama keeps the model loaded" },
	{ "vllm-url", "ACU_VLLM_URL", OPT_STR, O(vllm_url), "http://127.0.0.1:8000", 0, 0,
	  "vLLM (OpenAI-compatible) server" },
	{ "vllm-model", "ACU_VLLM_MODEL", OPT_STR, O(vllm_model), "ui-tars-1.5-7b", 0, 0,
	  "vLLM model" },
	{ "vllm-api-key", "ACU_VLLM_API_KEY", OPT_STR, O(vllm_api_key), "", 0, 0,
	  "vLLM --api-key, if set" },
	{ "claude-url", "ACU_CLAUDE_URL", OPT_STR, O(claude_url), "https://api.anthropic.com", 0, 0,
	  "Anthropic API base URL" },
	{ "claude-vision-model", "ACU_CLAUDE_VISION_MODEL", OPT_STR, O(claude_model),
	  "claude-sonnet-4-20250514", 0, 0, "Claude model for smart waits" },
	{ "anthropic-api-key", "ANTHROPIC_API_KEY", OPT_STR, O(anthropic_api_key), "", 0, 0,
	  "key for the claude backend" },
	{ "openrouter-url", "ACU_OPENROUTER_URL", OPT_STR, O(openrouter_url), "https://openrouter.ai/api/v1", 0, 0,
	  "OpenRouter API base URL" },
	{ "openrouter-vision-model", "ACU_OPENROUTER_VISION_MODEL", OPT_STR, O(openrouter_model),
	  "google/gemini-2.0-flash-001", 0, 0, "OpenRouter model for smart waits" },
	{ "openrouter-api-key", "OPENROUTER_API_KEY", OPT_STR, O(openrouter_api_key), "", 0, 0,
	  "key for the openrouter backend" },
	{ "vision-timeout-ms", "ACU_VISION_TIMEOUT_MS", OPT_INT, O(vision_timeout_ms), "60000", 100, 600000,
	  "one model call (retries come on top)" },
	{ "max-waits", "ACU_MAX_WAITS", OPT_INT, O(max_waits), "256", 1, 10000,
	  "smart waits watching at once" },
	{ "wait-workers", "ACU_WAIT_WORKERS", OPT_INT, O(wait_workers), "4", 1, 64,
	  "threads evaluating waits (model calls run in parallel up to this)" },
	{ "diff-max-width", "ACU_DIFF_MAX_WIDTH", OPT_INT, O(diff_width), "320", 32, 1920,
	  "width of the greyscale frame the change gate compares" },
	{ "frame-max-dim", "ACU_FRAME_MAX_DIM", OPT_INT, O(frame_max_dim), "960", 64, 4096,
	  "width of frames sent to the vision model" },
	{ "frame-quality", "ACU_FRAME_JPEG_QUALITY", OPT_INT, O(frame_quality), "72", 10, 100,
	  "JPEG quality of frames sent to the vision model" },
	{ "settle-s", "ACU_SETTLE_S", OPT_INT, O(settle_s), "3", 1, 600,
	  "passthrough backend: resolve once the screen changed and then stayed still this long" },
	{ "wait-rejudge-s", "ACU_WAIT_REJUDGE_S", OPT_INT, O(wait_rejudge_s), "30", 1, 3600,
	  "a screen drawn on but under the change gate is judged again after this long (nothing drawn: never)" },
	{ "wait-max-failures", "ACU_WAIT_MAX_FAILURES", OPT_INT, O(wait_max_fails), "5", 1, 100,
	  "a wait fails after this many evaluations in a row fail (backoff 2 s, 4 s, ... 30 s)" },
	{ "wait-min-confidence", "ACU_WAIT_MIN_CONFIDENCE", OPT_STR, O(wait_min_conf), "0.5", 0, 0,
	  "a model verdict 'resolved' with a FINAL_JSON confidence under this (0..1) counts as PARTIAL" },
	{ "openclaw-cli", "ACU_OPENCLAW_CLI", OPT_STR, O(openclaw_cli), "openclaw", 0, 0,
	  "wake-ups run 'CLI system event --text TEXT --mode now' (skipped if not on PATH; \"\" off)" },
	{ "wake-command", "ACU_WAKE_COMMAND", OPT_STR, O(wake_command), "", 0, 0,
	  "also run this for every wake-up (split on blanks, no shell; event JSON on stdin)" },
	{ "openclaw-timeout", "ACU_OPENCLAW_TIMEOUT_S", OPT_INT, O(openclaw_timeout_s), "30", 1, 300,
	  "seconds 'openclaw system event' may take (Node's start-up alone takes 6-14 s); "
	  "a run that printed 'ok' is delivered even if killed" },
	{ "wake-url", "ACU_WAKE_URL", OPT_STR, O(wake_url), "", 0, 0,
	  "also POST every wake-up's event JSON to this http(s) URL" },
	{ "wake-url-token", "ACU_WAKE_URL_TOKEN", OPT_STR, O(wake_url_token), "", 0, 0,
	  "send it as 'Authorization: Bearer TOKEN' with --wake-url (OpenClaw's hooks.token)" },
	{ "wake-timeout", "ACU_WAKE_TIMEOUT_S", OPT_INT, O(wake_timeout_s), "10", 1, 300,
	  "seconds a wake command or POST may take (then killed / abandoned)" },
	{ "wake-attempts", "ACU_WAKE_ATTEMPTS", OPT_INT, O(wake_attempts), "5", 1, 20,
	  "tries per wake-up and sink before it is dropped (logged)" },
	{ "wake-backoff-ms", "ACU_WAKE_BACKOFF_MS", OPT_INT, O(wake_backoff_ms), "1000", 10, 600000,
	  "delay before the first retry of a failed wake-up; doubles each retry" },
	{ "stuck-detection", "ACU_STUCK_DETECTION", OPT_BOOL, O(stuck_detection), "1", 0, 1,
	  "wake the agent when an active task goes idle with no watching wait (0: off)" },
	{ "stuck-check", "ACU_STUCK_CHECK_S", OPT_INT, O(stuck_check_s), "60", 1, 86400,
	  "seconds between stuck checks" },
	{ "stuck-after", "ACU_STUCK_AFTER_S", OPT_INT, O(stuck_after_s), "300", 1, 604800,
	  "an active task with no activity for this many seconds is stuck" },
	{ "stuck-cooldown", "ACU_STUCK_COOLDOWN_S", OPT_INT, O(stuck_cooldown_s), "300", 0, 604800,
	  "seconds before the same task is reported stuck again" },
	{ "loop-detection", "ACU_LOOP_DETECTION", OPT_BOOL, O(loop_detection), "1", 0, 1,
	  "notice an agent repeating itself without progress: a loop event, a wake-up (0: off)" },
	{ "loop-repeats", "ACU_LOOP_REPEATS", OPT_INT, O(loop_repeats), "3", 2, 100,
	  "the same input (or cycle of 2-3 inputs) on a screen that comes back the same this many times is a loop" },
	{ "loop-noops", "ACU_LOOP_NOOPS", OPT_INT, O(loop_noops), "4", 2, 1000,
	  "this many inputs in a row with effect suspected_noop are a loop" },
	{ "loop-item-factor", "ACU_LOOP_ITEM_FACTOR", OPT_INT, O(loop_item_factor), "4", 2, 1000,
	  "a plan item with this many times the actions and the time of the median item before it is a loop" },
	{ "loop-item-min", "ACU_LOOP_ITEM_MIN", OPT_INT, O(loop_item_min), "15", 2, 100000,
	  "... and at least this many actions" },
	{ "loop-px", "ACU_LOOP_PX", OPT_INT, O(loop_px), "8", 0, 500,
	  "points this close (pixels) are the same target" },
	{ "loop-pause-after", "ACU_LOOP_PAUSE_AFTER", OPT_INT, O(loop_pause_after), "3", 0, 10000,
	  "after this many loop events a task is paused and a human asked for; 0: never (task metadata loop_pause_after overrides)" },
	{ "replay-targets", "ACU_REPLAY_TARGETS", OPT_BOOL, O(replay_targets), "1", 0, 1,
	  "after each pointer input on a task display, read what it aimed at (window, accessibility element, OCR) for replays (0: off; replays then find only by window position)" },
	{ "takeover-idle", "ACU_TAKEOVER_IDLE_S", OPT_INT, O(takeover_idle_s), "600", 1, 86400,
	  "a human's takeover of a task's display ends after this many seconds without input" },
	{ "workspace", "ACU_WORKSPACE", OPT_STR, O(workspace), "~/.openclaw/workspace", 0, 0,
	  "the agent's workspace: MEMORY.md and memory/*.md for the memory tools" },
	{ "record", "ACU_RECORD", OPT_BOOL, O(record), "1", 0, 1,
	  "record every task that has its own display (H.264 MP4 in recordings/)" },
	{ "record-fps", "ACU_RECORD_FPS", OPT_INT, O(record_fps), "2", 1, 30,
	  "task recording frame rate (a still screen costs nothing)" },
	{ "record-max-mb", "ACU_RECORD_MAX_MB", OPT_INT, O(record_max_mb), "1000", 1, 1000000,
	  "disk used by all recordings; a recording that reaches it stops" },
	{ "record-task-max-mb", "ACU_RECORD_TASK_MAX_MB", OPT_INT, O(record_task_max_mb), "200", 1, 100000,
	  "size at which one recording stops" },
	{ "record-max-min", "ACU_RECORD_MAX_MIN", OPT_INT, O(record_max_min), "240", 1, 10080,
	  "length at which one recording stops (minutes of video)" },
	{ "record-keep-failed", "ACU_RECORD_KEEP_FAILED", OPT_BOOL, O(record_keep_failed), "0", 0, 1,
	  "keep the recording of a task that failed (default: deleted)" },
	{ "openrouter-live-model", "ACU_OPENROUTER_LIVE_MODEL", OPT_STR, O(openrouter_live_model),
	  "google/gemini-3-flash-preview", 0, 0, "gui_agent's supervisor model (OpenRouter; needs OPENROUTER_API_KEY)" },
	{ "gui-agent-max-turns", "ACU_GUI_AGENT_MAX_TURNS", OPT_INT, O(gui_agent_max_turns), "60", 1, 500,
	  "most turns (screenshot + model call + step) of one gui_agent run" },
	{ "gui-agent-backend", "ACU_GUI_AGENT_BACKEND", OPT_STR, O(gui_backend), "direct", 0, 0,
	  "who grounds gui_find/gui_do targets: direct (coordinates in the instruction), uitars, claude_cu, omniparser" },
	{ "uitars-ollama-model", "ACU_UITARS_OLLAMA_MODEL", OPT_STR, O(uitars_ollama_model),
	  "0000/ui-tars-1.5-7b", 0, 0, "UI-TARS model on Ollama (uitars backend without OPENROUTER_API_KEY)" },
	{ "uitars-keep-alive", "ACU_UITARS_KEEP_ALIVE", OPT_STR, O(uitars_keep_alive), "5m", 0, 0,
	  "keep_alive sent with each UI-TARS request to Ollama" },
	{ "uitars-openrouter-model", "ACU_UITARS_OPENROUTER_MODEL", OPT_STR, O(uitars_openrouter_model),
	  "bytedance/ui-tars-1.5-7b", 0, 0, "UI-TARS model on OpenRouter (uitars backend with OPENROUTER_API_KEY)" },
	{ "uitars-coords", "ACU_UITARS_COORDS", OPT_STR, O(uitars_coords), "image", 0, 0,
	  "UI-TARS answer space: image (UI-TARS 1.5 pixels of the image sent after its smart resize) or 1000 (0..1000 relative)" },
	{ "omniparser-url", "ACU_OMNIPARSER_URL", OPT_STR, O(omniparser_url), "", 0, 0,
	  "OmniParser server (POST /parse/) for the omniparser backend" },
	{ "omniparser-picker-model", "ACU_OMNIPARSER_PICKER_MODEL", OPT_STR, O(omniparser_picker_model),
	  "claude-haiku-4-5-20251001", 0, 0, "Claude model that picks the OmniParser element (needs ANTHROPIC_API_KEY; else word match)" },
	{ "grounding-max-dim", "ACU_GROUNDING_MAX_DIM", OPT_INT, O(grounding_max_dim), "1920", 64, 8192,
	  "longest side of the screenshot sent to a grounding model (downscaled; scale reported)" },
	{ "grounding-quality", "ACU_GROUNDING_JPEG_QUALITY", OPT_INT, O(grounding_quality), "80", 10, 100,
	  "JPEG quality of the screenshot sent to a grounding model" },
	{ "grounding-timeout-ms", "ACU_GROUNDING_TIMEOUT_MS", OPT_INT, O(grounding_timeout_ms), "60000", 100, 600000,
	  "one grounding model call (no retries)" },
	{ "peers", "ACU_PEERS", OPT_STR, O(peers), "", 0, 0,
	  "the other detmds of the fleet (URLs, comma-separated, or a DNS name with --peers-resolve-all): "
	  "GET /api/fleet/tasks lists every pod's tasks, a request for a task id held by a peer is forwarded to it" },
	{ "peers-resolve-all", "ACU_PEERS_RESOLVE_ALL", OPT_BOOL, O(peers_resolve_all), "0", 0, 1,
	  "each --peers host name stands for every address it resolves to (a headless Service), re-resolved every --peers-resolve-every seconds" },
	{ "peers-resolve-every", "ACU_PEERS_RESOLVE_EVERY_S", OPT_INT, O(peers_resolve_s), "30", 1, 86400,
	  "seconds between two resolutions of the --peers names" },
};

static int
opt_set(struct config *c, const struct opt *o, const char *val, const char *from)
{
	char *field = (char *)c + o->offset;
	char *end;
	long v;

	switch (o->type) {
	case OPT_STR:
		free(*(char **)(void *)field);
		*(char **)(void *)field = xstrdup(val);
		return 0;
	case OPT_INT:
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno != 0 || end == val || *end != '\0' || v < o->min || v > o->max) {
			fprintf(stderr, "detmd: %s: '%s' is not a whole number from %ld to %ld\n",
			    from, val, o->min, o->max);
			return -1;
		}
		*(long *)(void *)field = v;
		return 0;
	case OPT_BOOL:
		if (strcmp(val, "1") == 0 || strcasecmp(val, "true") == 0 ||
		    strcasecmp(val, "yes") == 0 || strcasecmp(val, "on") == 0)
			*(bool *)(void *)field = true;
		else if (strcmp(val, "0") == 0 || strcasecmp(val, "false") == 0 ||
		    strcasecmp(val, "no") == 0 || strcasecmp(val, "off") == 0 || val[0] == '\0')
			*(bool *)(void *)field = false;
		else {
			fprintf(stderr, "detmd: %s: '%s' is not a boolean (1/0, true/false)\n", from, val);
			return -1;
		}
		return 0;
	}
	return -1;
}

void
config_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: detmd [options]\n\n"
	    "detmd %s - the detm daemon: task tree, smart waits and desktop control\n"
	    "for LLM agents, over HTTP (API docs: docs/api.md).\n\n"
	    "Options (flag, environment variable, default):\n", DETM_VERSION);
	for (i = 0; i < ARRAY_LEN(opts); i++) {
		const struct opt *o = &opts[i];
		char flag[64];

		snprintf(flag, sizeof flag, "--%s%s", o->flag,
		    o->type == OPT_BOOL ? "" : o->type == OPT_INT ? " N" : " S");
		fprintf(f, "  %-26s %-24s default: %s\n  %26s %s\n", flag, o->env,
		    o->def[0] ? o->def : "(unset)", "", o->help);
	}
	fprintf(f, "  %-26s %-24s\n  %-26s %-24s\n", "--help", "print this",
	    "--version", "print the version");
}

/* "~" or "~/x" -> $HOME/x in place. -1 (with a message naming flag) if
 * HOME is needed and not set. */
static int
expand_home(char **path, const char *flag)
{
	const char *home;
	char *p;

	if (strncmp(*path, "~/", 2) != 0 && strcmp(*path, "~") != 0)
		return 0;
	home = getenv("HOME");
	if (home == NULL || home[0] == '\0') {
		fprintf(stderr, "detmd: HOME is not set; pass %s\n", flag);
		return -1;
	}
	p = xasprintf("%s%s", home, *path + 1);
	free(*path);
	*path = p;
	return 0;
}

static int
finish(struct config *c)
{
	if (expand_home(&c->data_dir, "--data-dir") != 0 || expand_home(&c->workspace, "--workspace") != 0)
		return -1;
	if (c->data_dir[0] == '\0') {
		fprintf(stderr, "detmd: --data-dir must not be empty\n");
		return -1;
	}
	if (strcmp(c->db_sync, "normal") != 0 && strcmp(c->db_sync, "full") != 0) {
		fprintf(stderr, "detmd: --db-sync must be 'normal' or 'full', not '%s'\n", c->db_sync);
		return -1;
	}
	if (config_parse_size(c->display_res, &c->display_w, &c->display_h) != 0) {
		fprintf(stderr, "detmd: --display-resolution must be WIDTHxHEIGHT from %dx%d to %dx%d, not '%s'\n",
		    CONFIG_DISPLAY_MIN, CONFIG_DISPLAY_MIN, CONFIG_DISPLAY_MAX, CONFIG_DISPLAY_MAX, c->display_res);
		return -1;
	}
	if (strcmp(c->launch, "auto") != 0 && strcmp(c->launch, "on") != 0 &&
	    strcmp(c->launch, "off") != 0) {
		fprintf(stderr, "detmd: --launch must be 'auto', 'on' or 'off', not '%s'\n", c->launch);
		return -1;
	}
	if (strcmp(c->window_manager, "none") == 0) {
		free(c->window_manager);
		c->window_manager = xstrdup("");
	}
	/* --gui-agent-backend and --uitars-coords: ground_check (ground.c's table). */
	if (c->display[0] == '\0') {
		free(c->display);
		c->display = xstrdup(":99");
	}
	return 0;
}

int
config_parse_size(const char *s, int *w, int *h)
{
	char *end;
	long a, b;

	errno = 0;
	a = strtol(s, &end, 10);
	if (end == s || (*end != 'x' && *end != 'X'))
		return -1;
	s = end + 1;
	b = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || a < CONFIG_DISPLAY_MIN || b < CONFIG_DISPLAY_MIN ||
	    a > CONFIG_DISPLAY_MAX || b > CONFIG_DISPLAY_MAX)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

int
config_load(struct config *c, int argc, char **argv)
{
	size_t i;
	int a;

	memset(c, 0, sizeof *c);
	for (i = 0; i < ARRAY_LEN(opts); i++) {
		const char *env = getenv(opts[i].env);

		if (opt_set(c, &opts[i], opts[i].def, "default") != 0)
			return -1;
		if (env != NULL && opt_set(c, &opts[i], env, opts[i].env) != 0)
			return -1;
	}
	for (a = 1; a < argc; a++) {
		const char *arg = argv[a], *name, *eq, *val;
		const struct opt *o = NULL;
		size_t nlen;

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			config_usage(stdout);
			return 1;
		}
		if (strcmp(arg, "--version") == 0) {
			printf("detmd %s (api %d)\n", DETM_VERSION, DETM_API_VERSION);
			return 1;
		}
		if (strncmp(arg, "--", 2) != 0) {
			fprintf(stderr, "detmd: unexpected argument '%s' (see --help)\n", arg);
			return -1;
		}
		name = arg + 2;
		eq = strchr(name, '=');
		nlen = eq ? (size_t)(eq - name) : strlen(name);
		for (i = 0; i < ARRAY_LEN(opts); i++) {
			if (strlen(opts[i].flag) == nlen && strncmp(opts[i].flag, name, nlen) == 0)
				o = &opts[i];
		}
		if (o == NULL) {
			fprintf(stderr, "detmd: unknown option '%s' (see --help)\n", arg);
			return -1;
		}
		if (eq != NULL)
			val = eq + 1;
		else if (o->type == OPT_BOOL)
			val = "1";
		else if (a + 1 < argc)
			val = argv[++a];
		else {
			fprintf(stderr, "detmd: option '%s' needs a value\n", arg);
			return -1;
		}
		if (opt_set(c, o, val, arg) != 0)
			return -1;
	}
	return finish(c);
}

void
config_free(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	/* Every string option is a malloc'd field: the table says which. */
	for (i = 0; i < ARRAY_LEN(opts); i++)
		if (opts[i].type == OPT_STR)
			free(*(char **)(void *)((char *)c + opts[i].offset));
	memset(c, 0, sizeof *c);
}

bool
config_data_dir_exposed(const char *dir, char *why, size_t cap)
{
	struct stat sb;

	if (stat(dir, &sb) != 0) {
		snprintf(why, cap, "cannot examine the data dir: %s", strerror(errno));
		return false;
	}
	if ((sb.st_mode & 077) == 0) {
		snprintf(why, cap, "the data dir is private (mode %03o)", (unsigned)(sb.st_mode & 0777));
		return false;
	}
	snprintf(why, cap, "the data dir %s has mode %03o: other users may read or change the "
	    "task database and logs; chmod 700 it", dir, (unsigned)(sb.st_mode & 0777));
	return true;
}

void
config_secrets(const struct config *c, const char *out[CONFIG_SECRETS_MAX])
{
	int n = 0;

	out[n++] = c->token;
	out[n++] = c->anthropic_api_key;
	out[n++] = c->openrouter_api_key;
	out[n++] = c->vllm_api_key;
	out[n++] = c->wake_url_token;
	out[n] = NULL;
}
