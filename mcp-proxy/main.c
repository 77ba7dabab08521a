/*
 * main.c - detm-mcp: a stdio MCP server that lists detm's tools and
 * forwards each call to detmd over HTTP. It holds no task logic.
 *
 * Owns the options (--url/ACU_DAEMON_URL, --token/ACU_TOKEN, --verbose,
 * --help, --version) and the stdin loop: split the byte stream into lines
 * of at most CAP_LINE_BYTES (a longer line is discarded up to its newline
 * and answered with an error; reading goes on), hand each line to rpc.c,
 * and on EOF stop the worker and exit.
 *
 * Threads: this one reads stdin and answers the cheap methods; worker.c
 * runs tool calls (and loads libcurl and checks detmd's API version at the
 * first one).
 * Not here: JSON-RPC semantics (rpc.c), HTTP (forward.c), the tools
 * (tools.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "forward.h"
#include "log.h"
#include "peerlist.h"
#include "route.h"
#include "rpc.h"
#include "tools.h"
#include "worker.h"

#define READ_CHUNK (64 * 1024)

static struct peerlist url_check;      /* every URL given, checked */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: detm-mcp [--url URL]... [--resolve-all] [--token TOKEN] [--memory-tools auto|on|off] [--verbose]\n"
		"\n"
		"A stdio MCP server for detm. An MCP client (OpenClaw, Claude Desktop,\n"
		"Claude Code...) starts it; it speaks JSON-RPC on stdin/stdout, one\n"
		"message per line, logs to stderr, and forwards every tool call to detmd.\n"
		"\n"
		"  --url URL      detmd's address (env ACU_DAEMON_URL; default %s); give it\n"
		"                 more than once (or URL,URL...) to route between detmds:\n"
		"                 each call goes to the detmd holding its task/wait/run/clip id,\n"
		"                 a new task to the ready one with the most free displays,\n"
		"                 task_list merged from all (docs/mcp.md \"Several detmds\")\n"
		"  --resolve-all  each --url's host name stands for every address it\n"
		"                 resolves to (a Kubernetes headless Service: one per pod),\n"
		"                 resolved again every %d s (env ACU_RESOLVE_ALL=1)\n"
		"  --resolve-every SECONDS  how often (env ACU_RESOLVE_EVERY_S)\n"
		"  --token TOKEN  sent as Authorization: Bearer (env ACU_TOKEN)\n"
		"  --memory-tools auto|on|off  serve memory_search/read/append (env\n"
		"                 ACU_MCP_MEMORY_TOOLS; default auto: not to an OpenClaw client,\n"
		"                 which has its own memory tools over the same files)\n"
		"  -v, --verbose  log every HTTP exchange to stderr\n"
		"  --version      print the version and exit\n"
		"  -h, --help     this text\n"
		"\n"
		"Start detmd first (make run, or detmd). docs/mcp.md has client configs.\n",
		DEFAULT_DAEMON_URL, PEERLIST_RESOLVE_S);
}

/* The stdin loop. Returns when stdin reaches EOF or fails. */
static void
main_read_loop(void)
{
	char *buf = NULL, *nl, *grown;
	size_t len = 0, cap = 0, start, discarded = 0;
	int discarding = 0;
	ssize_t n;

	for (;;) {
		if (cap - len < READ_CHUNK) {
			cap = len + READ_CHUNK;
			grown = realloc(buf, cap);
			if (grown == NULL)
				abort();
			buf = grown;
		}
		n = read(STDIN_FILENO, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				log_warn("reading stdin: %s", strerror(errno));
			break;
		}
		len += (size_t)n;
		start = 0;
		while ((nl = memchr(buf + start, '\n', len - start)) != NULL) {
			size_t ll = (size_t)(nl - (buf + start));
			if (discarding) {
				rpc_reject_oversize(discarded + ll);
				discarding = 0;
			} else if (ll > (size_t)CAP_LINE_BYTES) {
				rpc_reject_oversize(ll);
			} else {
				rpc_handle_line(buf + start, ll);
			}
			start += ll + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len > (size_t)CAP_LINE_BYTES) {
			/* keep nothing of an oversize line; its '\n' ends the discard */
			discarded = discarding ? discarded + len : len;
			discarding = 1;
			len = 0;
		}
		if (cap > 4 * READ_CHUNK && len < READ_CHUNK) {
			/* give back the memory of a big line */
			cap = READ_CHUNK;
			grown = realloc(buf, cap);
			if (grown == NULL)
				abort();
			buf = grown;
		}
	}
	/* A last line without '\n' is still a message. */
	if (!discarding && len > 0)
		rpc_handle_line(buf, len);
	free(buf);
}

