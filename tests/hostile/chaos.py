#!/usr/bin/env python3
"""chaos.py - many clients calling every route at once, in random order.

  chaos.py URL SECONDS CLIENTS SEED

Reads the route table (GET /api/routes) and the tool table (GET /api/tools),
then CLIENTS threads call random routes for SECONDS: path parameters are ids
the run has seen (tasks, items, actions, waits, recordings) or junk, bodies
are built from each route's field list (or tool schema) with plausible
values of each field's kind, now and then a wrong kind. Tasks come and go
(registered with and without displays, paused, taken over, cancelled,
deleted) while other clients act on them. Streams (events, MJPEG, ZIPs) are
read a little and dropped mid-way.

"No sequence of valid calls, however concurrent, may crash detmd": prints
"ok"/"FAIL" lines for: every request got an HTTP reply (none refused or
cut off: detmd lives), no reply was a 500 (an internal error is a bug
whatever the input), every JSON reply was valid UTF-8 JSON. The caller
checks that detmd still answers and stops cleanly. SEED makes a run
repeatable. Python standard library only.
"""
import http.client, json, random, sys, threading, time
from urllib.parse import urlparse, quote

URL, SECONDS, CLIENTS, SEED = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
HOST = urlparse(URL)
STREAMS = ("/api/events", "live.mjpeg", "/api/live", "/export", "/api/dump", ".mp4")
# routes left out: none of them can crash detmd, they only stop the run
SKIP = {("POST", "/api/humanize"), ("POST", "/humanize"),   # slows every later input
        ("POST", "/api/drain")}                              # refuses every later task

ids = {"task": [], "action": [], "wait": [], "record": [], "lease": []}
ids_mu = threading.Lock()
stats = {"calls": 0, "by_status": {}, "dead": [], "e500": [], "badjson": []}
stats_mu = threading.Lock()

WORDS = ["Save", "OK", "ünïcödé", "Привет", "日本語", "emoji 🎉", "a\"quote", "back\\slash", "",
         "x" * 300, "line\nbreak", "tab\tchar", "the OK button", "screen shows Done"]


def text(r):
    return " ".join(r.choice(WORDS) for _ in range(r.randint(1, 3)))


def some_id(r, kind):
    with ids_mu:
        pool = ids[kind]
        if pool and r.random() < 0.9:
            return r.choice(pool)
    return r.choice(["00000000", "deadbeef", "zz", "0", "-1", "%2F..", "ffffffff"])


