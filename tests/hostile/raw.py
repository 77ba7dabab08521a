#!/usr/bin/env python3
"""raw.py PORT REQUEST [TIMEOUT_S]: send REQUEST (Python escapes such as \\r\\n
are decoded) on a fresh TCP connection to 127.0.0.1:PORT, read until the
server closes or TIMEOUT_S (default 5) passes, and print one JSON line:
{"status": first status code or 0, "statuses": how many status lines,
 "closed": the server closed, "elapsed": seconds, "body": the last body}."""
import json, re, socket, sys, time

port, raw = int(sys.argv[1]), sys.argv[2]
limit = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
data = raw.encode("latin-1").decode("unicode_escape").encode("latin-1")
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(limit)
t0 = time.time()
s.sendall(data)
out, closed = b"", False
try:
    while True:
        b = s.recv(65536)
        if not b:
            closed = True
            break
        out += b
except OSError:
    pass
text = out.decode("latin-1")
status = int(text[9:12]) if text.startswith("HTTP/1.") and text[9:12].isdigit() else 0
body = text.rsplit("\r\n\r\n", 1)[-1] if "\r\n\r\n" in text else ""
print(json.dumps({"status": status, "statuses": len(re.findall(r"(?:^|\r\n)HTTP/1\.[01] \d{3} ", text)), "closed": closed,
                  "elapsed": round(time.time() - t0, 2), "body": body}))