/* Adds the URLs of list (comma-separated) to urls; 0, or -1 (said why). */
static int
add_urls(char *list, const char **urls, int *n)
{
	char err[300];

	if (*n >= PEERLIST_MAX) {
		fprintf(stderr, "detm-mcp: at most %d --url\n", PEERLIST_MAX);
		return -1;
	}
	if (peerlist_parse(list, &url_check, err, sizeof err) != 0) {
		fprintf(stderr, "detm-mcp: --url: %s\n", err);
		return -1;
	}
	urls[(*n)++] = list;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "token", required_argument, NULL, 't' },
		{ "memory-tools", required_argument, NULL, 'm' },
		{ "resolve-all", no_argument, NULL, 'r' },
		{ "resolve-every", required_argument, NULL, 'e' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("ACU_DAEMON_URL"), *token = getenv("ACU_TOKEN"), *urls[PEERLIST_MAX];
	const char *memory = getenv("ACU_MCP_MEMORY_TOOLS"), *all = getenv("ACU_RESOLVE_ALL");
	const char *every = getenv("ACU_RESOLVE_EVERY_S");
	char envbuf[PEERLIST_MAX * PEERLIST_URL] = "", dflt[] = DEFAULT_DAEMON_URL;
	int c, rc = 1, nurls = 0;

	while ((c = getopt_long(argc, argv, "u:t:vVh", opts, NULL)) != -1) {
		switch (c) {
		case 'u': if (add_urls(optarg, urls, &nurls) != 0) return 2; break;
		case 't': token = optarg; break;
		case 'm': memory = optarg; break;
		case 'r': all = "1"; break;
		case 'e': every = optarg; break;
		case 'v': log_set_level(LOG_DEBUG); break;
		case 'V': printf("detm-mcp %s (detmd api_version %d)\n", DETM_MCP_VERSION,
		                 DETM_API_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "detm-mcp: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (nurls == 0 && env != NULL && env[0] != '\0') {
		snprintf(envbuf, sizeof envbuf, "%s", env);
		if (add_urls(envbuf, urls, &nurls) != 0)
			return 2;
	}
	if (nurls == 0 && add_urls(dflt, urls, &nurls) != 0)
		return 2;
	if (memory != NULL && memory[0] != '\0' && strcmp(memory, "auto") != 0) {
		if (strcmp(memory, "on") != 0 && strcmp(memory, "off") != 0) {
			fprintf(stderr, "detm-mcp: --memory-tools must be auto, on or off, got '%s'\n", memory);
			return 2;
		}
		rpc_set_memory(strcmp(memory, "on") == 0 ? MCP_MEMORY_ON : MCP_MEMORY_OFF);
	}
	if (token != NULL && strpbrk(token, "\r\n") != NULL) {
		fprintf(stderr, "detm-mcp: the token must not contain line breaks\n");
		return 2;
	}
	if (every != NULL && every[0] != '\0' && (atol(every) < 1 || atol(every) > 86400)) {
		fprintf(stderr, "detm-mcp: --resolve-every must be 1 to 86400 seconds, got '%s'\n", every);
		return 2;
	}
	worker_resolve_all(all != NULL && (strcmp(all, "1") == 0 || strcmp(all, "on") == 0 ||
	                                   strcmp(all, "true") == 0), every != NULL ? atol(every) : 0);
	/* A client that goes away must not kill us mid-write: write() reports it. */
	signal(SIGPIPE, SIG_IGN);
	/* No tools_init: tools/list is answered from the text built at build
	 * time, and the first tools/call parses the table (tools.h). */
	if (worker_start(urls, nurls, token, &rpc_worker_ops) != 0) {
		log_error("cannot start threads");
		goto out;
	}
	log_info("detm-mcp %s forwarding to %s%s", DETM_MCP_VERSION, urls[0],
	         url_check.n > 1 || (all != NULL && all[0] == '1') ? " and more, routed by task id (route.h)" : "");
	main_read_loop();
	worker_stop(TIME_EOF_GRACE_MS);
	rc = 0;
out:
	tools_free();
	return rc;
}
