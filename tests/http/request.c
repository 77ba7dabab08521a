/*
 * request.c - send one HTTP request with libcurl and keep the response.
 *
 * One easy handle is reused for every request (keep-alive, like a real
 * client), reset before each use. The request goes out as written in the
 * case: CURLOPT_PATH_AS_IS keeps "..", and "Expect:" is suppressed so large
 * bodies are sent at once instead of waiting for "100 Continue". A body is
 * sent for any method when the case has one; libcurl adds no Content-Type
 * of its own (main.c adds application/json unless the case names one).
 * Only the header block of the final response is kept (an interim
 * "HTTP/1.1 100 Continue" block is dropped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "httpcase.h"

static CURL *curl;

struct sink {
	char *p;
	size_t len;
};

static void
sink_add(struct sink *s, const char *data, size_t n)
{
	s->p = hc_xrealloc(s->p, s->len + n + 1);
	memcpy(s->p + s->len, data, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static size_t
on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	sink_add(ud, data, size * nmemb);
	return size * nmemb;
}

static size_t
on_header(char *data, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0)
		s->len = 0;       /* a new response block starts */
	sink_add(s, data, n);
	return n;
}

void
hc_http_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	curl = curl_easy_init();
	if (curl == NULL) {
		fputs("httpcase: curl_easy_init failed\n", stderr);
		exit(2);
	}
}

void
hc_http_cleanup(void)
{
	curl_easy_cleanup(curl);
	curl = NULL;
	curl_global_cleanup();
}

void
hc_http_do(const struct hc_request *req, struct hc_response *resp)
{
	struct curl_slist *hl = NULL;
	struct sink body = { NULL, 0 }, hdrs = { NULL, 0 };
	CURLcode cc;
	size_t i;

	memset(resp, 0, sizeof *resp);
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, req->url);
	curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &hdrs);

	hl = curl_slist_append(hl, "Expect:");
	for (i = 0; i < req->nheaders; i++)
		hl = curl_slist_append(hl, req->headers[i]);

	if (strcmp(req->method, "HEAD") == 0) {
		curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
	} else if (strcmp(req->method, "GET") != 0 || req->body != NULL) {
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req->method);
	}
	if (req->body != NULL || strcmp(req->method, "POST") == 0 ||
	    strcmp(req->method, "PATCH") == 0 || strcmp(req->method, "PUT") == 0) {
		if (req->body == NULL) {
			/* No body at all: no Content-Type unless the case set one. */
			curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
			curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
			for (i = 0; i < req->nheaders; i++)
				if (strncasecmp(req->headers[i], "Content-Type:", 13) == 0)
					break;
			if (i == req->nheaders)
				hl = curl_slist_append(hl, "Content-Type:");
		} else {
			curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
			curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		}
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hl);

	cc = curl_easy_perform(curl);
	if (cc != CURLE_OK)
		resp->error = hc_xasprintf("transport error: %s", curl_easy_strerror(cc));
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp->status);
	resp->body = body.p != NULL ? body.p : hc_xstrdup("");
	resp->body_len = body.len;
	resp->headers = hdrs.p != NULL ? hdrs.p : hc_xstrdup("");
	curl_slist_free_all(hl);
}

void
hc_response_free(struct hc_response *resp)
{
	free(resp->body);
	free(resp->headers);
	free(resp->error);
	memset(resp, 0, sizeof *resp);
}

char *
hc_response_header(const struct hc_response *resp, const char *name)
{
	size_t nl = strlen(name);
	const char *line = resp->headers, *end, *v;

	while (line != NULL && *line != '\0') {
		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		if ((size_t)(end - line) > nl && strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
			v = line + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
				end--;
			return hc_xstrndup(v, (size_t)(end - v));
		}
		line = *end != '\0' ? end + 1 : NULL;
	}
	return NULL;
}
