#!/usr/bin/python3
# hostile_app.py - a GTK 3 window that costs a reader of its accessibility
# tree as much as it can: a 1 MB title, a 1 MB program name, and 900
# visible labels whose accessible names and descriptions are 10 KB each.
# Run with /usr/bin/python3 (Debian's python3-gi). Prints "ready" once
# shown; exits with its window.
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

MB = 1 << 20
GLib.set_prgname("hostile-" + "p" * MB)
win = Gtk.Window(title="Hostile " + "T" * MB)
grid = Gtk.Grid()
for i in range(900):
    label = Gtk.Label(label=str(i % 10))
    acc = label.get_accessible()
    acc.set_name("L%d " % i + "n" * 10000)
    acc.set_description("d" * 10000)
    grid.attach(label, i % 30, i // 30, 1, 1)
win.add(grid)
win.connect("destroy", Gtk.main_quit)
win.show_all()
print("ready", flush=True)
Gtk.main()
