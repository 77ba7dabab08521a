#!/usr/bin/python3
# app.py - the effect suite's GTK 3 application (python3-gi): one window
# with what the labelled set clicks and types into, and a dialog that opens
# without the focus over it. Where each widget is (its centre in root
# coordinates) goes to the JSON file named by argv[1] once everything is
# drawn; the test reads it instead of guessing pixels.
#
#   "Work" button      changes the count label below it
#   "Disabled" button  insensitive: a click does nothing
#   "Static" label     never changes
#   entry              takes typed text
#   ctrl+o             opens the dialog "Opened" (Close closes it)
#   "Dialog" button    opens "Unfocused" over the window without taking the
#                      focus (its "Change" button changes its own label)
#   F9                 bound to nothing
#   "Spinner" window   a spinner that turns all the time (an animation)
import json
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

out = sys.argv[1]
win = Gtk.Window(title="Effect test")
win.set_default_size(420, 320)
win.move(40, 40)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12, margin=16)
win.add(box)
count = [0]
work = Gtk.Button(label="Work")
label = Gtk.Label(label="count 0")
disabled = Gtk.Button(label="Disabled")
disabled.set_sensitive(False)
static = Gtk.Label(label="Static text that never changes")
entry = Gtk.Entry()
opendlg = Gtk.Button(label="Dialog")
for w in (work, label, disabled, static, entry, opendlg):
    box.pack_start(w, False, False, 0)


def on_work(_b):
    count[0] += 1
    label.set_text("count %d" % count[0])


work.connect("clicked", on_work)


def opened(_w=None):
    d = Gtk.Dialog(title="Opened", transient_for=win)
    d.add_button("Close", Gtk.ResponseType.CLOSE)
    d.get_content_area().add(Gtk.Label(label="A dialog the chord opened"))
    d.connect("response", lambda dd, _r: dd.destroy())
    d.move(120, 120)
    d.show_all()


unf = {}


def unfocused(_b):
    d = Gtk.Window(title="Unfocused", transient_for=win)
    d.set_accept_focus(False)
    d.set_focus_on_map(False)
    d.set_default_size(220, 100)
    d.move(300, 230)      # over the window's lower right, clear of the widgets clicked
    b = Gtk.Button(label="Change")
    changes = [0]

    def change(bb):
        changes[0] += 1
        bb.set_label("Changed %d" % changes[0])

    b.connect("clicked", change)
    d.add(b)
    d.show_all()
    unf["button"] = b
    GLib.timeout_add(300, dump)


def on_key(_w, ev):
    if ev.keyval in (Gdk.KEY_o, Gdk.KEY_O) and ev.state & Gdk.ModifierType.CONTROL_MASK:
        opened()
        return True
    return False


opendlg.connect("clicked", unfocused)
win.connect("key-press-event", on_key)
win.connect("destroy", Gtk.main_quit)


def centre(w):
    top = w.get_toplevel()
    x, y = w.translate_coordinates(top, 0, 0)
    _, ox, oy = top.get_window().get_origin()
    a = w.get_allocation()
    return {"x": ox + x + a.width // 2, "y": oy + y + a.height // 2,
            "left": ox + x, "top": oy + y, "width": a.width, "height": a.height}


def dump():
    d = {n: centre(w) for n, w in (("work", work), ("label", label), ("disabled", disabled),
                                    ("static", static), ("entry", entry), ("dialog", opendlg),
                                    ("spinner", spinner))}
    if "button" in unf:
        d["change"] = centre(unf["button"])
    with open(out + ".tmp", "w") as f:
        json.dump(d, f)
    import os
    os.rename(out + ".tmp", out)
    return False


spinwin = Gtk.Window(title="Spinner")
spinwin.set_default_size(120, 120)
spinwin.move(520, 40)
spinner = Gtk.Spinner()
spinner.set_size_request(80, 80)
spinwin.add(spinner)
spinwin.show_all()
spinner.start()
win.show_all()
GLib.timeout_add(500, dump)
Gtk.main()
