/*
 * xinput_keys.c - text and key chords through XTest: xinput_type (UTF-8 to
 * keysyms, typed in chunks, bound to spare keycodes when the map lacks
 * them), xinput_keys ("ctrl+shift+t", "ctrl+a BackSpace": names to
 * keysyms, modifiers held, every key released in reverse order) and
 * xinput_keys_hold (one chord pressed, or released, across calls).
 *
 * Invariants: text is at most TYPE_MAX_BYTES and synced every TYPE_CHUNK
 * characters; a combo is at most KEYS_MAX_BYTES, KEYS_MAX_CHORDS chords and
 * CHORD_MAX_KEYS names per chord; whatever fails, every key xinput_keys
 * pressed is released in the same call (xinput_keys_hold's caller releases
 * what it held).
 *
 * Does not: own the keyboard map (xinput_keymap.c) or move the pointer.
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
#include "humanize.h"
#include "xerr.h"
#include "xinput.h"
#include "xinput_int.h"

/* ---- text ------------------------------------------------------------- */

/* Next code point of valid UTF-8 at s[*i], advancing *i. */
static uint32_t
utf8_next(const char *s, size_t *i)
{
	const unsigned char *u = (const unsigned char *)s + *i;
	uint32_t cp;
	size_t n;

	if (u[0] < 0x80) {
		cp = u[0];
		n = 0;
	} else if ((u[0] & 0xe0) == 0xc0) {
		cp = u[0] & 0x1fu;
		n = 1;
	} else if ((u[0] & 0xf0) == 0xe0) {
		cp = u[0] & 0x0fu;
		n = 2;
	} else {
		cp = u[0] & 0x07u;
		n = 3;
	}
	for (size_t k = 1; k <= n; k++)
		cp = (cp << 6) | (u[k] & 0x3fu);
	*i += n + 1;
	return cp;
}

/* The keysym that types code point cp, or NoSymbol for a control character
 * with no key. */
static KeySym
cp_keysym(uint32_t cp)
{
	switch (cp) {
	case '\n':
	case '\r':
		return XK_Return;
	case '\t':
		return XK_Tab;
	case '\b':
		return XK_BackSpace;
	case 0x1b:
		return XK_Escape;
	case 0x7f:
		return XK_Delete;
	default:
		break;
	}
	if (cp < 0x20 || (cp >= 0x80 && cp < 0xa0))
		return NoSymbol;
	if (cp < 0x100)
		return (KeySym)cp;              /* Latin-1 keysyms are the code point */
	return (KeySym)(0x01000000u | cp);
}

/* Text -> keysyms ("\r\n" is one Return). *out is xmalloc'd. */
static int
text_keysyms(const char *s, size_t len, KeySym **out, size_t *n, struct derr *e)
{
	KeySym *syms;
	size_t i = 0, k = 0;

	if (len > TYPE_MAX_BYTES)
		return derr_set(e, DERR_INVALID, "text", "text is longer than %d bytes",
		    TYPE_MAX_BYTES);
	if (len > 0 && (s == NULL || !utf8_valid(s, len)))
		return derr_set(e, DERR_INVALID, "text", "text is not valid UTF-8");
	syms = xmalloc((len + 1) * sizeof *syms);
	while (i < len) {
		size_t at = i;
		uint32_t cp = utf8_next(s, &i);
		KeySym sym = cp_keysym(cp);

		if (sym == NoSymbol) {
			free(syms);
			return derr_set(e, DERR_INVALID, "text",
			    "text has control character U+%04X at byte %zu, which no key types",
			    (unsigned)cp, at);
		}
		if (cp == '\n' && at > 0 && s[at - 1] == '\r')
			continue;
		syms[k++] = sym;
	}
	*out = syms;
	*n = k;
	return 0;
}

/* Plans keys syms[i..*end) as batch `stamp`: at most `chunk` of them, with
 * pool keycodes bound as needed. *end == i with *wait_ms > 0: nothing can
 * be planned before a binding has been quiet that long. */
