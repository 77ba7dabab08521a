/*
 * cancel.c - see cancel.h. Two thread-local slots; nothing else.
 */
#include "cancel.h"

#include "util.h"

static _Thread_local atomic_int *cancel_flag;
static _Thread_local int cancel_fd = -1;

void
cancel_bind(atomic_int *flag, int fd)
{
	cancel_flag = flag;
	cancel_fd = fd;
}

bool
cancel_requested(void)
{
	if (cancel_flag != NULL && atomic_load(cancel_flag) != 0)
		return true;
	return cancel_fd >= 0 && fd_peer_closed(cancel_fd);
}