VALUES = {
    "task_id": lambda r: some_id(r, "task"),
    "lease": lambda r: some_id(r, "lease"),
    "name": text, "summary": text, "message": text, "reason": text, "note": text,
    "content": text, "instructions": text, "query": text, "title": text, "target": text,
    "wake_when": lambda r: r.choice(["screen shows Done", "text:Done", "changed", "element:button \"OK\"",
                                     "element-gone:dialog \"Saving\"", text(r)]),
    "criteria": text, "instruction": lambda r: r.choice(["click(10, 10)", "type(\"hi\")", "press ctrl+l",
                                                         "scroll down", text(r)]),
    "description": text, "context": text, "text": text, "window_name": text, "agent_id": text,
    "plan": lambda r: [text(r) for _ in range(r.randint(0, 3))],
    "items": lambda r: [text(r) for _ in range(r.randint(0, 3))],
    "metadata": lambda r: {"k": r.choice([text(r), None, 1, [1, 2]])},
    "display": lambda r: r.random() < 0.25,
    "display_resolution": lambda r: r.choice(["320x240", "640x480", "1x1", "99999x99999"]),
    "resolution": lambda r: r.choice(["320x240", "640x480"]),
    "status": lambda r: r.choice(["active", "paused", "completed", "failed", "cancelled", "pending",
                                  "in_progress", "done", "skipped", "success", "error", "bogus"]),
    "action": lambda r: r.choice(["click", "double_click", "right_click", "move", "mouse_move", "type",
                                  "key", "scroll", "drag", "screenshot", "get_mouse_position",
                                  "list_windows", "focus_window", "sleep", "get_screen_size", "nope"]),
    "action_type": lambda r: r.choice(["click", "type", "other", "cli", "screenshot", "human", "bad"]),
    "keys": lambda r: r.choice(["Return", "ctrl+l", "a", "F5", "ctrl+alt+BackSpace", "nokey"]),
    "key": lambda r: r.choice(["Return", "ctrl+l", "a", "nokey"]),
    "button": lambda r: r.choice(["left", "right", "middle", 1, 3, 9]),
    "direction": lambda r: r.choice(["up", "down", "left", "right", "sideways"]),
    "coords": lambda r: r.choice(["screen", "image", "other"]),
    "judge": lambda r: r.choice(["ocr", "vision", "auto", "none"]),
    "log_type": lambda r: r.choice(["info", "error", "debug", "warning", "bad"]),
    "role": lambda r: r.choice(["agent", "operator", "system", "user", "bad"]),
    "msg_type": lambda r: r.choice(["text", "note", "control", "bad"]),
    "format": lambda r: r.choice(["jpeg", "png", "gif"]),
    "path": lambda r: r.choice(["notes.md", "../etc/passwd", "a/b.md", "", "memory/x.md"]),
    "logs": lambda r: [{"log_type": "info", "content": text(r)}],
    "input_data": lambda r: {"k": text(r)}, "output_data": lambda r: {"k": 1},
    "events": lambda r: [r.choice([{"type": "move", "x": r.randint(0, 640), "y": r.randint(0, 480)},
                                   {"type": "click", "x": r.randint(0, 640), "y": r.randint(0, 480), "button": 1},
                                   {"type": "text", "text": text(r)}, {"type": "key", "keys": "ctrl+l"},
                                   {"type": "wheel", "x": 5, "y": 5, "dy": 3}, {"type": "bogus"}])
                         for _ in range(r.randint(0, 4))],
    "commands": lambda r: [{"action": r.choice(["click", "type", "key", "sleep"]), "x": 5, "y": 5,
                            "text": "hi", "keys": "a", "ms": 10} for _ in range(r.randint(0, 3))],
    "budget": lambda r: r.choice([{"max_usd": 0.5}, {"max_usd": -1}, {"max_calls": 3}, 1]),
}
INTS = {"x": (-20, 700), "y": (-20, 500), "x2": (0, 700), "y2": (0, 500), "width": (1, 900),
        "height": (1, 700), "w": (1, 900), "h": (1, 700), "display_width": (0, 2000),
        "display_height": (0, 2000), "ms": (0, 300), "duration": (1, 3), "duration_s": (1, 3),
        "fps": (1, 5), "timeout": (1, 4), "timeout_ms": (50, 2000), "amount": (1, 5),
        "ordinal": (-1, 4), "duration_ms": (0, 5000), "quality": (1, 100), "max_width": (50, 1400),
        "offset": (0, 50), "limit": (0, 50), "max_results": (0, 10), "iw": (1, 1000), "ih": (1, 1000),
        "window_id": (0, 1 << 22), "poll_interval": (1, 3), "seconds": (0, 2)}
BOOLS = {"enabled", "allow_screenshots", "force", "after_screenshot", "stop_on_error", "wait", "display"}


def value(r, field):
    if r.random() < 0.03:   # now and then the wrong kind
        return r.choice([None, [], {}, "str", -5, 1e308, True])
    if field in VALUES:
        return VALUES[field](r)
    if field in INTS:
        return r.randint(*INTS[field])
    if field in BOOLS:
        return r.random() < 0.5
    return r.choice([text(r), r.randint(0, 10), None])


def body_for(r, fields, required=()):
    b = {f: value(r, f) for f in required}
    for f in fields or []:
        if f not in b and r.random() < 0.6:
            b[f] = value(r, f)
    return b


def fill(r, pattern, tools):
    out = []
    for seg in pattern.split("/"):
        if seg == "{id}":
            kind = "wait" if "/waits/" in pattern else "record" if "/record/" in pattern else "task"
            seg = quote(some_id(r, kind), safe="%")
        elif seg == "{aid}":
            seg = some_id(r, "action")
        elif seg == "{ordinal}":
            seg = str(r.randint(-1, 4))
        elif seg == "{file}":
            seg = r.choice(["index.html", "app.js", "x.jpg", "..%2Fdata.db", "nope"])
        elif seg == "{name}":
            seg = r.choice(list(tools) + ["nope"])
        elif seg == "{wait_id?}" or seg.startswith("{"):
            seg = some_id(r, "wait")
        out.append(seg)
    return "/".join(out)


def harvest(obj):
    """Ids in a reply, for later calls."""
    if not isinstance(obj, dict):
        return
    with ids_mu:
        for key, kind in (("task_id", "task"), ("action_id", "action"), ("wait_id", "wait"),
                          ("recording_id", "record"), ("clip_id", "record"), ("lease", "lease")):
            v = obj.get(key)
            if isinstance(v, str) and len(v) <= 64 and v not in ids[kind]:
                ids[kind].append(v)
                if len(ids[kind]) > 40:
                    ids[kind].pop(0)


