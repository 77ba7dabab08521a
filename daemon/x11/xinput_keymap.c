/*
 * xinput_keymap.c - the keyboard map for xinput's keyboard calls: which
 * keycode and modifiers give a keysym, and a pool of spare keycodes that
 * keysyms missing from the map are bound to: first those with NoSymbol in
 * every column (Xvfb has 19), then, borrowed, those that carry only vendor
 * keysyms (XF86 0x1008FFxx: media and launch keys, 91 on Xvfb) and no
 * modifier, whose rows are put back as they were.
 *
 * Why so many: a spare keycode rebound while a client still holds key
 * events that used its old binding is misread. Xlib notes a MappingNotify
 * when it reads it off the socket and fetches the new map at the next
 * lookup, so under load (xterm reading late, many events in one read) an
 * earlier key event of that keycode is translated with the new binding
 * (typed text lost or changed bytes, README). No request proves a client
 * has translated its events, so the pool avoids rebinding instead: every
 * pool keycode types one keysym alone and one with Shift held (~220 on
 * Xvfb), and text with up to that many distinct missing keysyms binds each
 * to its own place and never rebinds one within a call, nor across calls
 * while the bindings are kept (a keycode rewritten for its other level
 * keeps this one's keysym, so its queued keys still read the same). Past that the least recently used binding is rebound, QUIET_MS
 * after its last key reached the server (XSync): the one case still timed.
 *
 * Owns: per display, the spare keycodes bound by earlier calls (struct
 * kcache, reached through `caches` under caches_lock, kept so that typing
 * the same characters again does not rebind), and xinput_idle /
 * xinput_forget, which give them back.
 * Invariants: a spare keycode is never rebound until QUIET_MS after its
 * last key event reached the server (clients translate lazily after
 * MappingNotify), and a free one is always taken before a bound one is
 * rebound; when a call returns, the map holds what it held on entry plus
 * the bindings kept for later calls, which xinput_idle (after idle_ms
 * without use) or xinput_forget put back as they were (NoSymbol, or a
 * borrowed keycode's own row).
 *
 * Does not: parse text or key names, or send anything but the key events
 * of xkm_tap and the mapping changes of the pool.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

#include "core/util.h"
#include "xerr.h"
#include "xinput.h"
#include "xinput_int.h"

/* Columns of the core keyboard map, in XKB's canonical order: 0 = group 1
 * level 1, 1 = level 2 (Shift), 4 = level 3 (ISO_Level3_Shift), 5 = level 4.
 * Columns 2-3 are group 2, which this module does not switch to. */
static const struct {
	int col;
	unsigned need;
} columns[] = {
	{ 0, 0 },
	{ 1, NEED_SHIFT },
	{ 4, NEED_LEVEL3 },
	{ 5, NEED_SHIFT | NEED_LEVEL3 },
};

/* ---- keyboard map ----------------------------------------------------- */

/* The spare keycodes this module bound on one display, kept across calls
 * (see the invariants at the top). Reached through `caches` under
 * caches_lock; the contents are only touched by the thread holding the
 * Display (the caller's lease). */
#define ORIG_COLS 8         /* a borrowed keycode's row kept (Xvfb's map has 7 columns) */
#define VENDOR_LO 0x1008FF00UL  /* XF86 vendor keysyms: what a borrowed keycode carries */
#define VENDOR_HI 0x1008FFFFUL

struct kslot {
	KeyCode kc;
	int lvl;                /* 0: typed alone; 1: with Shift (xinput_int.h) */
	KeySym sym;             /* bound at that level of kc */
	int64_t used_ms;        /* when its last key event reached the server */
	int norig;              /* columns of orig; 0: kc had no symbol */
	KeySym orig[ORIG_COLS]; /* kc's row before we bound it */
};

struct kcache {
	Display *d;
	int n;
	struct kslot slot[POOL_MAX];
	int64_t last_ms;        /* the latest used_ms (0: none) */
};

static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kcache *caches[CACHE_MAX];

