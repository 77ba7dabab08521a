/*
 * embedded.h - files compiled into detmd by tools/embed.c (the dashboard).
 */
#ifndef DETM_EMBEDDED_H
#define DETM_EMBEDDED_H

struct embedded_file {
	const char *name;               /* base name, e.g. "app.js"; NULL ends a table */
	const unsigned char *data;      /* followed by a NUL */
	unsigned long len;
};

/* The dashboard's files (dashboard/ at build time). */
extern const struct embedded_file dashboard_files[];

#endif
