/*
 * dynlib.c - dlopen + a table of dlsym'd function pointers (dynlib.h).
 */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *
dynlib_load(const char *soname, const struct dynsym *syms, size_t n, void *table,
    size_t table_size, const char *what, const char *pkg, char *err, size_t errlen)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (lib == NULL) {
		snprintf(err, errlen, "%s is unavailable: %s (Debian package %s)", what, dlerror(), pkg);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		void *sym = dlsym(lib, syms[i].name);

		if (sym == NULL) {
			snprintf(err, errlen, "%s is unavailable: %s has no %s", what, soname,
			    syms[i].name);
			dlclose(lib);
			memset(table, 0, table_size);
			return NULL;
		}
		/* object -> function pointer: same size on every target we build for */
		memcpy((char *)table + syms[i].offset, &sym, sizeof sym);
	}
	return lib;
}
