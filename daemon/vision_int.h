/*
 * vision_int.h - what vision.c and vision_wire.c share (not for other
 * modules). vision.c owns settings, prompts, retries and parsing;
 * vision_wire.c knows the three wire formats (Ollama /api/chat, OpenAI chat
 * completions, Anthropic Messages).
 */
#ifndef DETM_VISION_INT_H
#define DETM_VISION_INT_H

#include "vision.h"

enum vision_kind { VK_OLLAMA, VK_VLLM, VK_OPENROUTER, VK_CLAUDE, VK_PASSTHROUGH };

struct vision {
	enum vision_kind kind;
	const char *name;           /* static: "ollama", ... */
	const char *key_env;        /* static: the key's variable, or NULL */
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

/* The request body for one evaluation (a new object). */
json_object *vwire_request(const struct vision *v, const char *system, const char *prompt,
    const struct vision_image *images, size_t n);

/* Reads a 2xx reply: the model's text (borrowed from reply), token counts
 * and the model name (borrowed, may be NULL). Returns 0, or -1 with a short
 * description of what is missing in err. */
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
