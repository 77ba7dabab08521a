/*
 * vision_int.h - what vision.c and vision_wire.c share (not for other
 * modules). vision.c owns settings, prompts, retries and parsing;
 * vision_wire.c knows the three wire formats (Ollama /api/chat, OpenAI chat
 * completions, Anthropic Messages). Backends are rows of one table
 * (struct vbackend, in vision.c): name, init, call, parse.
 */
#ifndef DETM_VISION_INT_H
#define DETM_VISION_INT_H

#include "vision.h"

struct vision;

/* What a backend's settings come to: its row's init fills it from the
 * struct vision_settings fields that belong to it, with their defaults. */
struct vision_conf {
	const char *url, *url_field;    /* url NULL: no endpoint (passthrough) */
	const char *model;
	const char *key, *key_field;    /* key NULL: none given */
};

/* The request body for one evaluation (a new object). */
typedef json_object *vision_call_fn(const struct vision *v, const char *system,
    const char *prompt, const struct vision_image *images, size_t n);
/* Reads a 2xx reply: the model's text (borrowed from reply) and token
 * counts. Returns 0, or -1 with what is missing in err. */
typedef int vision_parse_fn(json_object *reply, const char **text, long *tokens_in,
    long *tokens_out, char *err, size_t errlen);

/* One vision backend: a row of the table in vision.c (vision_new picks the
 * row named by settings.backend; nothing else compares backend names). */
struct vbackend {
	const char *name;               /* "ollama", ... */
	void (*init)(struct vision *v, const struct vision_settings *s, struct vision_conf *c);
	vision_call_fn *call;           /* NULL: no model (passthrough) */
	vision_parse_fn *parse;
	bool key_required;
	const char *key_env;            /* the key's variable, or NULL */
	const char *auth_prefix;           /* before the key: "Authorization: Bearer ", "x-api-key: " */
	bool v1_optional;               /* insert "/v1" unless the URL ends with it */
	const char *chat_path;          /* after the base URL (and /v1) */
	const char *health_path;        /* NULL: no health call */
	const char *health_detail;      /* without a health call: what health says */
	const char *extra_headers[3];   /* NULL-terminated */
	bool pulls_models;              /* a missing model is pulled (ollama) */
};

struct vision {
	const struct vbackend *be;
	char *base_url;             /* as configured, no trailing slash */
	char *chat_url;             /* the eval endpoint */
	char *health_url;           /* NULL: no call (claude, passthrough) */
	char *model;
	char *keep_alive;           /* ollama only */
	char *auth_header;          /* "Authorization: Bearer k", "x-api-key: k" or NULL */
	const char *headers[5];     /* NULL-terminated, borrowed from the fields above */
	long timeout_ms;
	int max_retries;
	long backoff_ms;
};

/* The wire formats (vision_wire.c), named by the rows of the table. */
vision_call_fn vwire_ollama_call, vwire_openai_call, vwire_claude_call;
vision_parse_fn vwire_ollama_parse, vwire_openai_parse, vwire_claude_parse;

/* Reads a 2xx reply through the backend's parse, and the model name
 * (borrowed, may be NULL). Returns 0, or -1 with a short description of what
 * is missing in err. */
int vwire_reply(const struct vision *v, json_object *reply, const char **text,
    long *tokens_in, long *tokens_out, const char **model, char *err, size_t errlen);

/* The error text of an error body in any of the three shapes
 * ({"error":"..."}, {"error":{"message":..,"type":..}}), into out; returns
 * 0, or -1 when the body has none. */
int vwire_error_text(json_object *reply, char *out, size_t cap);

/* Whether an OpenRouter-style 2xx body carrying {"error":{"code":N}} is
 * transient (N is 429 or >= 500). */
bool vwire_error_transient(json_object *reply);

#endif