/* d's cache, created if `create` and there is room; NULL otherwise. */
static struct kcache *
cache_get(Display *d, bool create)
{
	struct kcache *c = NULL;
	int room = -1;

	pthread_mutex_lock(&caches_lock);
	for (int i = 0; i < CACHE_MAX && c == NULL; i++) {
		if (caches[i] != NULL && caches[i]->d == d)
			c = caches[i];
		else if (caches[i] == NULL && room < 0)
			room = i;
	}
	if (c == NULL && create && room >= 0) {
		c = xcalloc(1, sizeof *c);
		c->d = d;
		caches[room] = c;
	}
	pthread_mutex_unlock(&caches_lock);
	return c;
}

KeySym
xkm_at(const struct keymap *km, int kc, int col)
{
	return km->syms[(size_t)(kc - km->min) * (size_t)km->per + (size_t)col];
}

KeyCode
xkm_find_col0(const struct keymap *km, KeySym sym)
{
	for (int k = km->min; k <= km->max; k++)
		if (xkm_at(km, k, 0) == sym)
			return (KeyCode)k;
	return 0;
}

/* True if the server's map still has kc bound to s0 (alone) and s1 (with
 * Shift; NoSymbol: s0 in both) as pool_write left it (XKB may copy the pair
 * into the group 2 columns, and reads a pair of one keysym back as one
 * level). */
static bool
still_bound(const struct keymap *km, int kc, KeySym s0, KeySym s1)
{
	if (s1 == NoSymbol)
		s1 = s0;
	if (kc < km->min || kc > km->max || xkm_at(km, kc, 0) != s0)
		return false;
	if (km->per > 1 && xkm_at(km, kc, 1) != s1 && !(s1 == s0 && xkm_at(km, kc, 1) == NoSymbol))
		return false;
	for (int c = 2; c < km->per; c++)
		if (xkm_at(km, kc, c) != s0 && xkm_at(km, kc, c) != s1 && xkm_at(km, kc, c) != NoSymbol)
			return false;
	return true;
}

/* What the cache holds bound to kc at level lvl, or NoSymbol. */
static KeySym
cache_sym(const struct kcache *c, KeyCode kc, int lvl)
{
	for (int i = 0; i < c->n; i++)
		if (c->slot[i].kc == kc && c->slot[i].lvl == lvl)
			return c->slot[i].sym;
	return NoSymbol;
}

static bool
all_empty(const struct keymap *km, int kc)
{
	for (int c = 0; c < km->per; c++)
		if (xkm_at(km, kc, c) != NoSymbol)
			return false;
	return true;
}

static int
map_read(Display *d, struct keymap *km, struct derr *e)
{
	XDisplayKeycodes(d, &km->min, &km->max);
	if (km->min < 8 || km->max > 255 || km->min > km->max)
		return derr_set(e, DERR_INTERNAL, NULL, "the X server reports no keycodes");
	xerr_begin();
	km->syms = XGetKeyboardMapping(d, (KeyCode)km->min, km->max - km->min + 1, &km->per);
	if (xerr_end(d, e, "read keyboard map") != 0 || km->syms == NULL || km->per < 1) {
		bool xfailed = xerr_last() != 0 || xerr_io_dead(d);

		if (km->syms != NULL)
			XFree(km->syms);
		km->syms = NULL;
		if (!xfailed)
			derr_set(e, DERR_INTERNAL, NULL, "cannot read the keyboard map");
		return -1;
	}
	return 0;
}

/* A keycode the pool may borrow: every symbol it has is a vendor keysym
 * (XF86 0x1008FFxx), it has one, its row fits a kslot, and no modifier
 * uses it. */
static bool
borrowable(const struct keymap *km, int kc, const XModifierKeymap *mm)
{
	bool any = false;

	if (km->per > ORIG_COLS)
		return false;
	for (int c = 0; c < km->per; c++) {
		KeySym s = xkm_at(km, kc, c);

		if (s != NoSymbol && (s < VENDOR_LO || s > VENDOR_HI))
			return false;
		any = any || s != NoSymbol;
	}
	for (int i = 0; any && mm != NULL && i < 8 * mm->max_keypermod; i++)
		if (mm->modifiermap[i] == kc)
			return false;
	return any;
}

/* Adds the borrowable keycodes to the pool after the empty ones (a free
 * empty keycode is taken first), blanked in km->syms like every pool
 * keycode: a vendor keysym asked for is then bound like a missing one. */
