/*
 * test_input.c - xinput.c against a real Xvfb: xterm receiving typed text
 * and chords (checked through the file `cat` writes), click-to-focus
 * between two xterms, and a probe window of our own (its own connection
 * and thread, translating events as they arrive like an application) for
 * drags, scrolls and chords.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <X11/XKBlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>

#include "derr.h"
#include "x11/xerr.h"
#include "x11/xinput.h"
#include "xh.h"

#define W 1024
#define H 768

/* ---- helpers ---------------------------------------------------------- */

/* No key down and no modifier or button bit in the pointer state. */
static bool
nothing_pressed(Display *d)
{
	char keys[32];
	Window r, c;
	int rx, ry, wx, wy;
	unsigned int mask = 0;

	XQueryKeymap(d, keys);
	for (int i = 0; i < 32; i++)
		if (keys[i] != 0) {
			fprintf(stderr, "    key byte %d still down: 0x%02x\n", i, (unsigned char)keys[i]);
			return false;
		}
	XQueryPointer(d, DefaultRootWindow(d), &r, &c, &rx, &ry, &wx, &wy, &mask);
	if ((mask & 0x1fff) != 0) {
		fprintf(stderr, "    pointer state 0x%x\n", mask);
		return false;
	}
	return true;
}

/* The whole core keyboard map, to check that calls leave it as it was. */
static KeySym *
map_snapshot(Display *d, int *count)
{
	int min, max, per;
	KeySym *m, *copy;

	XDisplayKeycodes(d, &min, &max);
	m = XGetKeyboardMapping(d, (KeyCode)min, max - min + 1, &per);
	*count = (max - min + 1) * per;
	copy = malloc((size_t)*count * sizeof *copy);
	memcpy(copy, m, (size_t)*count * sizeof *copy);
	XFree(m);
	return copy;
}

static bool
map_same(Display *d, const KeySym *before, int count)
{
	int n;
	KeySym *now = map_snapshot(d, &n);
	bool same = n == count && memcmp(now, before, (size_t)n * sizeof *now) == 0;

	free(now);
	return same;
}

static size_t
read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;

	if (f != NULL) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return n;
}

struct file_wait {
	const char *path;
	const char *want;
	char got[8192];
};

static bool
file_has(void *arg)
{
	struct file_wait *fw = arg;

	read_file(fw->path, fw->got, sizeof fw->got);
	return strcmp(fw->got, fw->want) == 0;
}

static bool
file_exists(void *arg)
{
	struct stat st;

	return stat(arg, &st) == 0;
}

/* Waits until path holds exactly want; reports the difference if not. */
static bool
wait_file(const char *path, const char *want, int timeout_ms)
{
	struct file_wait fw = { path, want, { 0 } };

	if (xh_wait_until(file_has, &fw, timeout_ms))
		return true;
	fprintf(stderr, "    %s: want %zu bytes \"%.200s\"\n      got %zu bytes \"%.200s\"\n",
	    path, strlen(want), want, strlen(fw.got), fw.got);
	return false;
}

/* xh_spawn with string literals (copied: argv is not const there). */
static pid_t
spawn(const struct xh_server *s, const char *const *argv)
{
	char *copy[32];
	size_t n = 0;
	pid_t pid;

	for (; argv[n] != NULL && n < ARRAY_LEN(copy) - 1; n++)
		copy[n] = strdup(argv[n]);
	copy[n] = NULL;
	pid = xh_spawn(s, copy);
	for (size_t i = 0; i < n; i++)
		free(copy[i]);
	return pid;
}

/* ---- probe: a window on its own connection, read by its own thread ---- */

struct rec {
	int type;
	KeySym sym;             /* KeyPress/KeyRelease: XLookupString's keysym */
	KeyCode keycode;
	unsigned int state;
	unsigned int button;
	int x, y;
};

#define PROBE_MAX 4096

struct probe {
	Display *d;
	Window w;
	pthread_t thread;
	atomic_bool stop;
	pthread_mutex_t lock;
	int n;
	struct rec recs[PROBE_MAX];
};

