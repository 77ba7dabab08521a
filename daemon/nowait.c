/*
 * nowait.c - the thread-local nowait mode (nowait.h).
 *
 * Owns: two thread-local flags. Checker: a refusal outside the mode is a
 * bug (asserted in debug builds).
 */
#include <assert.h>

#include "nowait.h"

static _Thread_local bool on, refused;

void
nowait_begin(void)
{
	assert(!on);
	on = true;
	refused = false;
}

bool
nowait_end(void)
{
	bool r = refused;

	assert(on || !refused);
	on = false;
	refused = false;
	return r;
}

bool
nowait_active(void)
{
	return on;
}

bool
nowait_refused(void)
{
	return refused;
}

int
nowait_refuse(struct derr *e, const char *why)
{
	assert(on);
	refused = true;
	return derr_set(e, DERR_UNAVAILABLE, NULL, "would wait: %s", why);
}
