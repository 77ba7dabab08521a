/*
 * test_typing.c - typed text arrives byte-exact in a real xterm however
 * late the xterm reads it: a long mixed-script text (ASCII, shifted
 * symbols, accents, Cyrillic, Greek, CJK, emoji: more distinct keysyms
 * than Xvfb has spare keycodes, so bindings are recycled within a call)
 *  - typed while the xterm is stopped (SIGSTOP) and continued by a helper
 *    a while later: the reader is as late as a loaded machine can make it;
 *  - typed repeatedly while two busy loops of the test's own compete with
 *    the xterm for the cores;
 *  - typed on two displays at once from two threads.
 * Correctness only: no timing is checked; waits have generous deadlines.
 * These failed while the pool had Xvfb's 19 spare keycodes: xterm
 * translated queued key events with a map fetched after the spare keycodes
 * were rebound for later characters. With ~220 (xinput_keymap.c: borrowed
 * vendor keycodes, two levels each) this text rebinds none; the stopped
 * client runs in the x11 suite, the loaded ones with DETM_TYPING_REPRO=1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <X11/Xlib.h>

#include "core/util.h"
#include "derr.h"
#include "x11/xerr.h"
#include "x11/xinput.h"
#include "xh.h"

#define W 640
#define H 480
#define OUT_MAX (64 * 1024)

static const char mixed[] =
    "Plain ASCII 0123456789 ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./ "
    "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ ÀÉÎÕÜ ß "
    "Съешь же ещё этих мягких французских булок, да выпей чаю. "
    "Ξεσκεπάζω τὴν ψυχοφθόρα βδελυγμία. "
    "漢字かなカナ中文한국어 日本語のテキスト "
    "😀🎉🚀🙂🤖 € ∑ → ≠ ∞ "
    "¡¿ «» ° ± µ ¶ § © ® ™ … — – ‘’ “” done.";

/* One display with an xterm whose cat writes what it reads to out. */
struct term {
	struct xh_server s;
	char dir[32], out[64];
	pid_t pid;
	char want[OUT_MAX];
	size_t wantlen;
	int bad;                /* runs whose text did not arrive exactly */
	char note[640];
};

static size_t
file_read(const char *path, char *buf, size_t cap)
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

struct fw {
	const struct term *t;
	char got[OUT_MAX];
	size_t n;
};

/* The file has at least as many bytes as wanted (then it is compared). */
static bool
caught_up(void *arg)
{
	struct fw *f = arg;

	f->n = file_read(f->t->out, f->got, sizeof f->got);
	return f->n >= f->t->wantlen;
}