def call(r, conn, method, path, body):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if path == "/mcp":
        headers["Accept"] = "application/json, text/event-stream"
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    if any(s in path for s in STREAMS) and method == "GET":
        conn.sock.settimeout(1.0)           # a little of what comes, then drop it mid-way
        try:
            resp.read1(r.randint(1, 8192))
        except (TimeoutError, OSError):
            pass
        conn.close()
        return resp.status, None
    return resp.status, resp.read()


def mcp_body(r, tools):
    name = r.choice(list(tools))
    props = (tools[name].get("inputSchema") or {}).get("properties") or {}
    req = (tools[name].get("inputSchema") or {}).get("required") or []
    return {"jsonrpc": "2.0", "id": r.randint(1, 1 << 30), "method": "tools/call",
            "params": {"name": name, "arguments": body_for(r, props.keys(), req),
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientInfo": {"name": "chaos", "version": "1"},
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}


def client(k, routes, tools, deadline):
    r = random.Random(SEED * 1000 + k)
    conn = None
    while time.monotonic() < deadline:
        rt = r.choice(routes)
        method, pattern = rt["method"], rt["path"]
        path = fill(r, pattern, tools)
        body = None
        if method in ("POST", "PATCH", "DELETE") and rt.get("max_body", 0) > 0:
            name = pattern.lstrip("/")
            if pattern == "/mcp":
                body = mcp_body(r, tools)
            elif rt.get("fields") is None and name in tools:        # a Python route
                sch = tools[name].get("inputSchema") or {}
                body = body_for(r, (sch.get("properties") or {}).keys(), sch.get("required") or [])
            elif pattern == "/api/tools/{name}" and path.rsplit("/", 1)[1] in tools:
                sch = tools[path.rsplit("/", 1)[1]].get("inputSchema") or {}
                body = body_for(r, (sch.get("properties") or {}).keys(), sch.get("required") or [])
            else:
                body = body_for(r, rt.get("fields"))
        try:
            if conn is None:
                conn = http.client.HTTPConnection(HOST.hostname, HOST.port, timeout=60)
            status, raw = call(r, conn, method, path, body)
            if raw is None:
                conn = None
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            conn = None
            with stats_mu:
                stats["dead"].append(f"{method} {path}: {e!r}")
            if isinstance(e, ConnectionRefusedError):
                return
            continue
        with stats_mu:
            stats["calls"] += 1
            stats["by_status"][status] = stats["by_status"].get(status, 0) + 1
            if status == 500:
                stats["e500"].append(f"{method} {path} {json.dumps(body)[:200]} -> {raw[:300]!r}")
        if raw:
            try:
                obj = json.loads(raw.decode("utf-8")) if raw[:1] in (b"{", b"[") else None
            except (UnicodeDecodeError, ValueError) as e:
                with stats_mu:
                    stats["badjson"].append(f"{method} {path}: {e}")
                continue
            harvest(obj)
            if isinstance(obj, dict):
                for v in obj.values():
                    harvest(v) if isinstance(v, dict) else None


def main():
    c = http.client.HTTPConnection(HOST.hostname, HOST.port, timeout=30)
    c.request("GET", "/api/routes")
    routes = [rt for rt in json.loads(c.getresponse().read())["routes"]
              if (rt["method"], rt["path"]) not in SKIP]
    c.request("GET", "/api/tools")
    tl = json.loads(c.getresponse().read())
    tools = {t["name"]: t for t in (tl.get("tools") if isinstance(tl, dict) else tl)}
    for i in range(4):      # some tasks to start from, two with displays
        c.request("POST", "/api/tasks", json.dumps({"name": f"chaos {i}", "plan": ["a", "b"],
                  "display": i < 2, "display_resolution": "320x240"}), {"Content-Type": "application/json"})
        harvest(json.loads(c.getresponse().read()))
    c.close()
    deadline = time.monotonic() + SECONDS
    ts = [threading.Thread(target=client, args=(k, routes, tools, deadline)) for k in range(CLIENTS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"   chaos: {stats['calls']} calls over {len(routes)} routes by {CLIENTS} clients in "
          f"{SECONDS:.0f} s; statuses {dict(sorted(stats['by_status'].items()))}")
    report("chaos: every request got a reply (detmd never went away)", not stats["dead"], stats["dead"][:5])
    report("chaos: no reply was a 500", not stats["e500"], stats["e500"][:5])
    report("chaos: every JSON reply parses as UTF-8 JSON", not stats["badjson"], stats["badjson"][:5])
    report("chaos: the run made calls", stats["calls"] > 0, "")


def report(name, good, why):
    print(f"ok   {name}" if good else f"FAIL {name}: {why}")


main()
