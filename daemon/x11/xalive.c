/*
 * xalive.c - the non-blocking liveness probe of a local X server (xalive.h).
 *
 * Owns: nothing past a call but the caller's descriptor. The setup request
 * is the X11 protocol's connection setup (little endian, protocol 11.0,
 * optional MIT-MAGIC-COOKIE-1), written once; a setup too big for the
 * socket buffer is impossible (a few dozen bytes), so a short write means
 * the server reads nothing and the probe just reports no answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "xalive.h"

#define AUTH_NAME "MIT-MAGIC-COOKIE-1"
#define COOKIE_MAX 64

static size_t
pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* The setup request into buf (at least 12 + 20 + COOKIE_MAX bytes). */
static size_t
setup_request(unsigned char *buf, const unsigned char *cookie, size_t cookie_len)
{
	size_t name_len = cookie != NULL ? strlen(AUTH_NAME) : 0, n = 12;

	memset(buf, 0, 12 + pad4(strlen(AUTH_NAME)) + COOKIE_MAX);
	buf[0] = 'l';                   /* little endian */
	buf[2] = 11;                    /* protocol major 11, minor 0 */
	buf[6] = (unsigned char)name_len;
	buf[8] = (unsigned char)cookie_len;
	if (cookie != NULL) {
		memcpy(buf + n, AUTH_NAME, name_len);
		n += pad4(name_len);
		memcpy(buf + n, cookie, cookie_len);
		n += pad4(cookie_len);
	}
	return n;
}

int
xalive_start(const char *name, const unsigned char *cookie, size_t cookie_len)
{
	unsigned char req[12 + 20 + COOKIE_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int number, fd;

	if (name == NULL || sscanf(name, ":%d", &number) != 1 || number < 0 ||
	    (cookie != NULL && (cookie_len == 0 || cookie_len > COOKIE_MAX)))
		return -1;
	if (cookie == NULL)
		cookie_len = 0;
	snprintf(sa.sun_path, sizeof sa.sun_path, "/tmp/.X11-unix/X%d", number);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A local stream connect completes at once or fails at once (the
	 * listen backlog takes it even while the server is stopped). */
	if (connect(fd, (const struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return -1;
	}
	len = setup_request(req, cookie, cookie_len);
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

int
xalive_answered(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (fd < 0)
		return 0;
	if (poll(&p, 1, 0) != 1)
		return 0;
	return (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

void
xalive_end(int fd)
{
	if (fd >= 0)
		close(fd);
}