static void *
probe_main(void *arg)
{
	struct probe *p = arg;

	while (!atomic_load(&p->stop)) {
		XEvent ev;

		if (XPending(p->d) == 0) {
			xh_sleep_ms(2);
			continue;
		}
		XNextEvent(p->d, &ev);
		if (ev.type == MappingNotify) {
			XRefreshKeyboardMapping(&ev.xmapping);
			continue;
		}
		struct rec r = { .type = ev.type };
		char buf[16];

		switch (ev.type) {
		case KeyPress:
		case KeyRelease:
			XLookupString(&ev.xkey, buf, sizeof buf, &r.sym, NULL);
			r.keycode = (KeyCode)ev.xkey.keycode;
			r.state = ev.xkey.state;
			break;
		case ButtonPress:
		case ButtonRelease:
			r.button = ev.xbutton.button;
			r.state = ev.xbutton.state;
			r.x = ev.xbutton.x;
			r.y = ev.xbutton.y;
			break;
		case MotionNotify:
			r.state = ev.xmotion.state;
			r.x = ev.xmotion.x;
			r.y = ev.xmotion.y;
			break;
		default:
			continue;
		}
		pthread_mutex_lock(&p->lock);
		if (p->n < PROBE_MAX)
			p->recs[p->n++] = r;
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

static bool
probe_mapped(void *arg)
{
	struct probe *p = arg;
	XWindowAttributes wa;

	return XGetWindowAttributes(p->d, p->w, &wa) && wa.map_state == IsViewable;
}

static struct probe *
probe_open(const struct xh_server *s, int x, int y, int w, int h)
{
	struct probe *p = calloc(1, sizeof *p);

	p->d = XOpenDisplay(s->name);
	if (p->d == NULL) {
		free(p);
		return NULL;
	}
	xerr_watch(p->d);
	p->w = XCreateSimpleWindow(p->d, DefaultRootWindow(p->d), x, y, (unsigned)w,
	    (unsigned)h, 0, 0, WhitePixel(p->d, DefaultScreen(p->d)));
	XStoreName(p->d, p->w, "probe");
	XSelectInput(p->d, p->w, KeyPressMask | KeyReleaseMask | ButtonPressMask |
	    ButtonReleaseMask | PointerMotionMask);
	XMapWindow(p->d, p->w);
	XSync(p->d, False);
	if (!xh_wait_until(probe_mapped, p, 3000))
		fprintf(stderr, "    probe window not mapped\n");
	pthread_mutex_init(&p->lock, NULL);
	pthread_create(&p->thread, NULL, probe_main, p);
	return p;
}

static void
probe_close(struct probe *p)
{
	if (p == NULL)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	xerr_forget(p->d);
	XCloseDisplay(p->d);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static void
probe_reset(struct probe *p)
{
	pthread_mutex_lock(&p->lock);
	p->n = 0;
	pthread_mutex_unlock(&p->lock);
}

/* Copies the records so far into out (up to cap); returns the count. */
static int
probe_take(struct probe *p, struct rec *out, int cap)
{
	int n;

	pthread_mutex_lock(&p->lock);
	n = p->n < cap ? p->n : cap;
	memcpy(out, p->recs, (size_t)n * sizeof *out);
	pthread_mutex_unlock(&p->lock);
	return n;
}

struct count_wait {
	struct probe *p;
	int type;
	int want;
};

static bool
probe_has(void *arg)
{
	struct count_wait *cw = arg;
	int n = 0;

	pthread_mutex_lock(&cw->p->lock);
	for (int i = 0; i < cw->p->n; i++)
		if (cw->p->recs[i].type == cw->type)
			n++;
	pthread_mutex_unlock(&cw->p->lock);
	return n >= cw->want;
}

/* Waits for at least `want` events of `type`, then a little longer so that
 * extra (unwanted) events would show up too. */
static bool
probe_wait(struct probe *p, int type, int want)
{
	struct count_wait cw = { p, type, want };
	bool ok = xh_wait_until(probe_has, &cw, 3000);

	xh_sleep_ms(30);
	return ok;
}

static bool
focus_is(Display *d, Window w)
{
	Window f, root, parent, *kids;
	unsigned int n;
	int revert;

	XGetInputFocus(d, &f, &revert);
	/* w itself or a descendant of it. */
	while (f != None && f != PointerRoot && f != DefaultRootWindow(d)) {
		if (f == w)
			return true;
		kids = NULL;
		if (!XQueryTree(d, f, &root, &parent, &kids, &n))
			return false;
		if (kids)
			XFree(kids);
		f = parent;
	}
	return false;
}

/* ---- tests ------------------------------------------------------------ */

static void
input_move_and_pointer(void)
{
	struct xh_server s;
	struct derr e;
	int x = -1, y = -1;

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		return;
	}
	CHECK(xinput_move(s.d, 10, 20, &e) == 0);
	CHECK(xinput_pointer(s.d, &x, &y, &e) == 0);
	CHECK(x == 10 && y == 20);
	CHECK(xinput_move(s.d, W - 1, H - 1, &e) == 0);
	CHECK(xinput_pointer(s.d, &x, &y, &e) == 0);
	CHECK(x == W - 1 && y == H - 1);
	CHECK(xinput_move(s.d, 0, 0, &e) == 0);
	CHECK(xinput_pointer(s.d, &x, &y, &e) == 0);
	CHECK(x == 0 && y == 0);
	xh_server_stop(&s);
}

static void
input_errors(void)
{
	struct xh_server s;
	struct derr e;
	KeySym *before;
	int count;
	char *big;

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		return;
	}
	before = map_snapshot(s.d, &count);

	CHECK(xinput_move(s.d, -1, 5, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "x") == 0);
	CHECK(strstr(e.message, "1024x768") != NULL);
	CHECK(xinput_move(s.d, W, 5, &e) == -1 && strcmp(e.field, "x") == 0);
	CHECK(xinput_move(s.d, 5, H, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "y") == 0);
	CHECK(strstr(e.message, "1024x768") != NULL);
	CHECK(xinput_drag(s.d, 5, 5, 5000, 5, 1, &e) == -1 && strcmp(e.field, "x") == 0);
	CHECK(xinput_drag(s.d, 5, -7, 5, 5, 1, &e) == -1 && strcmp(e.field, "y") == 0);
	CHECK(xinput_click(s.d, 1, 0, &e) == -1 && strcmp(e.field, "count") == 0);
	CHECK(xinput_click(s.d, 1, 4, &e) == -1 && strcmp(e.field, "count") == 0);
	CHECK(xinput_click(s.d, 0, 1, &e) == -1 && strcmp(e.field, "button") == 0);
	CHECK(xinput_button(s.d, 99, 1, &e) == -1 && strcmp(e.field, "button") == 0);
	CHECK(xinput_scroll(s.d, "sideways", 1, &e) == -1 && strcmp(e.field, "direction") == 0);
	CHECK(xinput_scroll(s.d, NULL, 1, &e) == -1 && strcmp(e.field, "direction") == 0);
	CHECK(xinput_scroll(s.d, "down", 0, &e) == -1 && strcmp(e.field, "amount") == 0);
	CHECK(xinput_scroll(s.d, "down", 101, &e) == -1 && strcmp(e.field, "amount") == 0);

	CHECK(xinput_type(s.d, "ab\xc3\x28", 4, NULL, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "text") == 0);
	CHECK(xinput_type(s.d, "a\x01", 2, NULL, &e) == -1 && strcmp(e.field, "text") == 0);
	big = malloc(64 * 1024 + 1);
	memset(big, 'a', 64 * 1024 + 1);
	CHECK(xinput_type(s.d, big, 64 * 1024 + 1, NULL, &e) == -1 && strcmp(e.field, "text") == 0);
	free(big);
	CHECK(xinput_type(s.d, "", 0, NULL, &e) == 0);

	CHECK(xinput_keys(s.d, "ctrl+shift+bogus", &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "keys") == 0);
	CHECK(strstr(e.message, "bogus") != NULL);
	CHECK(nothing_pressed(s.d));
	/* A bad name in a later chord: nothing of the earlier ones goes out. */
	CHECK(xinput_keys(s.d, "ctrl+a shift+x nosuchkey", &e) == -1);
	CHECK(strcmp(e.field, "keys") == 0 && strstr(e.message, "nosuchkey") != NULL);
	CHECK(nothing_pressed(s.d));
	CHECK(xinput_keys(s.d, "", &e) == -1 && strcmp(e.field, "keys") == 0);
	CHECK(xinput_keys(s.d, "   ", &e) == -1 && strcmp(e.field, "keys") == 0);
	CHECK(xinput_keys(s.d, "ctrl+", &e) == -1 && strcmp(e.field, "keys") == 0);
	CHECK(xinput_keys(s.d, NULL, &e) == -1 && strcmp(e.field, "keys") == 0);
	CHECK(xinput_keys(s.d, "a+b+c+d+e+f+g+h+i", &e) == -1 && strcmp(e.field, "keys") == 0);
	CHECK(nothing_pressed(s.d));
	xinput_idle(s.d, 0);          /* restore the kept bindings now */
	CHECK(map_same(s.d, before, count));
	free(before);
	xh_server_stop(&s);
}

static void
input_click_focuses(void)
{
	struct xh_server s;
	struct derr e;
	const char *left[] = { "xterm", "-geometry", "40x10+0+0", "-title", "left", NULL };
	const char *right[] = { "xterm", "-geometry", "40x10+200+0", "-title", "right", NULL };
	Window wl, wr, root, parent, *kids = NULL;
	unsigned int n = 0;

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		return;
	}
	CHECK(spawn(&s, left) > 0);
	CHECK(spawn(&s, right) > 0);
	wl = xh_wait_window(s.d, "left", 5000);
	wr = xh_wait_window(s.d, "right", 5000);
	CHECK(wl != 0 && wr != 0);
	/* The windows overlap at x 200..~250: a click there hits the top one. */
	CHECK(xinput_move(s.d, 20, 20, &e) == 0);
	CHECK(xinput_click(s.d, 1, 1, &e) == 0);
	CHECK(focus_is(s.d, wl));
	CHECK(xinput_move(s.d, 400, 30, &e) == 0);
	CHECK(xinput_click(s.d, 1, 1, &e) == 0);
	CHECK(focus_is(s.d, wr));
	CHECK(!focus_is(s.d, wl));
	/* Click left again: focused and raised above right. */
	CHECK(xinput_move(s.d, 30, 40, &e) == 0);
	CHECK(xinput_click(s.d, 1, 2, &e) == 0);
	CHECK(focus_is(s.d, wl));
	if (XQueryTree(s.d, DefaultRootWindow(s.d), &root, &parent, &kids, &n) && n > 0)
		CHECK(kids[n - 1] == wl);
	else
		CHECK(!"query tree");
	if (kids)
		XFree(kids);
	/* Pressing through xinput_button focuses too. */
	CHECK(xinput_move(s.d, 300, 50, &e) == 0);
	CHECK(xinput_button(s.d, 1, 1, &e) == 0);
	CHECK(xinput_button(s.d, 1, 0, &e) == 0);
	CHECK(focus_is(s.d, wr));
	CHECK(nothing_pressed(s.d));
	xh_server_stop(&s);
}

