/*
 * api_shots.c - GET /api/screenshots/{file}: an action's screenshot
 * (shots.c keeps them and checks the name), as a JPEG file reply.
 */
#include "api.h"
#include "task/shots.h"

int
api_screenshot(struct req *r, struct derr *e)
{
	uint64_t size;
	int fd;

	if (shots_open(r->nparams > 0 ? r->params[0] : "", &fd, &size, e) != 0)
		return -1;
	return req_reply_fd(r, 200, "image/jpeg", fd, 0, size);
}
