/*
 * recv.c - bin/wake-recv: a webhook receiver for the wake suite. Listens on
 * 127.0.0.1, appends each request as one line to a file, answers a fixed
 * status.
 *
 *   bin/wake-recv --out FILE [--port-file F] [--status N] [--token T]
 *
 * --token T: a request without "Authorization: Bearer T" is answered 401
 * and logged as "401 METHOD PATH ..." (OpenClaw's /hooks/wake does that).
 * A line: "METHOD PATH CONTENT-TYPE BODY" where BODY is the raw body with
 * newlines replaced by spaces (the daemon sends compact JSON, so the body
 * is the rest of the line). --port-file gets the bound port once listening.
 * Runs until SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BODY (4 * 1024 * 1024)

struct rq {
	char *body;
	size_t len;
	int too_big;
};

static const char *out_path;
static unsigned int reply_status = 200;
static const char *want_token;

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
    const char *version, const char *data, size_t *size, void **ctx)
{
	struct rq *r = *ctx;
	struct MHD_Response *resp;
	const char *ct, *auth;
	bool denied;
	enum MHD_Result ret;
	FILE *f;
	size_t i;

	(void)cls;
	(void)version;
	if (r == NULL) {
		r = calloc(1, sizeof *r);
		if (r == NULL)
			return MHD_NO;
		*ctx = r;
		return MHD_YES;
	}
	if (*size > 0) {
		if (r->len + *size > MAX_BODY) {
			r->too_big = 1;
		} else {
			char *p = realloc(r->body, r->len + *size + 1);

			if (p == NULL)
				return MHD_NO;
			r->body = p;
			memcpy(r->body + r->len, data, *size);
			r->len += *size;
			r->body[r->len] = '\0';
		}
		*size = 0;
		return MHD_YES;
	}
	for (i = 0; i < r->len; i++)
		if (r->body[i] == '\n' || r->body[i] == '\r')
			r->body[i] = ' ';
	ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	denied = want_token != NULL && (auth == NULL || strncmp(auth, "Bearer ", 7) != 0 ||
	    strcmp(auth + 7, want_token) != 0);
	f = fopen(out_path, "a");
	if (f != NULL) {
		fprintf(f, "%s%s %s %s %s\n", denied ? "401 " : "", method, url, ct ? ct : "-",
		    r->too_big ? "(too big)" : r->body ? r->body : "");
		fclose(f);
	}
	resp = MHD_create_response_from_buffer(2, (void *)(uintptr_t)"{}", MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	ret = MHD_queue_response(c, denied ? 401 : reply_status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void
done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode toe)
{
	struct rq *r = *ctx;

	(void)cls;
	(void)c;
	(void)toe;
	if (r != NULL) {
		free(r->body);
		free(r);
		*ctx = NULL;
	}
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa;
	const char *port_file = NULL;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t sigs;
	int i, sig;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out_path = argv[++i];
		else if (strcmp(argv[i], "--port-file") == 0 && i + 1 < argc)
			port_file = argv[++i];
		else if (strcmp(argv[i], "--status") == 0 && i + 1 < argc)
			reply_status = (unsigned int)atoi(argv[++i]);
		else if (strcmp(argv[i], "--token") == 0 && i + 1 < argc)
			want_token = argv[++i];
		else {
			fprintf(stderr, "usage: wake-recv --out FILE [--port-file F] [--status N] [--token T]\n");
			return 2;
		}
	}
	if (out_path == NULL) {
		fprintf(stderr, "wake-recv: --out is required\n");
		return 2;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handle, NULL,
	    MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
	if (d == NULL) {
		fprintf(stderr, "wake-recv: cannot listen\n");
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (port_file != NULL && info != NULL) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
		f = fopen(tmp, "w");
		if (f != NULL) {
			fprintf(f, "%u\n", (unsigned)info->port);
			if (fclose(f) == 0)
				rename(tmp, port_file);
		}
	}
	while (sigwait(&sigs, &sig) != 0)
		;
	MHD_stop_daemon(d);
	return 0;
}