static int
plan_chunk(struct keymap *km, const KeySym *syms, size_t i, size_t n, size_t chunk,
    unsigned stamp, size_t *end, int *wait_ms, struct derr *e)
{
	size_t k = i;

	*wait_ms = 0;
	while (k < n && k - i < chunk) {
		KeyCode kc;
		unsigned need;
		int slot;

		if (xkm_find(km, syms[k], &kc, &need)) {
			k++;
			continue;
		}
		slot = xkm_pool_find(km, syms[k]);
		if (slot < 0 && km->npool == 0)
			return derr_set(e, DERR_INTERNAL, NULL,
			    "the keyboard map has no spare keycode to type keysym 0x%lx",
			    (unsigned long)syms[k]);
		if (slot < 0 && (slot = xkm_pool_take(km, syms[k], stamp, wait_ms)) < 0)
			break;
		km->stamp[slot] = stamp;
		k++;
	}
	if (k == i && *wait_ms <= 0)
		return derr_set(e, DERR_INTERNAL, NULL, "no spare keycode is free");
	*end = k;
	return 0;
}

int
xinput_type(Display *d, const char *s, size_t len, size_t *sent, struct derr *e)
{
	struct keymap km;
	KeySym *syms = NULL;
	size_t n = 0, i = 0;
	unsigned stamp = 0;
	bool loaded = false, slow = humanize_enabled();
	size_t chunk = slow ? 1 : TYPE_CHUNK;
	uint64_t rng = humanize_seed();
	int rc = -1;

	if (sent != NULL)
		*sent = 0;
	if (text_keysyms(s, len, &syms, &n, e) != 0)
		return -1;
	if (slow && n > HUMANIZE_TYPE_MAX) {
		derr_set(e, DERR_INVALID, "text",
		    "humanized typing takes at most %d characters per call (about %d s); "
		    "split the text or turn humanize off", HUMANIZE_TYPE_MAX,
		    HUMANIZE_TYPE_MAX * 130 / 1000);
		goto out;
	}
	if (xkm_load(d, &km, e) != 0)
		goto out;
	loaded = true;
	while (i < n) {
		size_t end = i;
		int wait_ms = 0;

		if (plan_chunk(&km, syms, i, n, chunk, ++stamp, &end, &wait_ms, e) != 0)
			goto out;
		if (end == i) {
			/* More distinct keysyms than spare keycodes: every
			 * binding is in use; the text waits until the oldest
			 * has been quiet for QUIET_MS. */
			sleep_ms(wait_ms);
			continue;
		}
		xerr_begin();
		xkm_pool_write(&km);
		for (; i < end; i++) {
			KeyCode kc;
			unsigned need = 0;

			if (!xkm_find(&km, syms[i], &kc, &need)) {
				int slot = xkm_pool_find(&km, syms[i]);

				kc = km.pool[slot];
				need = xkm_pool_need(&km, slot);
			}
			xkm_tap(&km, kc, need);
		}
		if (xerr_end(d, e, "type") != 0)
			goto out;
		xkm_pool_used(&km, stamp);
		if (sent != NULL)
			*sent = i;
		if (slow && i < n)
			sleep_ms(humanize_key_gap_ms(&rng,
			    syms[i - 1] == XK_space || syms[i - 1] == XK_Return));
	}
	rc = 0;
out:
	if (loaded)
		xkm_done(&km);
	free(syms);
	return rc;
}

/* ---- key chords ------------------------------------------------------- */

struct key {
	KeySym sym;
	bool modifier;
};

struct chord {
	int n;
	struct key keys[CHORD_MAX_KEYS];
};

static const struct {
	const char *name;
	KeySym sym;
} modifier_names[] = {
	{ "ctrl", XK_Control_L }, { "control", XK_Control_L },
	{ "shift", XK_Shift_L },
	{ "alt", XK_Alt_L },
	{ "meta", XK_Meta_L },
	{ "super", XK_Super_L }, { "win", XK_Super_L }, { "cmd", XK_Super_L },
	{ "hyper", XK_Hyper_L },
	{ "altgr", XK_ISO_Level3_Shift },
};

/* Case-insensitive fallbacks for names XStringToKeysym does not know as
 * written. */
