/*
 * fanout.c - see fanout.h. Rounds of at most FANOUT_MAX threads with a
 * FANOUT_STACK stack each (the callers' work is one libcurl exchange).
 */
#include "fanout.h"

#include <pthread.h>
#include <stdbool.h>

void
fanout_run(void *base, size_t n, size_t size, void *(*fn)(void *))
{
	pthread_t th[FANOUT_MAX];
	bool started[FANOUT_MAX];
	pthread_attr_t at;
	char *p = base;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, FANOUT_STACK);
	for (size_t from = 0; from < n; from += FANOUT_MAX) {
		size_t k = n - from < FANOUT_MAX ? n - from : FANOUT_MAX;

		for (size_t i = 0; i < k; i++)
			started[i] = pthread_create(&th[i], &at, fn, p + (from + i) * size) == 0;
		for (size_t i = 0; i < k; i++)
			if (started[i])
				pthread_join(th[i], NULL);
			else
				fn(p + (from + i) * size);
	}
	pthread_attr_destroy(&at);
}