static void
input_drag_and_scroll(void)
{
	struct xh_server s;
	struct derr e;
	struct probe *p;
	struct rec *r = malloc(PROBE_MAX * sizeof *r);
	int n, press = -1, release = -1, motions = 0, lastx = -1;

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		free(r);
		return;
	}
	p = probe_open(&s, 100, 100, 400, 300);
	CHECK(p != NULL);
	if (p == NULL)
		goto out;
	/* Drag from (150,150) to (450,250) in root coordinates. */
	CHECK(xinput_drag(s.d, 150, 150, 450, 250, 1, &e) == 0);
	CHECK(probe_wait(p, ButtonRelease, 1));
	CHECK(focus_is(s.d, p->w));
	n = probe_take(p, r, PROBE_MAX);
	for (int i = 0; i < n; i++) {
		if (r[i].type == ButtonPress && press < 0)
			press = i;
		else if (r[i].type == ButtonRelease)
			release = i;
		else if (r[i].type == MotionNotify && press >= 0 && release < 0) {
			motions++;
			CHECK(r[i].state & Button1Mask);
			CHECK(r[i].x > lastx);
			lastx = r[i].x;
		}
	}
	CHECK(press >= 0 && release > press);
	if (press >= 0 && release > press) {
		CHECK(r[press].button == 1 && r[press].x == 50 && r[press].y == 50);
		CHECK(r[release].button == 1 && r[release].x == 350 && r[release].y == 150);
	}
	CHECK(motions >= 5);
	CHECK(nothing_pressed(s.d));

	/* Scrolls at the pointer (still over the probe). */
	probe_reset(p);
	CHECK(xinput_scroll(s.d, "down", 3, &e) == 0);
	CHECK(xinput_scroll(s.d, "up", 2, &e) == 0);
	CHECK(xinput_scroll(s.d, "LEFT", 1, &e) == 0);
	CHECK(xinput_scroll(s.d, "right", 1, &e) == 0);
	CHECK(probe_wait(p, ButtonRelease, 7));
	n = probe_take(p, r, PROBE_MAX);
	{
		const unsigned want[] = { 5, 5, 5, 4, 4, 6, 7 };
		size_t k = 0;

		for (int i = 0; i < n; i++)
			if (r[i].type == ButtonPress) {
				CHECK(k < ARRAY_LEN(want) && r[i].button == want[k]);
				k++;
			}
		CHECK(k == ARRAY_LEN(want));
	}
	/* Middle click: button 2 press and release, twice. */
	probe_reset(p);
	CHECK(xinput_click(s.d, 2, 2, &e) == 0);
	CHECK(probe_wait(p, ButtonRelease, 2));
	n = probe_take(p, r, PROBE_MAX);
	{
		int presses = 0;

		for (int i = 0; i < n; i++)
			if (r[i].type == ButtonPress && r[i].button == 2)
				presses++;
		CHECK(presses == 2);
	}
	CHECK(nothing_pressed(s.d));
