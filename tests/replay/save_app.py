#!/usr/bin/python3
# save_app.py - the replay suite's application (GTK 3, with its
# accessibility tree): a window "Replay Saver" with a "File name" entry, a
# "Content" entry and a save button; the button writes the content to
# OUT_DIR/<file name> and opens a window "Saved" whose OK button closes it
# (and appends "ok <file name>" to OUT_DIR/events.log).
# argv[1]: a JSON file read at start: {"out_dir", "width", "height",
# "layout": "a" (entries over the button) | "b" (button first, padded:
# every widget elsewhere), "save_label": the button's label ("Save")}.
import json
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

cfg = json.load(open(sys.argv[1]))
win = Gtk.Window(title="Replay Saver")
win.set_default_size(cfg.get("width", 420), cfg.get("height", 220))
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
box.set_border_width(8)


def labelled(text):
    row = Gtk.Box(spacing=6)
    lab = Gtk.Label(label=text + ":")
    ent = Gtk.Entry()
    ent.get_accessible().set_name(text)
    row.pack_start(lab, False, False, 0)
    row.pack_start(ent, True, True, 0)
    return row, ent


name_row, name = labelled("File name")
body_row, body = labelled("Content")
save = Gtk.Button(label=cfg.get("save_label", "Save"))


def log(line):
    with open(os.path.join(cfg["out_dir"], "events.log"), "a") as f:
        f.write(line + "\n")


def saved_window(fname):
    w = Gtk.Window(title="Saved")
    w.set_default_size(220, 90)
    b = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
    b.pack_start(Gtk.Label(label="Saved " + fname), True, True, 0)
    ok = Gtk.Button(label="OK")
    ok.connect("clicked", lambda _b: (log("ok " + fname), w.destroy()))
    b.pack_start(ok, False, False, 0)
    w.add(b)
    w.show_all()


def on_save(_b):
    fname = name.get_text()
    with open(os.path.join(cfg["out_dir"], fname), "w") as f:
        f.write(body.get_text())
    saved_window(fname)


save.connect("clicked", on_save)
if cfg.get("layout", "a") == "b":
    box.pack_start(Gtk.Label(label=""), False, False, 40)
    box.pack_start(save, False, False, 0)
    box.pack_start(Gtk.Label(label=""), False, False, 20)
    box.pack_start(body_row, False, False, 0)
    box.pack_start(name_row, False, False, 0)
else:
    box.pack_start(name_row, False, False, 0)
    box.pack_start(body_row, False, False, 0)
    box.pack_start(save, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