static const struct {
	const char *name;
	KeySym sym;
} key_names[] = {
	{ "enter", XK_Return }, { "return", XK_Return },
	{ "esc", XK_Escape }, { "escape", XK_Escape },
	{ "del", XK_Delete }, { "delete", XK_Delete },
	{ "pgup", XK_Prior }, { "pageup", XK_Prior }, { "prior", XK_Prior },
	{ "pgdn", XK_Next }, { "pagedown", XK_Next }, { "next", XK_Next },
	{ "space", XK_space }, { "tab", XK_Tab },
	{ "backspace", XK_BackSpace }, { "bksp", XK_BackSpace },
	{ "up", XK_Up }, { "down", XK_Down }, { "left", XK_Left }, { "right", XK_Right },
	{ "home", XK_Home }, { "end", XK_End },
	{ "insert", XK_Insert }, { "ins", XK_Insert },
	{ "menu", XK_Menu }, { "print", XK_Print }, { "pause", XK_Pause },
	{ "capslock", XK_Caps_Lock }, { "numlock", XK_Num_Lock },
	{ "scrolllock", XK_Scroll_Lock },
	{ "plus", XK_plus }, { "minus", XK_minus },
	{ "ctrl_l", XK_Control_L }, { "ctrl_r", XK_Control_R },
	{ "shift_l", XK_Shift_L }, { "shift_r", XK_Shift_R },
	{ "alt_l", XK_Alt_L }, { "alt_r", XK_Alt_R },
	{ "super_l", XK_Super_L }, { "super_r", XK_Super_R },
};

/* One key name -> keysym; NoSymbol if unknown. */
static KeySym
name_keysym(const char *name, bool *modifier)
{
	KeySym sym;
	size_t len = strlen(name);

	*modifier = false;
	for (size_t i = 0; i < ARRAY_LEN(modifier_names); i++)
		if (strcasecmp(name, modifier_names[i].name) == 0) {
			*modifier = true;
			return modifier_names[i].sym;
		}
	sym = XStringToKeysym(name);
	if (sym == NoSymbol) {
		for (size_t i = 0; i < ARRAY_LEN(key_names); i++)
			if (strcasecmp(name, key_names[i].name) == 0) {
				sym = key_names[i].sym;
				break;
			}
	}
	if (sym == NoSymbol && (name[0] == 'f' || name[0] == 'F') && len >= 2 && len <= 3) {
		int num = 0;

		for (size_t i = 1; i < len; i++)
			num = name[i] >= '0' && name[i] <= '9' ? num * 10 + (name[i] - '0') : -1000;
		if (num >= 1 && num <= 35)
			sym = XK_F1 + (KeySym)(num - 1);
	}
	if (sym == NoSymbol && len > 0 && len <= 4 && utf8_valid(name, len)) {
		size_t i = 0;
		uint32_t cp = utf8_next(name, &i);

		if (i == len && cp >= 0x20)
			sym = cp_keysym(cp);
	}
	if (sym != NoSymbol && IsModifierKey(sym))
		*modifier = true;
	return sym;
}

/* Parses "ctrl+shift+t alt+F4 Return" into chords. A '+' where a key name
 * starts is the key '+' ("ctrl++"). */
static int
parse_combo(const char *combo, struct chord *chords, int *nchords, struct derr *e)
{
	const char *p = combo;
	int nc = 0;

	if (combo == NULL || strlen(combo) > KEYS_MAX_BYTES)
		return derr_set(e, DERR_INVALID, "keys", "keys must be 1..%d bytes",
		    KEYS_MAX_BYTES);
	for (;;) {
		struct chord *c;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		if (nc == KEYS_MAX_CHORDS)
			return derr_set(e, DERR_INVALID, "keys", "at most %d chords at once",
			    KEYS_MAX_CHORDS);
		c = &chords[nc++];
		c->n = 0;
		for (;;) {
			char name[KEY_NAME_MAX + 1];
			const char *start = p;
			size_t len;
			KeySym sym;
			bool modifier;

			if (*p == '+')
				p++;
			else
				while (*p != '\0' && *p != '+' && *p != ' ' && *p != '\t' && *p != '\n')
					p++;
			len = (size_t)(p - start);
			if (len == 0)
				return derr_set(e, DERR_INVALID, "keys",
				    "empty key name in \"%.*s\"", utf8_prec(combo, 100), combo);
			if (len > KEY_NAME_MAX)
				return derr_set(e, DERR_INVALID, "keys", "key name \"%.*s...\" is too long",
				    32, start);
			memcpy(name, start, len);
			name[len] = '\0';
			sym = name_keysym(name, &modifier);
			if (sym == NoSymbol)
				return derr_set(e, DERR_INVALID, "keys", "unknown key name \"%s\"", name);
			if (c->n == CHORD_MAX_KEYS)
				return derr_set(e, DERR_INVALID, "keys", "at most %d keys in one chord",
				    CHORD_MAX_KEYS);
			c->keys[c->n].sym = sym;
			c->keys[c->n].modifier = modifier;
			c->n++;
			if (*p != '+')
				break;
			p++;                    /* the separator */
			if (*p == '\0' || *p == ' ' || *p == '\t' || *p == '\n')
				return derr_set(e, DERR_INVALID, "keys",
				    "\"%.*s\" ends a chord with '+'", utf8_prec(combo, 100), combo);
		}
	}
	if (nc == 0)
		return derr_set(e, DERR_INVALID, "keys", "no key given");
	*nchords = nc;
	return 0;
}