out:
	probe_close(p);
	free(r);
	xh_server_stop(&s);
}

/* The KeyPress events of the probe, as (keysym, state) pairs. */
static int
key_presses(struct probe *p, struct rec *out, int cap)
{
	struct rec all[256];
	int n = probe_take(p, all, 256), k = 0;

	for (int i = 0; i < n && k < cap; i++)
		if (all[i].type == KeyPress)
			out[k++] = all[i];
	return k;
}

static void
input_keys_chords(void)
{
	struct xh_server s;
	struct derr e;
	struct probe *p;
	struct rec k[64];
	KeySym *before;
	int n, count;
	unsigned int mods = ControlMask | ShiftMask | Mod1Mask | Mod4Mask;

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		return;
	}
	before = map_snapshot(s.d, &count);
	p = probe_open(&s, 0, 0, 300, 200);
	if (p == NULL) {
		CHECK(!"probe");
		goto out;
	}
	CHECK(xinput_move(s.d, 50, 50, &e) == 0);
	CHECK(xinput_click(s.d, 1, 1, &e) == 0);
	CHECK(focus_is(s.d, p->w));

	probe_reset(p);
	CHECK(xinput_keys(s.d, "ctrl+shift+t", &e) == 0);
	CHECK(probe_wait(p, KeyRelease, 3));
	n = key_presses(p, k, 64);
	CHECK(n == 3);
	if (n == 3) {
		CHECK(k[0].sym == XK_Control_L && k[1].sym == XK_Shift_L);
		CHECK(k[2].sym == XK_T && (k[2].state & mods) == (ControlMask | ShiftMask));
	}
	CHECK(nothing_pressed(s.d));

	probe_reset(p);
	CHECK(xinput_keys(s.d, "alt+F4", &e) == 0);
	CHECK(probe_wait(p, KeyRelease, 2));
	n = key_presses(p, k, 64);
	CHECK(n == 2 && k[1].sym == XK_F4 && (k[1].state & mods) == Mod1Mask);

	probe_reset(p);
	CHECK(xinput_keys(s.d, "super", &e) == 0);
	CHECK(probe_wait(p, KeyRelease, 1));
	n = key_presses(p, k, 64);
	CHECK(n == 1 && k[0].sym == XK_Super_L);

	/* Several chords, fallback names, case-insensitive, single characters,
	 * an implied Shift, and a key that needs a spare keycode (eacute). */
	probe_reset(p);
	CHECK(xinput_keys(s.d, "ctrl+a  BackSpace enter ESC pgdn PageUp f13 DEL "
	    "Left A ! é ctrl++ win+e", &e) == 0);
	CHECK(probe_wait(p, KeyRelease, 20));
	n = key_presses(p, k, 64);
	{
		const struct {
			KeySym sym;
			unsigned int state;
		} want[] = {
			{ XK_Control_L, 0 }, { XK_a, ControlMask }, { XK_BackSpace, 0 },
			{ XK_Return, 0 }, { XK_Escape, 0 }, { XK_Next, 0 }, { XK_Prior, 0 },
			{ XK_F13, 0 }, { XK_Delete, 0 }, { XK_Left, 0 },
			{ XK_Shift_L, 0 }, { XK_A, ShiftMask },
			{ XK_Shift_L, 0 }, { XK_exclam, ShiftMask },
			{ XK_eacute, 0 },
			{ XK_Control_L, 0 }, { XK_Shift_L, ControlMask },
			{ XK_plus, ControlMask | ShiftMask },
			{ XK_Super_L, 0 }, { XK_e, Mod4Mask },
		};

		CHECK(n == (int)ARRAY_LEN(want));
		for (int i = 0; i < n && i < (int)ARRAY_LEN(want); i++)
			if (k[i].sym != want[i].sym || (k[i].state & mods) != want[i].state) {
				fprintf(stderr, "    press %d: got %s state 0x%x, want %s state 0x%x\n",
				    i, XKeysymToString(k[i].sym), k[i].state & mods,
				    XKeysymToString(want[i].sym), want[i].state);
				CHECK(!"chord sequence");
			}
	}
	/* Meta and Hyper are modifiers without a column-0 key in Xvfb's map:
	 * they go through the key that carries them in the modifier map. */
	probe_reset(p);
	CHECK(xinput_keys(s.d, "meta+x hyper+y", &e) == 0);
	CHECK(probe_wait(p, KeyRelease, 4));
	n = key_presses(p, k, 64);
	CHECK(n == 4);
	if (n == 4) {
		CHECK(k[1].sym == XK_x && (k[1].state & Mod1Mask));
		CHECK(k[3].sym == XK_y && (k[3].state & Mod4Mask));
	}
	CHECK(nothing_pressed(s.d));
	xinput_idle(s.d, 0);          /* restore the kept bindings now */
	CHECK(map_same(s.d, before, count));
