/*
 * display_wm.c - the window manager of the displays detmd starts (task
 * displays, and the shared one when --shared-xvfb started it): which
 * command, whether its program is installed, openbox's configuration for
 * detm, starting it and waiting until it manages the screen.
 *
 * Why a window manager: without one, a program's new top-level goes where
 * the program asks (a GTK file chooser at y -68), and nothing gives the
 * keyboard focus to a new window or dialog, so keys typed for it go
 * nowhere. openbox (the default, from Debian) places every new top-level
 * inside the screen and focuses it.
 *
 * openbox runs with detm's own configuration (DATA_DIR/openbox-rc.xml,
 * written at start) unless the command names a
 * --config-file: one desktop (the scroll wheel over the desktop would
 * switch desktops and hide every window), no root menus on right or
 * middle clicks on the desktop, only Alt+F4 (close) and Alt+Tab (next
 * window) bound, new windows placed smartly and focused.
 *
 * Owns: the configuration file. Invariant: a command whose program is not
 * installed is not started; the display works without a window manager
 * (logged once, reported by display_wm_json and the doctor).
 *
 * Does not: keep the registry or stop the process (display.c stops it with
 * the display, dproc_kill_wait).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <X11/Xatom.h>

#include "core/log.h"
#include "core/proc.h"
#include "display_int.h"
#include "xerr.h"

#define WM_READY_MS 3000
#define WM_ARGS 16

extern char **environ;

static const struct config *cfg;
static char rc_path[PATH_MAX];
static bool missing_logged;

/* detm's openbox configuration (see the top comment). */
static const char openbox_rc[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!-- written by detmd for its displays; see daemon/x11/display_wm.c -->\n"
	"<openbox_config xmlns=\"http://openbox.org/3.4/rc\">\n"
	"<focus><focusNew>yes</focusNew><followMouse>no</followMouse><focusLast>yes</focusLast>"
	"<underMouse>no</underMouse></focus>\n"
	"<placement><policy>Smart</policy><center>yes</center><monitor>Primary</monitor>"
	"<primaryMonitor>1</primaryMonitor></placement>\n"
	"<theme><name>Clearlooks</name><titleLayout>LIMC</titleLayout><keepBorder>yes</keepBorder>"
	"<animateIconify>no</animateIconify></theme>\n"
	"<desktops><number>1</number><firstdesk>1</firstdesk><popupTime>0</popupTime></desktops>\n"
	"<resize><drawContents>yes</drawContents><popupShow>Never</popupShow></resize>\n"
	"<margins><top>0</top><bottom>0</bottom><left>0</left><right>0</right></margins>\n"
	"<keyboard>\n"
	" <keybind key=\"A-F4\"><action name=\"Close\"/></keybind>\n"
	" <keybind key=\"A-Tab\"><action name=\"NextWindow\"><finalactions><action name=\"Focus\"/>"
	"<action name=\"Raise\"/><action name=\"Unshade\"/></finalactions></action></keybind>\n"
	"</keyboard>\n"
	"<mouse><dragThreshold>4</dragThreshold><doubleClickTime>400</doubleClickTime>\n"
	" <context name=\"Client\">"
	"<mousebind button=\"Left\" action=\"Press\"><action name=\"Focus\"/><action name=\"Raise\"/></mousebind>"
	"<mousebind button=\"Middle\" action=\"Press\"><action name=\"Focus\"/><action name=\"Raise\"/></mousebind>"
	"<mousebind button=\"Right\" action=\"Press\"><action name=\"Focus\"/><action name=\"Raise\"/></mousebind>"
	"</context>\n"
	" <context name=\"Titlebar Top Right Bottom Left TLCorner TRCorner BRCorner BLCorner\">"
	"<mousebind button=\"Left\" action=\"Press\"><action name=\"Focus\"/><action name=\"Raise\"/>"
	"<action name=\"Unshade\"/></mousebind></context>\n"
	" <context name=\"Titlebar\">"
	"<mousebind button=\"Left\" action=\"Drag\"><action name=\"Move\"/></mousebind>"
	"<mousebind button=\"Left\" action=\"DoubleClick\"><action name=\"ToggleMaximize\"/></mousebind>"
	"</context>\n"
	" <context name=\"Top\"><mousebind button=\"Left\" action=\"Drag\"><action name=\"Resize\">"
	"<edge>top</edge></action></mousebind></context>\n"
	" <context name=\"Left\"><mousebind button=\"Left\" action=\"Drag\"><action name=\"Resize\">"
	"<edge>left</edge></action></mousebind></context>\n"
	" <context name=\"Right\"><mousebind button=\"Left\" action=\"Drag\"><action name=\"Resize\">"
	"<edge>right</edge></action></mousebind></context>\n"
	" <context name=\"Bottom\"><mousebind button=\"Left\" action=\"Drag\"><action name=\"Resize\">"
	"<edge>bottom</edge></action></mousebind></context>\n"
	" <context name=\"TRCorner BRCorner TLCorner BLCorner\"><mousebind button=\"Left\" action=\"Drag\">"
	"<action name=\"Resize\"/></mousebind></context>\n"
	" <context name=\"Iconify\"><mousebind button=\"Left\" action=\"Click\"><action name=\"Iconify\"/>"
	"</mousebind></context>\n"
	" <context name=\"Maximize\"><mousebind button=\"Left\" action=\"Click\">"
	"<action name=\"ToggleMaximize\"/></mousebind></context>\n"
	" <context name=\"Close\"><mousebind button=\"Left\" action=\"Click\"><action name=\"Close\"/>"
	"</mousebind></context>\n"
	" <context name=\"Desktop\"><mousebind button=\"Left\" action=\"Press\"><action name=\"Focus\"/>"
	"<action name=\"Raise\"/></mousebind></context>\n"
	"</mouse>\n"
	"</openbox_config>\n";

/* The command's first word (its program) into out; false for none. */
static bool
wm_program(char *out, size_t cap)
{
	const char *s = cfg != NULL ? cfg->window_manager : "";
	size_t n;

	s += strspn(s, " \t");
	n = strcspn(s, " \t");
	if (n == 0 || n >= cap)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static bool
is_openbox(const char *prog)
{
	const char *base = strrchr(prog, '/');

	return strcmp(base != NULL ? base + 1 : prog, "openbox") == 0;
}

void
dwm_init(const struct config *c, const char *dir)
{
	char prog[PATH_MAX];
	int fd;

	cfg = c;
	missing_logged = false;
	rc_path[0] = '\0';
	if (!wm_program(prog, sizeof prog) || !is_openbox(prog))
		return;
	snprintf(rc_path, sizeof rc_path, "%s/openbox-rc.xml", dir);
	fd = open(rc_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, openbox_rc, sizeof openbox_rc - 1) != (ssize_t)(sizeof openbox_rc - 1)) {
		log_warn("cannot write %s (%s): openbox runs with its own default configuration",
		    rc_path, strerror(errno));
		rc_path[0] = '\0';
	}
	if (fd >= 0)
		close(fd);
}

/* argv from the command (split on blanks, no shell), plus detm's openbox
 * configuration when the command gives none. copy is the caller's to free. */
static size_t
wm_argv(char **copy, char *argv[WM_ARGS])
{
	char *tok, *save = NULL;
	bool has_config = false;
	size_t n = 0;

	*copy = xstrdup(cfg->window_manager);
	for (tok = strtok_r(*copy, " \t", &save); tok != NULL && n < WM_ARGS - 4;
	    tok = strtok_r(NULL, " \t", &save)) {
		has_config = has_config || strcmp(tok, "--config-file") == 0;
		argv[n++] = tok;
	}
	if (n > 0 && is_openbox(argv[0]) && !has_config && rc_path[0] != '\0') {
		argv[n++] = (char *)(uintptr_t)"--config-file";
		argv[n++] = rc_path;
		argv[n++] = (char *)(uintptr_t)"--sm-disable";
	}
	argv[n] = NULL;
	return n;
}

/* Until the WM names its check window on the root (EWMH: it manages the
 * screen), it exits, or WM_READY_MS pass. True when it is ready. */
static bool
wm_wait_ready(Display *d, pid_t pid)
{
	Atom check = XInternAtom(d, "_NET_SUPPORTING_WM_CHECK", False);
	int waited;

	for (waited = 0; waited < WM_READY_MS; waited += 10) {
		Atom type = None;
		int fmt = 0;
		unsigned long n = 0, after = 0;
		unsigned char *data = NULL;
		bool set;

		xerr_begin();
		set = XGetWindowProperty(d, DefaultRootWindow(d), check, 0, 1, False, XA_WINDOW,
		    &type, &fmt, &n, &after, &data) == Success && type == XA_WINDOW && n == 1;
		if (data != NULL)
			XFree(data);
		xerr_begin();
		if (set)
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		sleep_ms(10);
	}
	return false;
}

void
dwm_start(struct dentry *de, Display *d, const char *log_dir)
{
	char logpath[PATH_MAX], disp[32], xauth[PATH_MAX + 16], prog[PATH_MAX], *copy = NULL;
	char *argv[WM_ARGS], *envp[256];
	struct proc_io io = { .in_fd = -1, .out_fd = -1, .extra_fd = -1, .search_path = true };
	size_t n = 0, i;

	de->wm_pid = 0;
	if (!wm_program(prog, sizeof prog))
		return;
	if (!dwm_found(NULL, 0)) {
		if (!missing_logged)
			log_warn("the window manager %s is not installed (apt-get install %s, or "
			    "--window-manager none): displays run without one", prog, prog);
		missing_logged = true;
		return;
	}
	if (wm_argv(&copy, argv) == 0)
		goto out;
	snprintf(disp, sizeof disp, "DISPLAY=%s", de->name);
	snprintf(xauth, sizeof xauth, "XAUTHORITY=%s", de->auth_path);
	envp[n++] = disp;
	if (de->auth_path[0] != '\0')
		envp[n++] = xauth;
	for (i = 0; environ[i] != NULL && n < ARRAY_LEN(envp) - 1; i++)
		if (strncmp(environ[i], "DISPLAY=", 8) != 0 && strncmp(environ[i], "XAUTHORITY=", 11) != 0)
			envp[n++] = environ[i];
	envp[n] = NULL;
	snprintf(logpath, sizeof logpath, "%s/wm-%d.log", log_dir, de->number);
	io.log = logpath;
	de->wm_pid = proc_spawn(argv, envp, &io);
	if (de->wm_pid < 0) {
		de->wm_pid = 0;
		goto out;
	}
	if (d != NULL && !wm_wait_ready(d, de->wm_pid)) {
		if (waitpid(de->wm_pid, NULL, WNOHANG) == de->wm_pid) {
			log_warn("the window manager %s on %s exited at once; see %s", prog, de->name,
			    logpath);
			de->wm_pid = 0;
		} else {
			log_warn("the window manager %s on %s is not managing the screen after %d ms",
			    prog, de->name, WM_READY_MS);
		}
	}
out:
	free(copy);
}

bool
dwm_found(char *path, size_t cap)
{
	char prog[PATH_MAX], full[PATH_MAX];
	bool found;

	if (!wm_program(prog, sizeof prog))
		return false;
	found = proc_find(prog, full, sizeof full);
	if (path != NULL && cap > 0)
		snprintf(path, cap, "%s", full);
	return found;
}

json_object *
display_wm_json(void)
{
	json_object *o = json_object_new_object();
	char prog[PATH_MAX], path[PATH_MAX];
	bool found;

	if (!wm_program(prog, sizeof prog)) {
		json_object_object_add(o, "command", NULL);
		json_object_object_add(o, "found", json_object_new_boolean(0));
		json_object_object_add(o, "note", json_object_new_string(
		    "no window manager (--window-manager none): windows open where programs put "
		    "them and new ones do not get the keyboard focus"));
		return o;
	}
	found = dwm_found(path, sizeof path);
	json_object_object_add(o, "command", json_object_new_string(cfg->window_manager));
	json_object_object_add(o, "found", json_object_new_boolean(found));
	if (found)
		json_object_object_add(o, "path", json_object_new_string(path));
	else
		json_object_object_add(o, "note", json_object_new_string(
		    "not installed: displays run without a window manager (install it, or pass "
		    "--window-manager none)"));
	if (rc_path[0] != '\0')
		json_object_object_add(o, "config", json_object_new_string(rc_path));
	return o;
}
