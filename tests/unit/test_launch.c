/* test_launch.c - desktop_launch's governance (daemon/core/launchpol.c) and
 * its `open` resolution (daemon/desktop/launch_open.c): the switch against
 * the listen address, the allow-list, the argument rules, desktop files
 * (quoting, field codes, groups), URLs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/launchpol.h"
#include "desktop/launch_int.h"
#include "unit.h"

static struct config
cfg_of(const char *listen, const char *launch, const char *allow)
{
	struct config c;

	memset(&c, 0, sizeof c);
	c.listen = (char *)(uintptr_t)listen;
	c.launch = (char *)(uintptr_t)launch;
	c.launch_allow = (char *)(uintptr_t)allow;
	return c;
}

static void
test_the_switch_follows_the_listen_address(void)
{
	static const struct { const char *listen, *mode; bool on; } cases[] = {
		{ "127.0.0.1", "auto", true }, { "127.9.8.7", "auto", true }, { "::1", "auto", true },
		{ "localhost", "auto", true }, { "0.0.0.0", "auto", false }, { "192.168.1.5", "auto", false },
		{ "::", "auto", false }, { "0.0.0.0", "on", true }, { "127.0.0.1", "off", false },
	};
	char why[300];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct config c = cfg_of(cases[i].listen, cases[i].mode, "xterm");

		CHECK(launchpol_enabled(&c, why, sizeof why) == cases[i].on);
		CHECK(why[0] != '\0');
		if (!cases[i].on && strcmp(cases[i].mode, "auto") == 0)
			CHECK(strstr(why, "--launch on") != NULL);
	}
}

static int
check_argv(const struct config *c, const char *const *argv, struct derr *e)
{
	char path[PATH_MAX];

	derr_clear(e);
	return launchpol_check(c, (char *const *)(uintptr_t)argv, path, sizeof path, e);
}

static void
test_the_allow_list_and_the_argument_rules(void)
{
	struct config c = cfg_of("127.0.0.1", "auto", CONFIG_LAUNCH_ALLOW_DEFAULT);
	struct config sh = cfg_of("127.0.0.1", "auto", "xterm, sh chromium");
	json_object *list;
	struct derr e;

	CHECK(check_argv(&c, (const char *[]){ "xterm", "-T", "a;b", NULL }, &e) == 0);
	CHECK(check_argv(&c, (const char *[]){ "sh", "-c", "id", NULL }, &e) == -1 &&
	    e.code == DERR_LAUNCH_DENIED && strcmp(e.field, "command") == 0 && strstr(e.message, "shell"));
	CHECK(check_argv(&c, (const char *[]){ "bash", NULL }, &e) == -1 && e.code == DERR_LAUNCH_DENIED);
	CHECK(check_argv(&c, (const char *[]){ "/usr/bin/xterm", NULL }, &e) == -1 &&
	    e.code == DERR_LAUNCH_DENIED);          /* a path must be listed as that path */
	CHECK(check_argv(&c, (const char *[]){ "xter", NULL }, &e) == -1);  /* no prefixes */
	CHECK(check_argv(&c, (const char *[]){ "xterm", "-e", "sh", NULL }, &e) == -1 &&
	    strcmp(e.field, "args") == 0);
	CHECK(check_argv(&c, (const char *[]){ "xterm", "-xrm", "x", NULL }, &e) == -1);
	CHECK(check_argv(&c, (const char *[]){ "xterm", "-echo", NULL }, &e) == 0);  /* -e is matched whole */
	CHECK(check_argv(&c, (const char *[]){ "chromium", "--renderer-cmd-prefix=sh -c x", NULL }, &e) == -1 &&
	    strcmp(e.field, "args") == 0);
	CHECK(check_argv(&c, (const char *[]){ "soffice", "macro:///Standard.Module1.Main", NULL }, &e) == -1);
	/* with a shell on the list, a shell and the argument rules are the operator's choice */
	CHECK(check_argv(&sh, (const char *[]){ "sh", "-c", "true", NULL }, &e) == 0);
	CHECK(check_argv(&sh, (const char *[]){ "xterm", "-e", "sh", NULL }, &e) == 0);
	CHECK(launchpol_listed(&sh, "chromium") && !launchpol_listed(&sh, "chrom"));
	CHECK(strcmp(launchpol_family("/usr/bin/chromium"), "chromium") == 0);
	CHECK(strcmp(launchpol_family("electron22"), "chromium") == 0);
	CHECK(strcmp(launchpol_family("xterm"), "terminal") == 0);
	CHECK(strcmp(launchpol_family("dash"), "shell") == 0);
	CHECK(strcmp(launchpol_family("mousepad"), "") == 0);
	list = launchpol_list(&sh);
	CHECK(json_object_array_length(list) == 3);
	json_object_put(list);
}