out:
	probe_close(p);
	free(before);
	xh_server_stop(&s);
}

/* A keysym in the Shift column of an existing key is typed with that key
 * and Shift (not through a spare keycode); one in column 0 without Shift.
 * (Level 3 needs an XKB four-level key, which a core-protocol test cannot
 * create: columns 4-5 set through XChangeKeyboardMapping become group 3.) */
static void
input_type_shift_column(void)
{
	struct xh_server s;
	struct derr e;
	struct probe *p = NULL;
	struct rec k[64];
	int min, max, per, n, spare = 0;
	KeySym *m;
	KeySym cols[2] = { 0x1002600, 0x1002601 };     /* U+2600, U+2601 */
	KeySym none[2] = { NoSymbol, NoSymbol };
	const char *text = "\xe2\x98\x80\xe2\x98\x81\xe2\x98\x81\xe2\x98\x80"; /* ☀☁☁☀ */

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		return;
	}
	XDisplayKeycodes(s.d, &min, &max);
	m = XGetKeyboardMapping(s.d, (KeyCode)min, max - min + 1, &per);
	for (int kc = max; kc >= min && spare == 0; kc--) {
		bool empty = true;

		for (int c = 0; c < per; c++)
			if (m[(kc - min) * per + c] != NoSymbol)
				empty = false;
		if (empty)
			spare = kc;
	}
	XFree(m);
	CHECK(spare != 0);
	if (spare == 0)
		goto out;
	XChangeKeyboardMapping(s.d, spare, 2, cols, 1);
	XSync(s.d, False);
	p = probe_open(&s, 0, 0, 300, 200);
	CHECK(p != NULL);
	if (p == NULL)
		goto out;
	CHECK(xinput_move(s.d, 50, 50, &e) == 0);
	CHECK(xinput_click(s.d, 1, 1, &e) == 0);
	CHECK(xinput_type(s.d, text, strlen(text), NULL, &e) == 0);
	CHECK(probe_wait(p, KeyRelease, 6));
	n = key_presses(p, k, 64);
	{
		const KeySym want[] = { 0x1002600, XK_Shift_L, 0x1002601, XK_Shift_L,
			0x1002601, 0x1002600 };

		CHECK(n == (int)ARRAY_LEN(want));
		for (int i = 0; i < n && i < (int)ARRAY_LEN(want); i++) {
			if (k[i].sym != want[i])
				fprintf(stderr, "    press %d: got 0x%lx want 0x%lx\n", i,
				    (unsigned long)k[i].sym, (unsigned long)want[i]);
			CHECK(k[i].sym == want[i]);
			if (want[i] >= 0x1002600)
				CHECK(k[i].keycode == spare);
		}
	}
	CHECK(nothing_pressed(s.d));
	XChangeKeyboardMapping(s.d, spare, 2, none, 1);
	XSync(s.d, False);