static void
pool_borrow(struct keymap *km)
{
	XModifierKeymap *mm = XGetModifierMapping(km->d);

	if (mm == NULL)
		return;         /* no modifier map: borrow nothing */
	for (int k = km->min; k <= km->max && km->npool < POOL_MAX; k++) {
		bool taken = false;

		for (int s = 0; s < km->npool && !taken; s++)
			taken = km->pool[s] == k;
		if (taken || !borrowable(km, k, mm))
			continue;
		for (int col = 0; col < km->per; col++)
			km->syms[(size_t)(k - km->min) * (size_t)km->per + (size_t)col] = NoSymbol;
		km->pool[km->npool++] = (KeyCode)k;
	}
	XFreeModifiermap(mm);
}

/* The slot of kc at level lvl, or -1. */
static int
slot_of(const struct keymap *km, KeyCode kc, int lvl)
{
	for (int s = 0; s < km->npool; s++)
		if (km->pool[s] == kc && km->lvl[s] == lvl)
			return s;
	return -1;
}

/* With a Shift key, every pool keycode also types a second keysym with
 * Shift held: slots of level 1, after every level 0 one (a keycode's plain
 * level is taken first). Twice the keysyms before any rebinding. */
static void
pool_shifted(struct keymap *km)
{
	int n = km->npool;

	if (km->shift == 0)
		return;
	for (int s = 0; s < n && km->npool < POOL_MAX; s++)
		if (km->lvl[s] == 0 && slot_of(km, km->pool[s], 1) < 0) {
			km->pool[km->npool] = km->pool[s];
			km->lvl[km->npool++] = 1;
		}
}

/* Reads the map, finds Shift and Level3, and builds the pool: the keycodes
 * the cache holds that still carry their binding (blanked in km->syms, so
 * map_find never returns them), every keycode with no symbol at all, the
 * borrowable ones (pool_borrow), then each at Shift's level (pool_shifted).
 * Bindings someone else changed since are dropped from the cache. */
int
xkm_load(Display *d, struct keymap *km, struct derr *e)
{
	struct kcache *c;
	size_t norig;

	memset(km, 0, sizeof *km);
	km->d = d;
	c = cache_get(d, true);
	if (c == NULL)
		return derr_set(e, DERR_UNAVAILABLE, NULL,
		    "more than %d displays take keyboard input at once", CACHE_MAX);
	km->cache = c;
	if (map_read(d, km, e) != 0)
		return -1;
	norig = (size_t)(km->max - km->min + 1) * (size_t)km->per;
	km->orig = xmalloc(norig * sizeof *km->orig);
	memcpy(km->orig, km->syms, norig * sizeof *km->orig);
	km->shift = xkm_find_col0(km, XK_Shift_L);
	if (km->shift == 0)
		km->shift = xkm_find_col0(km, XK_Shift_R);
	km->level3 = xkm_find_col0(km, XK_ISO_Level3_Shift);
	for (int i = 0; i < c->n && km->npool < POOL_MAX; i++) {
		const struct kslot *s = &c->slot[i];

		if (!still_bound(km, s->kc, cache_sym(c, s->kc, 0), cache_sym(c, s->kc, 1)))
			continue;
		for (int col = 0; col < km->per; col++) {
			size_t at = (size_t)(s->kc - km->min) * (size_t)km->per + (size_t)col;

			km->syms[at] = NoSymbol;
			km->orig[at] = col < s->norig ? s->orig[col] : NoSymbol;
		}
		km->pool[km->npool] = s->kc;
		km->lvl[km->npool] = s->lvl;
		km->bound[km->npool] = s->sym;
		km->used[km->npool] = s->used_ms;
		km->npool++;
	}
	km->nowned = km->npool;
	for (int k = km->min; k <= km->max && km->npool < POOL_MAX; k++) {
		bool owned = false;

		for (int s = 0; s < km->nowned; s++)
			owned = owned || km->pool[s] == k;
		if (!owned && all_empty(km, k))
			km->pool[km->npool++] = (KeyCode)k;
	}
	pool_borrow(km);
	pool_shifted(km);
	return 0;
}

/* The keycode that types sym from the map (outside the pool), and what
 * must be held with it. */