int
xinput_keys_check(const char *combo, struct derr *e)
{
	struct chord *chords = xcalloc(KEYS_MAX_CHORDS, sizeof *chords);
	int n = 0, rc = parse_combo(combo, chords, &n, e);

	free(chords);
	return rc;
}

int
xinput_type_check(const char *s, size_t len, struct derr *e)
{
	KeySym *syms = NULL;
	size_t n = 0;

	if (text_keysyms(s, len, &syms, &n, e) != 0)
		return -1;
	free(syms);
	return 0;
}

/* A modifier keysym: the key that has it in column 0; else, when a key
 * carries it at another level (Xvfb: Meta_L, Hyper_L), a column-0 modifier
 * key bound to the same modifier bit (Mod1 for Meta, Mod4 for Hyper), since
 * that bit is what applications see; else a key in the modifier map that
 * carries it at any level, pressed as is. */
static bool
modifier_find(const struct keymap *km, const XModifierKeymap *mm, KeySym sym,
    KeyCode *kc)
{
	int per = mm->max_keypermod;

	*kc = xkm_find_col0(km, sym);
	if (*kc != 0)
		return true;
	for (int c = 1; c < km->per; c++)
		for (int k = km->min; k <= km->max; k++) {
			if (xkm_at(km, k, c) != sym)
				continue;
			for (int row = 0; row < 8; row++) {
				bool has = false;

				for (int j = 0; j < per; j++)
					if (mm->modifiermap[row * per + j] == k)
						has = true;
				if (!has)
					continue;
				for (int j = 0; j < per; j++) {
					KeyCode o = mm->modifiermap[row * per + j];

					if (o >= km->min && o <= km->max &&
					    IsModifierKey(xkm_at(km, o, 0))) {
						*kc = o;
						return true;
					}
				}
				*kc = (KeyCode)k;
				return true;
			}
		}
	return false;
}

static bool
pressed_has(const KeyCode *list, int n, KeyCode kc)
{
	for (int i = 0; i < n; i++)
		if (list[i] == kc)
			return true;
	return false;
}

/* Where key k of the combo goes: keycode and what it needs held. */
struct resolved {
	KeyCode kc;
	unsigned need;
};

/* Resolves every key of chords[0..nchords) to a keycode (binding spares
 * as one batch, written before returning) into res, in order. Nothing is
 * sent. 0, or -1 with e (too many keys missing from the map). */
static int
keys_resolve(struct keymap *km, XModifierKeymap *mm, const struct chord *chords, int nchords,
    struct resolved *res, struct derr *e)
{
	int nkeys = 0;

	for (int c = 0; c < nchords; c++)
		for (int k = 0; k < chords[c].n; k++) {
			const struct key *key = &chords[c].keys[k];
			struct resolved *r = &res[nkeys++];
			bool found;
			int slot, wait_ms = 0;

			r->need = 0;
			if (key->modifier)
				found = modifier_find(km, mm, key->sym, &r->kc);
			else
				found = xkm_find(km, key->sym, &r->kc, &r->need);
			if (found)
				continue;
			slot = xkm_pool_find(km, key->sym);
			while (slot < 0 && (slot = xkm_pool_take(km, key->sym, 1, &wait_ms)) < 0 &&
			    wait_ms > 0)
				sleep_ms(wait_ms);      /* nothing sent yet: safe to wait */
			if (slot < 0)
				return derr_set(e, DERR_INVALID, "keys",
				    "too many keys missing from the keyboard map (at most %d)",
				    km->npool);
			km->stamp[slot] = 1;
			r->kc = km->pool[slot];
			r->need = xkm_pool_need(km, slot);
		}
	xkm_pool_write(km);
	return 0;
}