out:
	probe_close(p);
	xh_server_stop(&s);
}

/* A 300+ character mixed string: ASCII, more distinct Latin-1 letters than
 * Xvfb has spare keycodes (so bindings are recycled), CJK and emoji. */
static char *
mixed_text(void)
{
	static const char *const parts[] = {
		"The quick brown fox jumps over the lazy dog 0123456789 ",
		"~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./ ",
		"àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ ÀÉÎÕÜ ß ",
		"漢字かなカナ中文한국어 ",
		"😀🎉🚀 € ∑ → ",
		"ça marche déjà, naïve Straße, 日本語のテキスト, ",
		"Ελληνικά кириллица עברית العربية ",
		"line noise: <tag attr=\"v\">&amp;</tag> {json: [1, 2.5e-3]} ",
		"¡¿ «» ° ± µ ¶ § © ® ™ … — – ‘’ “” ",
		"🙂🙃🤖👍🏽 done.",
	};
	size_t len = 0;
	char *s;

	for (size_t i = 0; i < ARRAY_LEN(parts); i++)
		len += strlen(parts[i]);
	s = malloc(len + 1);
	s[0] = '\0';
	for (size_t i = 0; i < ARRAY_LEN(parts); i++)
		strcat(s, parts[i]);
	return s;
}

