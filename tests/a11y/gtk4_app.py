#!/usr/bin/python3
# gtk4_app.py - the a11y suite's plain GTK 4 window (python3-gi, Gtk 4.0):
# no header bar, so under openbox it gets the window manager's frame (a
# title bar above the client window), unlike gnome-calculator's
# client-side decorations. Three buttons; a click on one writes
# "clicked NAME" into the label below them, which the test reads back
# through the accessibility tree.
import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gtk  # noqa: E402


def activate(app):
    win = Gtk.ApplicationWindow(application=app, title="Plain GTK4")
    win.set_default_size(400, 300)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=10)
    label = Gtk.Label(label="none")
    for name in ("Alpha", "Beta", "Gamma"):
        b = Gtk.Button(label=name)
        b.connect("clicked", lambda _b, n=name: label.set_label("clicked " + n))
        box.append(b)
    box.append(label)
    win.set_child(box)
    win.present()


app = Gtk.Application(application_id="org.detm.test.PlainGtk4")
app.connect("activate", activate)
app.run(None)
