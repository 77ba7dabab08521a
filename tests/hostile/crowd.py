#!/usr/bin/env python3
"""crowd.py PORT MODE N SECONDS: a slow crowd of N connections to
127.0.0.1:PORT, held SECONDS, then all closed (the process exits).

  trickle  each sends "POST /mcp HTTP/1.1" and Host, then one more header
           line every 2 s, never ending its headers. Prints "open N" once
           they are connected, then at the end "closed C of N, last at T s"
           (C: closed by the server while trickling).
  sse      N connections each send GET /api/events at once and keep the
           connection whatever the answer (a 503's too: keep-alive). Prints
           "asked N" once all are sent, then after 5 s at most "streams S refused R json J other O" (R: 503,
           J: of them a JSON error "unavailable" naming the cap; O: no
           answer, or closed without one), then holds them all.
"""
import json, re, select, socket, sys, time

port, mode, n, secs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])


def trickle():
    socks, t0 = [], time.time()
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        except OSError:
            pass
    print("open", len(socks), flush=True)
    live, closed, last, k, next_line = list(socks), 0, 0.0, 0, time.time() + 2
    while time.time() - t0 < secs and live:
        r, _, _ = select.select(live, [], [], 0.25)
        for s in r:
            try:
                gone = s.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                live.remove(s)
                closed += 1
                last = time.time() - t0
        if time.time() >= next_line:
            k, next_line = k + 1, next_line + 2
            for s in live:
                try:
                    s.sendall(b"X-Slow-%d: %d\r\n" % (k, k))
                except OSError:
                    pass
    print("closed %d of %d, last at %.1f s" % (closed, len(socks), last), flush=True)
    for s in socks:
        s.close()


def answer(buf):
    """(status, body) once buf holds a whole answer (a 200's head is enough)."""
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return None
    status = int(head.split(b" ")[1])
    if status == 200:
        return status, b""
    m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    if m is None or len(body) < int(m.group(1)):
        return None
    return status, body[:int(m.group(1))]


def sse():
    socks, bufs, done = [], {}, {}
    for i in range(n):          # all at once: connect and ask, answers later
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            socks.append(s)
            bufs[s] = b""
        except OSError:
            pass
    print("asked", len(socks), flush=True)
    t0 = time.time()
    while time.time() - t0 < 5 and len(done) < len(socks):
        live = [s for s in socks if s not in done]
        r, _, _ = select.select(live, [], [], 0.25)
        for s in r:
            try:
                b = s.recv(65536)
            except OSError:
                b = b""
            if not b:
                done[s] = (0, b"")         # closed before an answer
                continue
            bufs[s] += b
            a = answer(bufs[s])
            if a is not None:
                done[s] = a
    streams = sum(1 for a in done.values() if a[0] == 200)
    refused = [a[1] for a in done.values() if a[0] == 503]
    js = 0
    for body in refused:
        try:
            e = json.loads(body)["error"]
            js += e["code"] == "unavailable" and "cap" in e["message"]
        except (ValueError, KeyError, TypeError):
            pass
    other = n - streams - len(refused)
    print("streams %d refused %d json %d other %d" % (streams, len(refused), js, other), flush=True)
    time.sleep(secs)            # holds every connection, answered or not
    for s in socks:
        s.close()


trickle() if mode == "trickle" else sse()