static void
input_type_xterm(void)
{
	struct xh_server s = { 0 };
	struct derr e;
	char dir[] = "/tmp/detm-input-XXXXXX", path[128], done[160], cmd[512];
	char want[8192];
	char *mixed = NULL;
	KeySym *before = NULL;
	int count;
	Window w;
	static const char *const lines[] = {
		"hello, world!",
		"é ü ß É Ü",
		"漢字",
		"😀",
	};

	if (mkdtemp(dir) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof path, "%s/out", dir);
	snprintf(done, sizeof done, "%s/done", dir);
	snprintf(cmd, sizeof cmd, "stty -echo; cat > '%s'; echo ok > '%s'", path, done);
	const char *argv[] = { "env", "LC_ALL=C.UTF-8", "xterm", "-u8", "-geometry", "80x24+0+0",
		"-title", "typing", "-e", "sh", "-c", cmd, NULL };

	if (xh_server_start(&s, W, H) != 0) {
		CHECK(!"xvfb");
		goto out;
	}
	before = map_snapshot(s.d, &count);
	CHECK(spawn(&s, argv) > 0);
	w = xh_wait_window(s.d, "typing", 5000);
	CHECK(w != 0);
	if (w == 0)
		goto out;
	CHECK(xinput_move(s.d, 100, 100, &e) == 0);
	CHECK(xinput_click(s.d, 1, 1, &e) == 0);
	CHECK(focus_is(s.d, w));
	/* The pointer leaves: focus, not the pointer, decides where keys go. */
	CHECK(xinput_move(s.d, 900, 700, &e) == 0);
	/* cat only writes once the shell's stty ran: wait for the first line. */
	want[0] = '\0';
	for (size_t i = 0; i < ARRAY_LEN(lines); i++) {
		char text[256];

		snprintf(text, sizeof text, "%s\n", lines[i]);
		CHECK(xinput_type(s.d, text, strlen(text), NULL, &e) == 0);
		strcat(want, text);
		CHECK(wait_file(path, want, 5000));
	}
	mixed = mixed_text();
	CHECK(utf8_chars(mixed) >= 300);
	{
		char text[4096];

		snprintf(text, sizeof text, "%s\n", mixed);
		CHECK(xinput_type(s.d, text, strlen(text), NULL, &e) == 0);
		strcat(want, text);
		CHECK(wait_file(path, want, 5000));
	}
	/* "\r\n" is one Return; a tab goes through. */
	CHECK(xinput_type(s.d, "a\tb\r\n", 5, NULL, &e) == 0);
	strcat(want, "a\tb\n");
	CHECK(wait_file(path, want, 5000));

	/* Chords into the terminal: BackSpace erases, ctrl+u kills the line
	 * (ctrl must be down, or a 'u' would appear), shift+a is 'A'. */
	CHECK(xinput_type(s.d, "abc", 3, NULL, &e) == 0);
	CHECK(xinput_keys(s.d, "BackSpace Return", &e) == 0);
	strcat(want, "ab\n");
	CHECK(wait_file(path, want, 5000));
	CHECK(xinput_type(s.d, "xyz", 3, NULL, &e) == 0);
	CHECK(xinput_keys(s.d, "ctrl+u q shift+a Return", &e) == 0);
	strcat(want, "qA\n");
	CHECK(wait_file(path, want, 5000));
	CHECK(nothing_pressed(s.d));
	xinput_idle(s.d, 0);          /* restore the kept bindings now */
	CHECK(map_same(s.d, before, count));
	/* ctrl+d at the start of a line: cat sees end of file and exits. */
	CHECK(xinput_keys(s.d, "ctrl+d", &e) == 0);
	CHECK(xh_wait_until(file_exists, done, 5000));
	CHECK(nothing_pressed(s.d));
out:
	free(mixed);
	free(before);
	if (s.d != NULL)
		xh_server_stop(&s);
	unlink(path);
	unlink(done);
	rmdir(dir);
}

const struct harness_test input_tests[] = {
	{ "input_move_and_pointer", input_move_and_pointer },
	{ "input_errors", input_errors },
	{ "input_click_focuses", input_click_focuses },
	{ "input_drag_and_scroll", input_drag_and_scroll },
	{ "input_keys_chords", input_keys_chords },
	{ "input_type_shift_column", input_type_shift_column },
	{ "input_type_xterm", input_type_xterm },
	{ NULL, NULL },
};
