#!/usr/bin/python3
# server.py - the apps suite's tiny web site (python3 http.server): a form
# page, and a log of what browsers POST to it, read by the test as the
# oracle outside detm.
#
#   GET  /form      a form: "Full name", "City" (labelled text fields),
#                   "Quantity" (a number field), a "Submit" button
#   GET  /order     the same form centred in the window
#   POST /submit    appends the decoded fields as one JSON line to LOG,
#                   answers a page whose status line reads "Saving..." and
#                   turns into "Saved" in place 1.5 s later (the wait that
#                   must see replaced text)
#
# Usage: server.py PORTFILE LOG   (binds 127.0.0.1 on a free port and
# writes it to PORTFILE once listening)
import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FORM = """<!doctype html>
<html><head><meta charset="utf-8"><title>Order form</title>
<style>body{font:20px sans-serif;margin:40px} label{display:block;margin:14px 0}
input{font:20px sans-serif;margin-left:10px} button{font:22px sans-serif;padding:6px 24px}</style></head>
<body><h1>Order form</h1>
<form method="post" action="/submit">
<label for="name">Full name</label><input id="name" name="name" type="text">
<label for="city">City</label><input id="city" name="city" type="text">
<label for="qty">Quantity</label><input id="qty" name="qty" type="number">
<p><button type="submit">Submit</button></p>
</form></body></html>
"""

# /order: the same form centred in the window (a layout that moves with
# the window's size, as most sites' do): bench/replay_real.sh
ORDER = FORM.replace("body{font:20px sans-serif;margin:40px}",
                     "body{font:20px sans-serif;margin:0;min-height:100vh;display:flex;"
                     "flex-direction:column;align-items:center;justify-content:center}")

DONE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Order received</title>
<style>body{font:28px sans-serif;margin:40px}</style></head>
<body><h1>Order received</h1>
<p>Status: <span id="status">Saving...</span></p>
<script>setTimeout(function () { document.getElementById("status").textContent = "Saved"; }, 1500);</script>
</body></html>
"""


class Handler(BaseHTTPRequestHandler):
    def reply(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.split("?")[0] == "/form":
            self.reply(200, FORM)
        elif self.path.split("?")[0] == "/order":
            self.reply(200, ORDER)
        else:
            self.reply(404, "<p>not here</p>")

    def do_POST(self):
        n = min(int(self.headers.get("Content-Length", "0") or 0), 65536)
        body = self.rfile.read(n).decode("utf-8", "replace")
        fields = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
        with open(self.server.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "agent": self.headers.get("User-Agent", ""),
                                "fields": fields}) + "\n")
        self.reply(200, DONE)

    def log_message(self, fmt, *args):
        pass


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.log = sys.argv[2]
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()


if __name__ == "__main__":
    main()
