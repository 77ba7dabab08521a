/*
 * dynlib.h - load a shared library at first use and fill a table of
 * function pointers from it, so an idle detmd does not map (or pay the
 * start-up relocations of) big libraries it may never call: tesseract for
 * OCR, libavcodec/libavformat for recording.
 *
 * A table is a struct of function pointers; each entry of `syms` names a
 * symbol and its byte offset in that struct. Symbols are looked up in the
 * library and in the libraries it depends on (dlsym on its handle).
 * Not thread-safe by itself: callers load once under pthread_once.
 */
#ifndef DETM_DYNLIB_H
#define DETM_DYNLIB_H

#include <stddef.h>

struct dynsym {
	const char *name;
	size_t offset;          /* of the function pointer in the table */
};

/* dlopens soname (RTLD_NOW | RTLD_LOCAL) and fills table. Returns the
 * handle, or NULL with a sentence in err ("<what> is unavailable: ...
 * (Debian package <pkg>)") and the table zeroed (table_size bytes). */
void *dynlib_load(const char *soname, const struct dynsym *syms, size_t n, void *table,
    size_t table_size, const char *what, const char *pkg, char *err, size_t errlen);

#endif
