/*
 * config.h - detmd's settings: one table of options (config.c), each with a
 * command-line flag, an ACU_* environment variable, a default and a range.
 * Precedence: flag > environment > default. `detmd --help` prints the table.
 */
#ifndef DETM_CONFIG_H
#define DETM_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "cdefs.h"

#define DETM_VERSION "0.1.0"

/* The programs desktop_launch may start unless ACU_LAUNCH_ALLOW says
 * otherwise: desktop applications from Debian, no shell. */
#define CONFIG_LAUNCH_ALLOW_DEFAULT \
	"mousepad,gedit,gnome-text-editor,galculator,gnome-calculator,chromium,firefox-esr,firefox," \
	"libreoffice,soffice,evince,xterm,xdg-open,zenity,xlogo,xeyes,xclock,xcalc"

struct config {
	char *listen;           /* listen address */
	long port;              /* 0: any free port */
	char *data_dir;         /* absolute, ~ expanded */
	char *token;            /* "" when unset */
	bool debug;
	long max_conns;
	long conn_timeout_s;
	long header_timeout_s;  /* a request's headers must be in within this */
	long max_streams;       /* long-lived streams at once; 0: max_conns / 4 */
	long conn_reserve;      /* slots kept free for new requests; 0: max_conns / 8 */
	long http_threads;      /* HTTP worker threads; 0: one per CPU */
	char *db_sync;          /* "normal" | "full" */
	int commit_gather_us;   /* store_set_gather */
	/* desktop */
	char *display;          /* the shared desktop, e.g. ":99" */
	bool task_displays;     /* every task gets its own Xvfb by default */
	char *display_res;      /* "1280x720": per-task display size */
	int display_w, display_h;   /* parsed from display_res */
	long max_displays;      /* per-task Xvfb servers at once */
	long display_wait_ms;   /* a lease's wait on a held display whose X server is silent */
	char *xvfb;             /* the Xvfb binary */
	char *window_manager;   /* command started on each task display; "" none ("none" given) */
	char *launch;           /* desktop_launch: "auto" | "on" | "off" */
	char *launch_allow;     /* programs desktop_launch may start (launch.c parses it) */
	bool display_glx;       /* give task displays GLX */
	bool osworld_exec;      /* the OSWorld server may run commands (api_osworld_exec.c) */
	bool humanize;          /* start value of the humanize switch */
	bool mcp_conformance_tools; /* /mcp also serves the conformance fixtures */
	char *shared_xvfb;      /* "WxH": start the shared display if down; "" never */
	/* smart waits and vision */
	char *vision_backend;   /* ollama | vllm | claude | openrouter | passthrough */
	char *ollama_url, *vision_model, *ollama_keep_alive;
	char *vllm_url, *vllm_model, *vllm_api_key;
	char *claude_url, *claude_model, *anthropic_api_key;
	char *openrouter_url, *openrouter_model, *openrouter_api_key;
	long vision_timeout_ms;
	long max_waits;         /* watching at once */
	long wait_workers;      /* evaluation threads */
	long diff_width;        /* gate thumbnail width */
	long frame_max_dim;     /* frames sent to the model */
	long frame_quality;
	long settle_s;          /* passthrough: still this long after a change */
	long wait_rejudge_s;    /* drawn on but under the gate: judge again after */
	long wait_max_fails;    /* consecutive failed evaluations before a wait fails */
	char *wait_min_conf;    /* a model's "resolved" under this confidence (0..1) is PARTIAL */
	/* wake-ups (wake.c) */
	char *openclaw_cli;     /* "openclaw"; "" turns the OpenClaw sink off */
	long openclaw_timeout_s;        /* the OpenClaw CLI's own timeout */
	char *wake_command;     /* argv split on blanks, event JSON on stdin; "" off */
	char *wake_url;         /* POST the event JSON here; "" off */
	char *wake_url_token;   /* sent as "Authorization: Bearer T" with it; "" none */
	long wake_timeout_s;    /* per command run or POST */
	long wake_attempts;     /* tries per sink before an event is dropped */
	long wake_backoff_ms;   /* first retry delay; doubles each time */
	/* stuck detection (stuck.c) */
	bool stuck_detection;
	long stuck_check_s;     /* how often active tasks are checked */
	long stuck_after_s;     /* idle this long (and no watching wait): stuck */
	long stuck_cooldown_s;  /* no second alert for a task within this */
	/* loop detection (task/loopdet.c, desktop/loopwatch.c) */
	bool loop_detection;
	long loop_repeats, loop_noops, loop_item_factor, loop_item_min, loop_px;
	long loop_pause_after;  /* loop events before a pause and a human; 0 never */
	bool replay_targets;    /* desktop/target.c reads each pointer input's target */
	long takeover_idle_s;   /* a human's takeover ends after this long without input (takeover.c) */
	char *workspace;        /* memory tools (memory.c); ~ expanded */
	/* recordings (recorder.c) */
	bool record;
	long record_fps, record_max_mb, record_task_max_mb, record_max_min;
	bool record_keep_failed;
	char *openrouter_live_model;    /* gui_agent (agent.c) */
	long gui_agent_max_turns;
	/* GUI grounding (gui.c, ground.c) */
	char *gui_backend;      /* direct | uitars | claude_cu | omniparser */
	char *uitars_ollama_model, *uitars_keep_alive, *uitars_openrouter_model;
	char *uitars_coords;    /* "image": UI-TARS 1.5 pixels of the image sent after its smart resize; "1000": 0..1000 relative */
	char *omniparser_url;   /* "" = not configured */
	char *omniparser_picker_model;
	long grounding_max_dim; /* width of the image sent to a grounding model */
	long grounding_quality;
	long grounding_timeout_ms;
	char *peers;            /* --peers: "" for none */
	bool peers_resolve_all;
	long peers_resolve_s;
};

/* Fills c from defaults, the environment and argv. Returns 0 to run, 1 when
 * --help or --version was printed (exit 0), -1 on a bad option (message
 * printed to stderr; exit 2). */
int config_load(struct config *c, int argc, char **argv);
void config_free(struct config *c);
void config_usage(FILE *f);
/* The secrets this daemon knows (token, API keys, the wake sink's token):
 * out gets up to CONFIG_SECRETS_MAX pointers into c, NULL-terminated, for
 * redact_new. */
#define CONFIG_SECRETS_MAX 8
void config_secrets(const struct config *c, const char *out[CONFIG_SECRETS_MAX]);
/* Parses "WIDTHxHEIGHT" (each CONFIG_DISPLAY_MIN..MAX). 0, or -1. */
#define CONFIG_DISPLAY_MIN 64
#define CONFIG_DISPLAY_MAX 8192
int config_parse_size(const char *s, int *w, int *h);
/* Whether the data dir lets other users in: true (with a sentence in
 * why[cap]) if it is readable, writable or searchable by group or other.
 * detmd warns at start; a doctor check can reuse it. False if dir cannot
 * be examined (why says so). */
bool config_data_dir_exposed(const char *dir, char *why, size_t cap);

#endif
