#!/usr/bin/python3
# form_app.py - a GTK 3 window for the tree walk's tests: its X title
# ("Form Window X") differs from its accessible name ("Form Accessible"),
# an entry holds "hello detm", a password entry holds "secret-pw", a spin
# button is at 42, and a tree view (which manages its descendants) has
# 5000 rows of which a screenful shows. A second window, "Deep", holds
# "Deep Button" under 45 nested boxes (deeper than the walk goes).
# Run with /usr/bin/python3.
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

win = Gtk.Window(title="Form Window X")
win.get_accessible().set_name("Form Accessible")
win.set_default_size(420, 400)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
entry = Gtk.Entry()
entry.set_text("hello detm")
entry.get_accessible().set_name("Greeting")
box.pack_start(entry, False, False, 0)
secret = Gtk.Entry()
secret.set_visibility(False)
secret.set_text("secret-pw")
secret.get_accessible().set_name("Password")
box.pack_start(secret, False, False, 0)
spin = Gtk.SpinButton.new_with_range(0, 100, 1)
spin.set_value(42)
spin.get_accessible().set_name("Count")
box.pack_start(spin, False, False, 0)
store = Gtk.ListStore(str)
for i in range(5000):
    store.append(["row %d" % i])
view = Gtk.TreeView(model=store)
view.append_column(Gtk.TreeViewColumn("Item", Gtk.CellRendererText(), text=0))
scroll = Gtk.ScrolledWindow()
scroll.add(view)
box.pack_start(scroll, True, True, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
deep = Gtk.Window(title="Deep")
deep.move(500, 0)
inner = deep
for _ in range(45):
    b = Gtk.Box()
    inner.add(b)
    inner = b
inner.add(Gtk.Button(label="Deep Button"))
deep.show_all()
print("ready", flush=True)
Gtk.main()