static char *
write_desktop(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/applications/%s", dir, name);
	FILE *f = fopen(path, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

static void
test_desktop_files_and_urls_become_commands(void)
{
	char dir[] = "/tmp/detm-unit-launch.XXXXXX", *sub, *p1, *p2, *p3;
	struct config c = cfg_of("127.0.0.1", "auto", "xterm,xdg-open");
	json_object *args = json_object_new_array();
	const char *kind = NULL, *old = getenv("XDG_DATA_HOME");
	char *saved = old != NULL ? xstrdup(old) : NULL;
	char **argv = NULL;
	struct derr e;

	if (mkdtemp(dir) == NULL)
		return;
	sub = xasprintf("%s/applications", dir);
	mkdir(sub, 0700);
	p1 = write_desktop(dir, "org.example.Quoted.desktop",
	    "[Desktop Entry]\nType=Application\nName=Q\n"
	    "Exec=xterm -T \"two words \\\\$HOME\" %F --x=100%%\n"
	    "[Desktop Action other]\nExec=evil\n");
	p2 = write_desktop(dir, "term.desktop", "[Desktop Entry]\nType=Application\nExec=vim %f\nTerminal=true\n");
	p3 = write_desktop(dir, "link.desktop", "[Desktop Entry]\nType=Link\nURL=http://x\n");
	setenv("XDG_DATA_HOME", dir, 1);
	json_object_array_add(args, json_object_new_string("a;b"));
	json_object_array_add(args, json_object_new_string("c d"));
	derr_clear(&e);
	CHECK(launch_open_resolve(&c, "quoted", args, &argv, &kind, &e) == 0);    /* the last name part, any case */
	CHECK(argv != NULL && strcmp(kind, "desktop") == 0);
	if (argv != NULL) {
		CHECK(strcmp(argv[0], "xterm") == 0 && strcmp(argv[1], "-T") == 0);
		CHECK(strcmp(argv[2], "two words $HOME") == 0);
		CHECK(strcmp(argv[3], "a;b") == 0 && strcmp(argv[4], "c d") == 0);
		CHECK(strcmp(argv[5], "--x=100%") == 0 && argv[6] == NULL);
	}
	launch_argv_free(argv);
	CHECK(launch_open_resolve(&c, "term.desktop", NULL, &argv, &kind, &e) == -1 && e.code == DERR_INVALID);
	CHECK(launch_open_resolve(&c, "link", NULL, &argv, &kind, &e) == -1 && e.code == DERR_INVALID);
	CHECK(launch_open_resolve(&c, "nothing-here", NULL, &argv, &kind, &e) == -1 && e.code == DERR_NOT_FOUND);
	CHECK(launch_open_resolve(&c, "../etc/x", NULL, &argv, &kind, &e) == -1 && e.code == DERR_INVALID);
	CHECK(launch_open_resolve(&c, "javascript:alert(1)", NULL, &argv, &kind, &e) == -1);
	CHECK(launch_open_resolve(&c, "-rf", NULL, &argv, &kind, &e) == -1);
	/* a URL: no browser allowed here, so xdg-open (allowed) opens it */
	if (access("/usr/bin/xdg-open", X_OK) == 0) {
		CHECK(launch_open_resolve(&c, "https://example.invalid/", NULL, &argv, &kind, &e) == 0 &&
		    strcmp(argv[0], "xdg-open") == 0 && strcmp(kind, "url") == 0);
		launch_argv_free(argv);
	}
	c.launch_allow = (char *)(uintptr_t)"xterm";
	CHECK(launch_open_resolve(&c, "https://example.invalid/", NULL, &argv, &kind, &e) == -1 &&
	    e.code == DERR_LAUNCH_DENIED && strcmp(e.field, "open") == 0);
	CHECK(launch_open_resolve(&c, "https://example.invalid/", args, &argv, &kind, &e) == -1 &&
	    strcmp(e.field, "args") == 0);
	if (saved != NULL)
		setenv("XDG_DATA_HOME", saved, 1);
	else
		unsetenv("XDG_DATA_HOME");
	free(saved);
	unlink(p1);
	unlink(p2);
	unlink(p3);
	rmdir(sub);
	rmdir(dir);
	free(p1);
	free(p2);
	free(p3);
	free(sub);
	json_object_put(args);
}

const struct harness_test launch_tests[] = {
	{ "launch_the_switch_follows_the_listen_address", test_the_switch_follows_the_listen_address },
	{ "launch_the_allow_list_and_the_argument_rules", test_the_allow_list_and_the_argument_rules },
	{ "launch_desktop_files_and_urls_become_commands", test_desktop_files_and_urls_become_commands },
	{ NULL, NULL },
};
