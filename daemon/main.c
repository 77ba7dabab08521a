/*
 * main.c - detmd start-up and shutdown.
 *
 * Order matters: signals are blocked before any thread exists (so only the
 * main thread's sigwait sees SIGTERM/SIGINT), the data-dir lock is taken
 * before the database is touched (one daemon per data dir), and the socket
 * is bound before the store is opened so a second copy on the same port
 * fails fast with a clear message. The umask is 077 from the start, so
 * every file detmd creates (data.db and its -wal/-shm, the port file, logs)
 * is 0600 even in a data dir someone made 755 (which is warned about). On SIGTERM/SIGINT the server stops
 * accepting, in-flight requests finish, the store checkpoints and closes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/httpc.h"
#include "core/config.h"
#include "core/log.h"
#include "http/http.h"
#include "modules.h"
#include "ops/doctor.h"
#include "ops/stuck.h"
#include "tools.h"

/* Takes an exclusive lock on DATA_DIR/detmd.lock and writes our pid into
 * it. Returns the fd, or -1 after printing why. */
static int
lock_data_dir(const char *dir)
{
	char path[4096], pid[32] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "%s/detmd.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "detmd: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		n = read(fd, pid, sizeof pid - 1);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		fprintf(stderr, "detmd: another detmd (pid %s) is already using %s; "
		    "stop it first or pass a different --data-dir\n", pid[0] ? pid : "?", dir);
		close(fd);
		return -1;
	}
	if (ftruncate(fd, 0) == 0) {
		n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
		if (write(fd, pid, (size_t)n) != n)
			log_warn("cannot write pid to %s", path);
	}
	return fd;
}

static int
is_loopback_addr(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		    &in6addr_loopback, sizeof in6addr_loopback) == 0;
	return 0;
}

/* Binds and listens; returns the fd and the bound port, or -1 after
 * printing why. */
static int
listen_on(const struct config *cfg, int *port_out)
{
	struct addrinfo hints, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char portstr[16];
	int fd = -1, one = 1, gai;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof portstr, "%ld", cfg->port);
	if ((gai = getaddrinfo(cfg->listen, portstr, &hints, &res)) != 0) {
		fprintf(stderr, "detmd: cannot resolve listen address '%s': %s\n", cfg->listen,
		    gai_strerror(gai));
		return -1;
	}
	if (!is_loopback_addr(res->ai_addr) && cfg->token[0] == '\0') {
		fprintf(stderr, "detmd: refusing to listen on non-loopback address %s without a token: "
		    "anyone who reaches it could drive this desktop. Set ACU_TOKEN (or --token).\n",
		    cfg->listen);
		goto fail;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "detmd: socket: %s\n", strerror(errno));
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
		if (errno == EADDRINUSE)
			fprintf(stderr, "detmd: %s port %ld is already in use: is detmd already "
			    "running? (curl http://%s:%ld/api/health) Stop it, or pass --port.\n",
			    cfg->listen, cfg->port, cfg->listen, cfg->port);
		else
			fprintf(stderr, "detmd: cannot bind %s:%ld: %s\n", cfg->listen, cfg->port,
			    strerror(errno));
		goto fail;
	}
	if (listen(fd, 128) != 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		fprintf(stderr, "detmd: listen: %s\n", strerror(errno));
		goto fail;
	}
	*port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	    : ((struct sockaddr_in *)&ss)->sin_port);
	freeaddrinfo(res);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return -1;
}

/* Writes the bound port to DATA_DIR/detmd.port atomically (tests and
 * scripts that start detmd with --port 0 read it). */
static void
write_port_file(const char *dir, int port)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof path, "%s/detmd.port", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return;
	fprintf(f, "%d\n", port);
	if (fclose(f) == 0)
		rename(tmp, path);
}

/* The data dir, its logs and recordings folders, the lock that keeps a
 * second detmd out, and the log. 0, or -1 after saying why on stderr. */
static int
data_dir_open(const struct config *cfg, int *lockfd)
{
	char path[4096], why[512];

	snprintf(path, sizeof path, "%s/logs", cfg->data_dir);
	if (dir_create_all(cfg->data_dir, 0700) != 0 || dir_create_all(path, 0700) != 0) {
		fprintf(stderr, "detmd: cannot create data dir %s: %s\n", cfg->data_dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/recordings", cfg->data_dir);
	dir_create_all(path, 0700);
	if ((*lockfd = lock_data_dir(cfg->data_dir)) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/logs/debug.log", cfg->data_dir);
	if (log_open(path, cfg->debug) != 0)
		fprintf(stderr, "detmd: cannot open log %s: %s (logging to stderr)\n", path, strerror(errno));
	if (config_data_dir_exposed(cfg->data_dir, why, sizeof why)) {
		log_warn("%s", why);
		fprintf(stderr, "detmd: warning: %s\n", why);
	}
	return 0;
}

/* Blocks until SIGTERM or SIGINT (SIGHUP is ignored); returns it. */
static int
signal_wait(const sigset_t *sigs)
{
	int sig = 0;

	for (;;) {
		if (sigwait(sigs, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			log_info("SIGHUP ignored (configuration is read at start-up)");
			continue;
		}
		return sig;
	}
}

int
main(int argc, char **argv)
{
	struct config cfg;
	struct app app;
	struct http *h = NULL;
	struct derr e;
	sigset_t sigs;
	char path[4096];
	const char *what = "";
	int lockfd = -1, lfd = -1, sig, rc = 1, c;

	/* `detmd doctor ...`: the checks, against a running daemon or in process. */
	if (argc > 1 && strcmp(argv[1], "doctor") == 0)
		return doctor_cli(argc, argv);

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Everything detmd (and what it spawns) creates is the user's alone:
	 * the database holds every task, the port file and logs what it did. */
	umask(077);
	if ((c = config_load(&cfg, argc, argv)) != 0) {
		config_free(&cfg);
		return c > 0 ? 0 : 2;
	}
	memset(&app, 0, sizeof app);
	derr_clear(&e);
	app.cfg = &cfg;
	app.started_ms = now_ms();
	app.started_mono_us = mono_us();

	if (data_dir_open(&cfg, &lockfd) != 0 || (lfd = listen_on(&cfg, &app.port)) < 0)
		goto out;
	if (modules_start(&app, &what, &e) != 0 || (h = http_start(&app, lfd, &e)) == NULL) {
		fprintf(stderr, "detmd: %s%s\n", what, e.message);
		goto out;
	}
	lfd = -1;               /* the server owns it now */
	if (stuck_init(app.store, &cfg, &e) != 0) {
		fprintf(stderr, "detmd: %s\n", e.message);
		goto out;
	}
	write_port_file(cfg.data_dir, app.port);
	log_info("detmd %s listening on http://%s:%d (data %s, pid %ld)", DETM_VERSION,
	    cfg.listen, app.port, cfg.data_dir, (long)getpid());
	fprintf(stderr, "detmd %s listening on http://%s:%d (data %s)\n", DETM_VERSION,
	    cfg.listen, app.port, cfg.data_dir);
	sig = signal_wait(&sigs);
	log_info("signal %d: shutting down", sig);
	rc = 0;
out:
	modules_stop_engines();
	http_stop(h);
	modules_stop(&app);
	if (lfd >= 0)
		close(lfd);
	if (lockfd >= 0) {
		snprintf(path, sizeof path, "%s/detmd.port", cfg.data_dir);
		if (rc == 0)
			unlink(path);
		close(lockfd);
	}
	if (rc == 0)
		log_info("stopped cleanly");
	log_close();
	httpc_global_cleanup();
	tools_free();
	config_free(&cfg);
	return rc;
}
