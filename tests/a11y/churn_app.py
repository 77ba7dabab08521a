#!/usr/bin/python3
# churn_app.py - a GTK 3 window with 300 labels that dies abruptly
# (os._exit, no goodbye on the accessibility bus) LIFE_MS after it is
# shown: a reader walking the tree at that moment meets an application
# that is gone mid-walk. Run with /usr/bin/python3 (Debian's python3-gi).
# Usage: churn_app.py LIFE_MS
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

life_ms = int(sys.argv[1]) if len(sys.argv) > 1 else 300
GLib.set_prgname("churn-%d" % os.getpid())
win = Gtk.Window(title="Churn %d" % os.getpid())
grid = Gtk.Grid()
for i in range(300):
    grid.attach(Gtk.Label(label="c%d" % i), i % 20, i // 20, 1, 1)
win.add(grid)
win.show_all()
GLib.timeout_add(life_ms, lambda: os._exit(0))
Gtk.main()