static bool
term_start(struct term *t)
{
	char cmd[256];
	Window w;
	struct derr e;

	memset(t, 0, sizeof *t);
	strcpy(t->dir, "/tmp/detm-typing-XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return false;
	snprintf(t->out, sizeof t->out, "%s/out", t->dir);
	snprintf(cmd, sizeof cmd, "stty -echo; cat > '%s'", t->out);
	if (xh_server_start(&t->s, W, H) != 0)
		return false;
	{
		static const char *const argv[] = { "env", "LC_ALL=C.UTF-8", "xterm", "-u8",
			"-geometry", "80x24+0+0", "-title", "typing", "-e", "sh", "-c", NULL, NULL };
		char *copy[ARRAY_LEN(argv)];

		for (size_t i = 0; i < ARRAY_LEN(argv); i++)
			copy[i] = argv[i] != NULL ? strdup(argv[i]) : NULL;
		copy[ARRAY_LEN(argv) - 2] = strdup(cmd);
		t->pid = xh_spawn(&t->s, copy);
		for (size_t i = 0; i < ARRAY_LEN(argv); i++)
			free(copy[i]);
	}
	if (t->pid <= 0 || (w = xh_wait_window(t->s.d, "typing", 30000)) == 0)
		return false;
	if (xinput_move(t->s.d, 100, 100, &e) != 0 || xinput_click(t->s.d, 1, 1, &e) != 0)
		return false;
	/* cat writes once the shell's stty ran: a first line proves it. */
	return true;
}

static void
term_stop(struct term *t)
{
	if (t->s.d != NULL) {
		xinput_forget(t->s.d);
		xh_server_stop(&t->s);
	}
	unlink(t->out);
	rmdir(t->dir);
}

/* Types text + "\n" once and waits until the file caught up; counts a
 * run whose bytes differ. */
static bool
term_type(struct term *t, const char *text, int run)
{
	static __thread struct fw f;
	char line[4096];
	struct derr e;
	size_t len;

	len = (size_t)snprintf(line, sizeof line, "%s\n", text);
	if (t->wantlen + len >= sizeof t->want)
		return false;
	memcpy(t->want + t->wantlen, line, len + 1);
	t->wantlen += len;
	if (xinput_type(t->s.d, line, len, NULL, &e) != 0) {
		snprintf(t->note, sizeof t->note, "run %d: %s", run, e.message);
		t->bad++;
		return false;
	}
	f.t = t;
	(void)xh_wait_until(caught_up, &f, 60000);
	if (f.n != t->wantlen || memcmp(f.got, t->want, f.n) != 0) {
		size_t at = 0;

		while (at < f.n && at < t->wantlen && f.got[at] == t->want[at])
			at++;
		snprintf(t->note, sizeof t->note, "run %d: got %zu bytes, want %zu, first "
		    "difference at byte %zu: got \"%.60s\" want \"%.60s\"", run, f.n, t->wantlen, at,
		    f.got + (at > 8 ? at - 8 : 0), t->want + (at > 8 ? at - 8 : 0));
		t->bad++;
		/* Later runs are compared on their own. */
		memcpy(t->want, f.got, f.n);
		t->wantlen = f.n;
		return false;
	}
	return true;
}

static pid_t
burner(void)
{
	pid_t p = fork();

	if (p == 0) {
		volatile unsigned long n = 0;

		for (;;)
			n++;
	}
	return p;
}

static void
reap(pid_t p)
{
	if (p > 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
}

/* The xterm is stopped before each run and continued by a helper process
 * later (longer than any quiet time); the text must still be exact. */
static void
typing_stopped_client(void)
{
	struct term *t = calloc(1, sizeof *t);

	CHECK(term_start(t));
	CHECK(term_type(t, "ready", 0));
	for (int run = 1; run <= 3 && t->bad == 0; run++) {
		pid_t helper;

		CHECK(kill(t->pid, SIGSTOP) == 0);

		helper = fork();
		if (helper == 0) {
			usleep(1500 * 1000);
			kill(t->pid, SIGCONT);
			_exit(0);
		}
		term_type(t, mixed, run);
		waitpid(helper, NULL, 0);
		kill(t->pid, SIGCONT);
	}
	if (t->bad != 0)
		fprintf(stderr, "    %s\n", t->note);
	CHECK(t->bad == 0);
	term_stop(t);
	free(t);
}

/* Five runs while two busy loops of the test's own hold the cores. */
static void
typing_loaded(void)
{
	struct term *t = calloc(1, sizeof *t);
	pid_t b1, b2;

	CHECK(term_start(t));
	CHECK(term_type(t, "ready", 0));
	b1 = burner();
	b2 = burner();
	for (int run = 1; run <= 5; run++)
		term_type(t, mixed, run);
	reap(b1);
	reap(b2);
	if (t->bad != 0)
		fprintf(stderr, "    %s\n", t->note);
	CHECK(t->bad == 0);
	term_stop(t);
	free(t);
}

static void *
type_runs(void *arg)
{
	struct term *t = arg;

	for (int run = 1; run <= 3; run++)
		term_type(t, mixed, run);
	return NULL;
}

/* Two displays typed into at once, from two threads, under load. */
static void
typing_two_displays(void)
{
	struct term *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	pthread_t ta, tb;
	pid_t b1;

	CHECK(term_start(a));
	CHECK(term_start(b));
	CHECK(term_type(a, "ready a", 0));
	CHECK(term_type(b, "ready b", 0));
	b1 = burner();
	CHECK(pthread_create(&ta, NULL, type_runs, a) == 0);
	CHECK(pthread_create(&tb, NULL, type_runs, b) == 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	reap(b1);
	if (a->bad != 0)
		fprintf(stderr, "    display a: %s\n", a->note);
	if (b->bad != 0)
		fprintf(stderr, "    display b: %s\n", b->note);
	CHECK(a->bad == 0);
	CHECK(b->bad == 0);
	term_stop(a);
	term_stop(b);
	free(a);
	free(b);
}

/* Always run: a stopped reader is the latest one, and needs no load. */
const struct harness_test typing_tests[] = {
	{ "typing_stopped_client", typing_stopped_client },
	{ NULL, NULL },
};

/* With busy loops of their own: DETM_TYPING_REPRO=1 (they load the cores
 * the suites beside them run on; the typing suite does this through HTTP). */
const struct harness_test typing_load_tests[] = {
	{ "typing_loaded", typing_loaded },
	{ "typing_two_displays", typing_two_displays },
	{ NULL, NULL },
};