bool
xkm_find(const struct keymap *km, KeySym sym, KeyCode *kc, unsigned *need)
{
	for (size_t c = 0; c < ARRAY_LEN(columns); c++) {
		int col = columns[c].col;
		unsigned n = columns[c].need;

		if (col >= km->per || ((n & NEED_SHIFT) && km->shift == 0) ||
		    ((n & NEED_LEVEL3) && km->level3 == 0))
			continue;
		for (int k = km->min; k <= km->max; k++)
			if (xkm_at(km, k, col) == sym) {
				*kc = (KeyCode)k;
				*need = n;
				return true;
			}
	}
	return false;
}

int
xkm_pool_find(const struct keymap *km, KeySym sym)
{
	for (int s = 0; s < km->npool; s++)
		if (km->bound[s] == sym)
			return s;
	return -1;
}

unsigned
xkm_pool_need(const struct keymap *km, int slot)
{
	return km->lvl[slot] == 1 ? NEED_SHIFT : 0;
}

/* Binds sym to a pool keycode not used by batch `stamp`: a free one, else
 * the least recently used binding, if its last key event reached the server
 * QUIET_MS ago or more. Returns the slot, or -1 with *wait_ms > 0 (retry
 * after that long) or 0 (every keycode is in this batch). */
int
xkm_pool_take(struct keymap *km, KeySym sym, unsigned stamp, int *wait_ms)
{
	int best = -1;
	int64_t now = mono_us() / 1000;

	*wait_ms = 0;
	for (int s = 0; s < km->npool; s++) {
		if (km->stamp[s] == stamp)
			continue;
		if (km->bound[s] == NoSymbol) {
			best = s;
			break;
		}
		if (best < 0 || km->used[s] < km->used[best])
			best = s;
	}
	if (best < 0)
		return -1;
	if (km->bound[best] != NoSymbol && now - km->used[best] < QUIET_MS) {
		*wait_ms = (int)(km->used[best] + QUIET_MS - now);
		return -1;
	}
	km->bound[best] = sym;
	km->stamp[best] = stamp;
	km->dirty[best] = true;
	return best;
}

/* Marks the slots of batch `stamp` used now: call once its key events
 * reached the server (after an XSync). */
void
xkm_pool_used(struct keymap *km, unsigned stamp)
{
	int64_t now = mono_us() / 1000;

	for (int s = 0; s < km->npool; s++)
		if (km->stamp[s] == stamp && km->bound[s] != NoSymbol)
			km->used[s] = now;
}

/* Sends the pending bindings, one keysym in both levels so neither Shift
 * nor a lower/upper case pair changes it. Inside the caller's error
 * bracket; the key events that follow on this connection are processed
 * after it, and every client gets its MappingNotify before them. */
void
xkm_pool_write(struct keymap *km)
{
	int64_t now = mono_us() / 1000;

	for (int s = 0; s < km->npool; s++) {
		int s0 = slot_of(km, km->pool[s], 0), s1 = slot_of(km, km->pool[s], 1);
		KeySym two[2];

		if (!km->dirty[s])
			continue;
		two[0] = s0 >= 0 ? km->bound[s0] : NoSymbol;
		two[1] = s1 >= 0 ? km->bound[s1] : NoSymbol;
		if (two[0] == NoSymbol)
			two[0] = two[1];
		if (two[1] == NoSymbol)
			two[1] = two[0];
		XChangeKeyboardMapping(km->d, km->pool[s], 2, two, 1);
		for (int k = 0; k < 2; k++) {
			int sk = k == 0 ? s0 : s1;

			if (sk >= 0 && km->dirty[sk]) {
				km->dirty[sk] = false;
				km->used[sk] = now;     /* in case no key follows (an error) */
			}
		}
	}
}

/* Our own MappingNotify events would pile up in the queue of a connection
 * nobody reads events from. */
static void
drain_mapping(Display *d)
{
	XEvent ev;

	while (XCheckTypedEvent(d, MappingNotify, &ev))
		XRefreshKeyboardMapping(&ev.xmapping);
}

/* kc's row before we bound it (km->orig) into slot: no columns when it had
 * no symbol. */
