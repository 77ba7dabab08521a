/*
 * vision_wire.c - request and reply shapes of the three backend families.
 *
 *   ollama  POST /api/chat {model, messages:[system, {role:user, content,
 *           images:[b64...]}], stream:false, keep_alive, options:{temperature:0,
 *           num_predict}} -> message.content, prompt_eval_count, eval_count
 *   openai  POST .../chat/completions {model, messages:[system, {role:user,
 *           content:[{type:text}, {type:image_url, image_url:{url:"data:image/
 *           jpeg;base64,..."}}...]}], temperature:0, max_tokens}
 *           -> choices[0].message.content, usage.prompt_tokens/completion_tokens
 *   claude  POST /v1/messages {model, max_tokens, temperature:0, system,
 *           messages:[{role:user, content:[{type:image, source:{type:base64,
 *           media_type:image/jpeg, data}}..., {type:text}]}]}
 *           -> content[i].text (first text block), usage.input_tokens/output_tokens
 */
#include "vision_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VW_MAX_TOKENS 100

static json_object *
text_message(const char *role, const char *text)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content", json_object_new_string(text));
	return m;
}

/* A JSON string holding prefix + base64(image). */
static json_object *
b64_string(const char *prefix, const struct vision_image *im)
{
	size_t plen = strlen(prefix), blen;
	char *b64 = b64_encode(im->jpeg, im->len, &blen);
	json_object *s;

	if (plen == 0) {
		s = json_object_new_string_len(b64, (int)blen);
	} else {
		char *all = xmalloc(plen + blen + 1);

		memcpy(all, prefix, plen);
		memcpy(all + plen, b64, blen + 1);
		s = json_object_new_string_len(all, (int)(plen + blen));
		free(all);
	}
	free(b64);
	return s;
}

json_object *
vwire_ollama_call(const struct vision *v, const char *system, const char *prompt,
    const struct vision_image *images, size_t n)
{
	json_object *o = json_object_new_object();
	json_object *msgs = json_object_new_array();
	json_object *user = text_message("user", prompt);
	json_object *imgs = json_object_new_array();
	json_object *opts = json_object_new_object();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(imgs, b64_string("", &images[i]));
	json_object_object_add(user, "images", imgs);
	json_object_array_add(msgs, text_message("system", system));
	json_object_array_add(msgs, user);
	json_object_object_add(o, "model", json_object_new_string(v->model));
	json_object_object_add(o, "messages", msgs);
	json_object_object_add(o, "stream", json_object_new_boolean(0));
	json_object_object_add(o, "keep_alive", json_object_new_string(v->keep_alive));
	json_object_object_add(opts, "temperature", json_object_new_int(0));
	json_object_object_add(opts, "num_predict", json_object_new_int(VW_MAX_TOKENS));
	json_object_object_add(o, "options", opts);
	return o;
}

json_object *
vwire_openai_call(const struct vision *v, const char *system, const char *prompt,
    const struct vision_image *images, size_t n)
{
	json_object *o = json_object_new_object();
	json_object *msgs = json_object_new_array();
	json_object *user = json_object_new_object();
	json_object *parts = json_object_new_array();
	json_object *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(prompt));
	json_object_array_add(parts, t);
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_new_object();
		json_object *u = json_object_new_object();

		json_object_object_add(u, "url", b64_string("data:image/jpeg;base64,", &images[i]));
		json_object_object_add(p, "type", json_object_new_string("image_url"));
		json_object_object_add(p, "image_url", u);
		json_object_array_add(parts, p);
	}
	json_object_object_add(user, "role", json_object_new_string("user"));
	json_object_object_add(user, "content", parts);
	json_object_array_add(msgs, text_message("system", system));
	json_object_array_add(msgs, user);
	json_object_object_add(o, "model", json_object_new_string(v->model));
	json_object_object_add(o, "messages", msgs);
	json_object_object_add(o, "temperature", json_object_new_int(0));
	json_object_object_add(o, "max_tokens", json_object_new_int(VW_MAX_TOKENS));
	json_object_object_add(o, "stream", json_object_new_boolean(0));
	return o;
}

json_object *
vwire_claude_call(const struct vision *v, const char *system, const char *prompt,
    const struct vision_image *images, size_t n)
{
	json_object *o = json_object_new_object();
	json_object *msgs = json_object_new_array();
	json_object *user = json_object_new_object();
	json_object *parts = json_object_new_array();
	json_object *t = json_object_new_object();

	/* Anthropic recommends images before the text that refers to them. */
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_new_object();
		json_object *src = json_object_new_object();

		json_object_object_add(src, "type", json_object_new_string("base64"));
		json_object_object_add(src, "media_type", json_object_new_string("image/jpeg"));
		json_object_object_add(src, "data", b64_string("", &images[i]));
		json_object_object_add(p, "type", json_object_new_string("image"));
		json_object_object_add(p, "source", src);
		json_object_array_add(parts, p);
	}
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(prompt));
	json_object_array_add(parts, t);
	json_object_object_add(user, "role", json_object_new_string("user"));
	json_object_object_add(user, "content", parts);
	json_object_array_add(msgs, user);
	json_object_object_add(o, "model", json_object_new_string(v->model));
	json_object_object_add(o, "max_tokens", json_object_new_int(VW_MAX_TOKENS));
	json_object_object_add(o, "temperature", json_object_new_int(0));
	json_object_object_add(o, "system", json_object_new_string(system));
	json_object_object_add(o, "messages", msgs);
	return o;
}

