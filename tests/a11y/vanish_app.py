#!/usr/bin/python3
# vanish_app.py - an accessible application that leaves the accessibility
# bus in the middle of being read: it embeds itself in the registry like
# any toolkit does, then, at the first property a reader asks of it (its
# name), exits without replying. The reader must answer for the rest of the
# desktop and live on. Speaks the AT-SPI D-Bus wire format through
# dbus-python; no toolkit. Needs AT_SPI_BUS_ADDRESS (the task display's
# env). Prints "ready" once embedded; logs what made it leave on stderr.
import os
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

ROOT = "/org/a11y/atspi/accessible/root"


def on_message(_conn, msg):
    if msg.get_type() == 1 and embedded and msg.get_member() in ("Get", "GetAll"):
        sys.stderr.write("vanish_app: %s.%s%s: leaving\n" % (msg.get_interface(), msg.get_member(), [str(a) for a in msg.get_args_list()]))
        os._exit(0)
    return None


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(os.environ["AT_SPI_BUS_ADDRESS"])
embedded = False
bus.add_message_filter(on_message)
me = bus.get_unique_name()
bus.call_blocking("org.a11y.atspi.Registry", ROOT, "org.a11y.atspi.Socket", "Embed",
                  "(so)", [(me, dbus.ObjectPath(ROOT))], timeout=10)
embedded = True
print("ready", flush=True)
GLib.timeout_add(60000, lambda: os._exit(0))
GLib.MainLoop().run()