static void
slot_orig(const struct keymap *km, KeyCode kc, struct kslot *slot)
{
	const KeySym *row = km->orig + (size_t)(kc - km->min) * (size_t)km->per;

	slot->norig = 0;
	for (int col = 0; col < km->per; col++)
		if (row[col] != NoSymbol)
			slot->norig = km->per;
	if (slot->norig > ORIG_COLS)
		slot->norig = 0;        /* not borrowable (borrowable()): it had none */
	for (int col = 0; col < slot->norig; col++)
		slot->orig[col] = row[col];
}

/* Keeps the pool's bindings in the display's cache (nothing is restored
 * here: see xinput_idle) and frees the map. */
void
xkm_done(struct keymap *km)
{
	struct kcache *c = km->cache;

	if (c != NULL) {
		c->n = 0;
		for (int s = 0; s < km->npool; s++) {
			if (km->bound[s] == NoSymbol || km->dirty[s])
				continue;
			c->slot[c->n].kc = km->pool[s];
			c->slot[c->n].lvl = km->lvl[s];
			c->slot[c->n].sym = km->bound[s];
			c->slot[c->n].used_ms = km->used[s];
			slot_orig(km, km->pool[s], &c->slot[c->n]);
			if (km->used[s] > c->last_ms)
				c->last_ms = km->used[s];
			c->n++;
		}
		if (!xerr_io_dead(km->d))
			drain_mapping(km->d);
	}
	if (km->syms != NULL)
		XFree(km->syms);
	km->syms = NULL;
	free(km->orig);
	km->orig = NULL;
}

/* Puts the cache's keycodes that still carry our binding back as they were
 * before we bound them (NoSymbol, or a borrowed keycode's row) and empties
 * the cache. */
static void
cache_restore(Display *d, struct kcache *c)
{
	struct keymap km;
	struct derr e;
	KeySym none[2] = { NoSymbol, NoSymbol };

	memset(&km, 0, sizeof km);
	if (c->n > 0 && !xerr_io_dead(d) && map_read(d, &km, &e) == 0) {
		xerr_begin();
		for (int i = 0; i < c->n; i++) {
			struct kslot *s = &c->slot[i];   /* XChangeKeyboardMapping takes no const */
			bool again = false;

			for (int k = 0; k < i; k++)
				again = again || c->slot[k].kc == s->kc;
			if (again || !still_bound(&km, s->kc, cache_sym(c, s->kc, 0), cache_sym(c, s->kc, 1)))
				continue;
			if (s->norig > 0)
				XChangeKeyboardMapping(d, s->kc, s->norig, s->orig, 1);
			else
				XChangeKeyboardMapping(d, s->kc, 2, none, 1);
		}
		XSync(d, False);
		drain_mapping(d);
		xerr_end(d, &e, "restore keyboard map");
		XFree(km.syms);
	}
	c->n = 0;
	c->last_ms = 0;
}

int
xinput_idle(Display *d, int idle_ms)
{
	struct kcache *c = cache_get(d, false);

	if (c == NULL || c->n == 0 || mono_us() / 1000 - c->last_ms < idle_ms)
		return 0;
	cache_restore(d, c);
	return 1;
}

void
xinput_forget(Display *d)
{
	struct kcache *c = cache_get(d, false);

	if (c == NULL)
		return;
	cache_restore(d, c);
	pthread_mutex_lock(&caches_lock);
	for (int i = 0; i < CACHE_MAX; i++)
		if (caches[i] == c)
			caches[i] = NULL;
	pthread_mutex_unlock(&caches_lock);
	free(c);
}

/* Presses kc with what it needs held, releases in reverse. */
void
xkm_tap(const struct keymap *km, KeyCode kc, unsigned need)
{
	Display *d = km->d;

	if (need & NEED_SHIFT)
		XTestFakeKeyEvent(d, km->shift, True, 0);
	if (need & NEED_LEVEL3)
		XTestFakeKeyEvent(d, km->level3, True, 0);
	XTestFakeKeyEvent(d, kc, True, 0);
	XTestFakeKeyEvent(d, kc, False, 0);
	if (need & NEED_LEVEL3)
		XTestFakeKeyEvent(d, km->level3, False, 0);
	if (need & NEED_SHIFT)
		XTestFakeKeyEvent(d, km->shift, False, 0);
}
