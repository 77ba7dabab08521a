#!/usr/bin/python3
# app.py - the application the dialect suite's scripted models drive: a
# GTK 3 window "Dialect Target" at (0, 0) with a button, an entry (an
# address bar: ctrl+L focuses and clears it, Enter reports its text) and a
# pad that reports every pointer event. It writes what it saw, one JSON
# object a line, to the file named by its first argument (flushed at once):
#   {"ev":"ready", "button":[x,y,w,h], "entry":[...], "pad":[...]}  screen px
#   {"ev":"clicked"}                        the button was activated
#   {"ev":"activate", "text":...}           Enter in the entry
#   {"ev":"press", "button":N, "n":1|2|3, "x","y", "mods":[...]}  pad px
#   {"ev":"release", "button":N, "x","y"}
#   {"ev":"scroll", "dir":"up|down|left|right", "x","y", "mods":[...]}
#   {"ev":"key", "name":..., "mods":[...], "t":s} / {"ev":"keyup", ...}
# Run with /usr/bin/python3 (python3-gi).
import json
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

out = open(sys.argv[1], "a", buffering=1)


def emit(**kw):
    kw["t"] = round(time.monotonic(), 4)
    out.write(json.dumps(kw) + "\n")


def mods(state):
    m = []
    for bit, name in ((Gdk.ModifierType.SHIFT_MASK, "shift"),
                      (Gdk.ModifierType.CONTROL_MASK, "ctrl"),
                      (Gdk.ModifierType.MOD1_MASK, "alt")):
        if state & bit:
            m.append(name)
    return m


win = Gtk.Window(title="Dialect Target")
win.set_default_size(900, 600)
win.move(0, 0)
grid = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
button = Gtk.Button(label="Press")
button.connect("clicked", lambda b: emit(ev="clicked"))
entry = Gtk.Entry()
entry.connect("activate", lambda w: emit(ev="activate", text=w.get_text()))
pad = Gtk.DrawingArea()
pad.set_size_request(880, 480)
pad.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.BUTTON_RELEASE_MASK |
               Gdk.EventMask.SCROLL_MASK | Gdk.EventMask.SMOOTH_SCROLL_MASK |
               Gdk.EventMask.POINTER_MOTION_MASK)
TYPES = {Gdk.EventType.BUTTON_PRESS: 1, Gdk.EventType._2BUTTON_PRESS: 2,
         Gdk.EventType._3BUTTON_PRESS: 3}


def on_press(w, ev):
    emit(ev="press", button=ev.button, n=TYPES.get(ev.type, 0), x=round(ev.x), y=round(ev.y),
         mods=mods(ev.state))
    return True


def on_release(w, ev):
    emit(ev="release", button=ev.button, x=round(ev.x), y=round(ev.y))
    return True


def on_scroll(w, ev):
    d = {Gdk.ScrollDirection.UP: "up", Gdk.ScrollDirection.DOWN: "down",
         Gdk.ScrollDirection.LEFT: "left", Gdk.ScrollDirection.RIGHT: "right"}.get(ev.direction)
    if d is None:       # smooth: report by the sign of the delta
        ok, dx, dy = ev.get_scroll_deltas()
        d = "down" if dy > 0 else "up" if dy < 0 else "right" if dx > 0 else "left"
    emit(ev="scroll", dir=d, x=round(ev.x), y=round(ev.y), mods=mods(ev.state))
    return True


pad.connect("button-press-event", on_press)
pad.connect("button-release-event", on_release)
pad.connect("scroll-event", on_scroll)


def on_key(w, ev):
    name = Gdk.keyval_name(ev.keyval)
    emit(ev="key", name=name, mods=mods(ev.state))
    if name in ("l", "L") and ev.state & Gdk.ModifierType.CONTROL_MASK:
        entry.grab_focus()
        entry.set_text("")
        return True
    return False


win.connect("key-press-event", on_key)
win.connect("key-release-event",
            lambda w, ev: emit(ev="keyup", name=Gdk.keyval_name(ev.keyval)) and False)
grid.pack_start(button, False, False, 0)
grid.pack_start(entry, False, False, 0)
grid.pack_start(pad, True, True, 0)
win.add(grid)
win.connect("destroy", Gtk.main_quit)
win.show_all()


def ready():
    ox, oy = win.get_window().get_origin()[1:]

    def rect(widget):
        a = widget.get_allocation()
        x, y = widget.translate_coordinates(win, 0, 0)
        return [ox + x, oy + y, a.width, a.height]

    emit(ev="ready", button=rect(button), entry=rect(entry), pad=rect(pad))
    return False


win.connect("map-event", lambda w, e: GLib.timeout_add(200, ready) and False)
Gtk.main()