/* The keycodes one chord presses, in order (implied Shift and Level3
 * before the key that needs them, each keycode once): *n of them. */
static void
chord_press_list(const struct keymap *km, const struct chord *c, const struct resolved *res,
    KeyCode *down, int *n)
{
	int ndown = 0;

	for (int k = 0; k < c->n; k++) {
		const struct resolved *r = &res[k];
		KeyCode want[3];
		int nwant = 0;

		if (r->need & NEED_SHIFT)
			want[nwant++] = km->shift;
		if (r->need & NEED_LEVEL3)
			want[nwant++] = km->level3;
		want[nwant++] = r->kc;
		for (int w = 0; w < nwant; w++) {
			if (ndown == CHORD_MAX_PRESS || pressed_has(down, ndown, want[w]))
				continue;
			down[ndown++] = want[w];
		}
	}
	*n = ndown;
}

/* One call of xinput_keys or xinput_keys_hold: the combo parsed, the map
 * loaded and every key resolved; keys_end undoes it. */
struct keys_call {
	struct chord *chords;
	struct resolved *res;
	XModifierKeymap *mm;
	struct keymap km;
	int nchords;
	bool loaded;
};

static int
keys_begin(Display *d, const char *combo, struct keys_call *k, struct derr *e)
{
	memset(k, 0, sizeof *k);
	k->chords = xcalloc(KEYS_MAX_CHORDS, sizeof *k->chords);
	if (parse_combo(combo, k->chords, &k->nchords, e) != 0)
		return -1;
	if (xkm_load(d, &k->km, e) != 0)
		return -1;
	k->loaded = true;
	xerr_begin();
	k->mm = XGetModifierMapping(d);
	if (k->mm == NULL)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot read the modifier map");
	k->res = xcalloc((size_t)KEYS_MAX_CHORDS * CHORD_MAX_KEYS, sizeof *k->res);
	/* Resolve everything (binding spares as one batch) before any key
	 * goes down. */
	return keys_resolve(&k->km, k->mm, k->chords, k->nchords, k->res, e);
}

/* rc: the call's outcome so far; sent: whether any key event went out. */
static int
keys_end(Display *d, struct keys_call *k, int rc, bool sent, struct derr *e)
{
	if (k->mm != NULL)
		XFreeModifiermap(k->mm);
	if (k->loaded) {
		if (rc == 0)
			rc = xerr_end(d, e, "keys");
		else
			XSync(d, False);
		if (sent)
			xkm_pool_used(&k->km, 1);
		xkm_done(&k->km);
	}
	free(k->res);
	free(k->chords);
	return rc;
}

int
xinput_keys(Display *d, const char *combo, struct derr *e)
{
	struct keys_call k;
	int rc = -1, nkeys = 0;
	bool sent = false;

	if (keys_begin(d, combo, &k, e) != 0)
		goto out;
	for (int c = 0; c < k.nchords; c++) {
		KeyCode down[CHORD_MAX_PRESS];
		int ndown = 0;

		chord_press_list(&k.km, &k.chords[c], &k.res[nkeys], down, &ndown);
		nkeys += k.chords[c].n;
		for (int i = 0; i < ndown; i++)
			XTestFakeKeyEvent(d, down[i], True, 0);
		while (ndown > 0)
			XTestFakeKeyEvent(d, down[--ndown], False, 0);
		sent = true;
	}
	rc = 0;
out:
	return keys_end(d, &k, rc, sent, e);
}

int
xinput_keys_hold(Display *d, const char *combo, int down, struct derr *e)
{
	struct keys_call k;
	KeyCode list[CHORD_MAX_PRESS];
	int rc = -1, n = 0;
	bool sent = false;

	if (keys_begin(d, combo, &k, e) != 0)
		goto out;
	if (k.nchords != 1) {
		derr_set(e, DERR_INVALID, "keys", "give one chord to hold (like ctrl+shift), not %d",
		    k.nchords);
		goto out;
	}
	chord_press_list(&k.km, &k.chords[0], k.res, list, &n);
	for (int i = 0; i < n; i++)
		XTestFakeKeyEvent(d, list[down ? i : n - 1 - i], down ? True : False, 0);
	sent = n > 0;
	rc = 0;
out:
	return keys_end(d, &k, rc, sent, e);
}
