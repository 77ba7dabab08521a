#!/usr/bin/env python3
"""race.py URL N - the memory suite's race (issue 33), client side: N reads
of sub/file and N appends (to sub/file and sub/new.md in turn) through
detmd's HTTP API, one kept-alive connection, while swap.py swaps sub/ for a
link out of the workspace. Every answer must be 200 (the file inside) or
403 (a link on the path, refused; 404 while two plain renames leave no sub/). Prints "leaked N" (reads that returned
the outside file), "unexpected N" (any other answer) and the counts."""
import http.client
import json
import sys
import urllib.parse

url = urllib.parse.urlparse(sys.argv[1])
n = int(sys.argv[2])
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
counts = {}
leaked = unexpected = 0


def post(route, body):
    global conn
    data = json.dumps(body)
    for attempt in (0, 1):
        try:
            conn.request("POST", route, data, {"Content-Type": "application/json"})
            r = conn.getresponse()
            return r.status, r.read()
        except (http.client.HTTPException, OSError):
            if attempt:
                raise
            conn.close()
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)


for i in range(n):
    for kind, route, body in (
            ("read", "/api/memory/read", {"path": "sub/file"}),
            ("append", "/api/memory/append",
             {"note": "race %d" % i, "path": "sub/file" if i % 2 else "sub/new.md"})):
        status, raw = post(route, body)
        counts[(kind, status)] = counts.get((kind, status), 0) + 1
        if b"secret outside" in raw:
            leaked += 1
        if status not in (200, 403, 404):
            unexpected += 1
            if unexpected <= 5:
                print("unexpected", kind, status, raw[:200], file=sys.stderr)
for (kind, status), c in sorted(counts.items()):
    print(kind, status, c)
print("leaked", leaked)
print("unexpected", unexpected)
