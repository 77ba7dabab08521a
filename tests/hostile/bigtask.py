#!/usr/bin/env python3
"""bigtask.py PORT MODE ...: a big task against a running detmd on
127.0.0.1:PORT (issue 33, item 3). Every line it prints is "key value...".

  fill TASK MB      logs about MB megabytes of actions on TASK: 1 MB POSTs
                    (input_data, output_data and 14 logs of 60 000 chars
                    each), spread over the task's first three items. Prints
                    "filled N actions in T s".
  exports TASK N PID
                    opens N exports of TASK that read the reply's first
                    bytes and then nothing more (a small receive buffer, so
                    the kernel does not read for them), holds them 5 s, and
                    prints detmd's (PID) VmRSS in KiB: "rss before B held H
                    statuses S..." (H: the highest seen while held), then
                    closes them all and prints "rss closed C" 3 s later,
                    then "after S": the status of one more export.
                    Before the wait, one more export is asked: "extra S
                    CODE retry R" (its status, error code, Retry-After).
  views TASK N OUT  N curls GET /api/tasks/TASK?detail=full at once into
                    OUT.0 .. OUT.N-1; meanwhile /api/health is asked every
                    50 ms. Prints "health max M ms n K while V views were
                    in flight" (M: the slowest health answer asked while at
                    least one view was in flight; K probes), then "views ok
                    O bytes B..." (O: 200 replies that parse as JSON).
"""
import base64, json, os, re, socket, subprocess, sys, time

port, mode = int(sys.argv[1]), sys.argv[2]


def request(method, path, body=None, rcvbuf=0):
    """A raw HTTP/1.1 request on a fresh connection; returns the socket."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % (method, path)
    if body is not None:
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    s.sendall(head.encode() + b"\r\n" + (body or b""))
    return s


def read_all(s, timeout=60):
    s.settimeout(timeout)
    out = []
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        out.append(b)
    s.close()
    return b"".join(out)


def split(raw):
    """(status, body) of a whole reply, chunked or not."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.") else 0
    if b"transfer-encoding: chunked" in head.lower():
        out, i = [], 0
        while True:
            j = body.index(b"\r\n", i)
            n = int(body[i:j].split(b";")[0], 16)
            if n == 0:
                break
            out.append(body[j + 2:j + 2 + n])
            i = j + 2 + n + 2
        body = b"".join(out)
    return status, body


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def text(n):
    """n characters: a random 64 repeated (each differs; they deflate fast)."""
    return (base64.b64encode(os.urandom(48)).decode() * (n // 64 + 1))[:n]


def fill(task, mb):
    t0, n = time.time(), 0
    while n < mb:
        body = json.dumps({"action_type": "cli", "summary": "big action %d" % n, "ordinal": n % 3,
                           "input_data": {"cmd": text(60000)}, "output_data": text(60000),
                           "logs": [{"content": text(60000)} for _ in range(14)]}).encode()
        st, resp = split(read_all(request("POST", "/api/tasks/%s/actions" % task, body)))
        if st != 201:
            print("error %d %s" % (st, resp[:300]), flush=True)
            sys.exit(1)
        n += 1
    print("filled %d actions in %.1f s" % (n, time.time() - t0), flush=True)


def exports(task, n, pid):
    before = rss(pid)
    socks, statuses = [], []
    for _ in range(n):
        s = request("GET", "/api/tasks/%s/export" % task, rcvbuf=16384)
        s.settimeout(10)
        try:
            statuses.append(int(s.recv(64).split(b" ")[1]))
        except (OSError, IndexError, ValueError):
            statuses.append(0)
        socks.append(s)
    raw = read_all(request("GET", "/api/tasks/%s/export" % task), 10)
    st_x, body_x = split(raw)
    m = re.search(rb"(?i)\r\nretry-after: *(\d+)", raw.partition(b"\r\n\r\n")[0])
    try:
        code = json.loads(body_x)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = "none"
    print("extra %d %s retry %s" % (st_x, code, m.group(1).decode() if m else "none"), flush=True)
    held, t0 = before, time.time()
    while time.time() - t0 < 5:
        held = max(held, rss(pid))
        time.sleep(0.1)
    print("rss before %d held %d statuses %s" % (before, held, " ".join(map(str, statuses))), flush=True)
    for s in socks:
        s.close()
    time.sleep(3)
    print("rss closed %d" % rss(pid), flush=True)
    s = request("GET", "/api/tasks/%s/export" % task)
    s.settimeout(10)
    try:
        st = int(s.recv(64).split(b" ")[1])
    except (OSError, IndexError, ValueError):
        st = 0
    s.close()
    print("after %d" % st, flush=True)


def views(task, n, out):
    """Each view by a curl of its own (this process only probes: a parse
    here would hold the interpreter and slow the probes down)."""
    url = "http://127.0.0.1:%d/api/tasks/%s?detail=full" % (port, task)
    procs = [subprocess.Popen(["curl", "-s", "--max-time", "120", "-o", "%s.%d" % (out, i),
                               "-w", "%{http_code}", url], stdout=subprocess.PIPE)
             for i in range(n)]
    time.sleep(0.05)
    worst, probes, most = 0.0, 0, 0
    while True:
        busy = sum(1 for p in procs if p.poll() is None)
        if busy == 0:
            break
        t0 = time.time()
        st, _ = split(read_all(request("GET", "/api/health"), 30))
        dt = (time.time() - t0) * 1000
        probes, most = probes + 1, max(most, busy)
        worst = max(worst, dt if st == 200 else 99999)
        time.sleep(0.05)
    codes = [p.communicate()[0].decode() for p in procs]
    print("health max %.0f ms n %d while %d views were in flight" % (worst, probes, most), flush=True)
    sizes, ok = [], 0
    for i in range(n):
        try:
            with open("%s.%d" % (out, i), "rb") as f:
                body = f.read()
            json.loads(body)
            ok += codes[i] == "200"
            sizes.append(str(len(body)))
        except (OSError, ValueError) as e:
            sizes.append("bad:%s" % e)
    print("views ok %d bytes %s" % (ok, " ".join(sizes)), flush=True)


if mode == "fill":
    fill(sys.argv[3], int(sys.argv[4]))
elif mode == "exports":
    exports(sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
else:
    views(sys.argv[3], int(sys.argv[4]), sys.argv[5])