/* Follows a path of keys and array indexes ("choices", "0", ...). */
static json_object *
dig(json_object *o, const char *const *path)
{
	for (; o != NULL && *path != NULL; path++) {
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			long i = strtol(*path, &end, 10);

			if (*end != '\0' || i < 0 || (size_t)i >= json_object_array_length(o))
				return NULL;
			o = json_object_array_get_idx(o, (size_t)i);
		} else if (json_object_is_type(o, json_type_object)) {
			if (!json_object_object_get_ex(o, *path, &o))
				return NULL;
		} else {
			return NULL;
		}
	}
	return o;
}

static long
dig_long(json_object *o, const char *const *path)
{
	json_object *x = dig(o, path);

	if (x == NULL || !(json_object_is_type(x, json_type_int) || json_object_is_type(x, json_type_double)))
		return 0;
	return (long)json_object_get_int64(x);
}

static const char *
dig_str(json_object *o, const char *const *path)
{
	json_object *x = dig(o, path);

	return x != NULL && json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
}

/* OpenAI content may be a string or (some servers) an array of parts. */
static const char *
content_text(json_object *c)
{
	if (c == NULL)
		return NULL;
	if (json_object_is_type(c, json_type_string))
		return json_object_get_string(c);
	if (json_object_is_type(c, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(c); i++) {
			json_object *p = json_object_array_get_idx(c, i), *t;

			if (json_object_object_get_ex(p, "text", &t) && json_object_is_type(t, json_type_string))
				return json_object_get_string(t);
		}
	}
	return NULL;
}

/* 0 when the reply had a text; else -1 with `missing` in err. */
static int
text_found(const char *text, char *err, size_t errlen, const char *missing)
{
	if (text != NULL)
		return 0;
	snprintf(err, errlen, "%s", missing);
	return -1;
}

int
vwire_ollama_parse(json_object *r, const char **text, long *tin, long *tout,
    char *err, size_t errlen)
{
	*text = dig_str(r, (const char *const[]){ "message", "content", NULL });
	*tin = dig_long(r, (const char *const[]){ "prompt_eval_count", NULL });
	*tout = dig_long(r, (const char *const[]){ "eval_count", NULL });
	return text_found(*text, err, errlen, "reply has no message.content");
}

int
vwire_openai_parse(json_object *r, const char **text, long *tin, long *tout,
    char *err, size_t errlen)
{
	*text = content_text(dig(r, (const char *const[]){ "choices", "0", "message", "content", NULL }));
	*tin = dig_long(r, (const char *const[]){ "usage", "prompt_tokens", NULL });
	*tout = dig_long(r, (const char *const[]){ "usage", "completion_tokens", NULL });
	return text_found(*text, err, errlen, "reply has no choices[0].message.content");
}

int
vwire_claude_parse(json_object *r, const char **text, long *tin, long *tout,
    char *err, size_t errlen)
{
	json_object *content = dig(r, (const char *const[]){ "content", NULL });

	for (size_t i = 0; content != NULL && json_object_is_type(content, json_type_array) &&
	    i < json_object_array_length(content); i++) {
		json_object *b = json_object_array_get_idx(content, i);
		const char *type = dig_str(b, (const char *const[]){ "type", NULL });

		if (type != NULL && strcmp(type, "text") == 0) {
			*text = dig_str(b, (const char *const[]){ "text", NULL });
			break;
		}
	}
	*tin = dig_long(r, (const char *const[]){ "usage", "input_tokens", NULL });
	*tout = dig_long(r, (const char *const[]){ "usage", "output_tokens", NULL });
	return text_found(*text, err, errlen, "reply has no text content block");
}

int
vwire_reply(const struct vision *v, json_object *r, const char **text,
    long *tin, long *tout, const char **model, char *err, size_t errlen)
{
	*text = NULL;
	*tin = *tout = 0;
	*model = dig_str(r, (const char *const[]){ "model", NULL });
	if (v->be->parse == NULL) {
		snprintf(err, errlen, "no wire format");
		return -1;
	}
	return v->be->parse(r, text, tin, tout, err, errlen);
}

int
vwire_error_text(json_object *r, char *out, size_t cap)
{
	json_object *e;
	const char *msg, *type;

	if (r == NULL || !json_object_object_get_ex(r, "error", &e))
		return -1;
	if (json_object_is_type(e, json_type_string)) {
		snprintf(out, cap, "%s", json_object_get_string(e));
		return 0;
	}
	msg = dig_str(e, (const char *const[]){ "message", NULL });
	type = dig_str(e, (const char *const[]){ "type", NULL });
	if (msg == NULL && type == NULL)
		return -1;
	if (msg != NULL && type != NULL)
		snprintf(out, cap, "%s: %s", type, msg);
	else
		snprintf(out, cap, "%s", msg != NULL ? msg : type);
	return 0;
}

bool
vwire_error_transient(json_object *r)
{
	long code = dig_long(r, (const char *const[]){ "error", "code", NULL });

	return code == 429 || code >= 500;
}
