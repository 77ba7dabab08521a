/*
 * nowait.c - the thread-local nowait mode (nowait.h).
 *
 * Owns: three thread-local flags. Checker: a refusal outside the mode or
 * after the pass is a bug (asserted in debug builds).
 */
#include <assert.h>

#include "nowait.h"

static _Thread_local bool on, refused, passed;

void
nowait_begin(void)
{
	assert(!on);
	on = true;
	refused = false;
	passed = false;
}

bool
nowait_end(void)
{
	bool r = refused;

	assert(on || !refused);
	assert(!(refused && passed));
	on = false;
	refused = false;
	passed = false;
	return r;
}

bool
nowait_active(void)
{
	return on && !passed;
}

void
nowait_pass(void)
{
	assert(!refused);
	if (on)
		passed = true;
}

bool
nowait_refused(void)
{
	return refused;
}

int
nowait_refuse(struct derr *e, const char *why)
{
	assert(on && !passed);
	refused = true;
	return derr_set(e, DERR_UNAVAILABLE, NULL, "would wait: %s", why);
}
