#!/usr/bin/env python3
"""consistent.py URL ROUNDS WAITS READERS: every reply about a wait is one
consistent snapshot, read while waits resolve. Each round registers a task
with its own display and creates WAITS waits on it whose condition the
vision stand-in answers YES at the first look; READERS threads GET each wait
(and the task's list) over and over until every one has finished, and one
thread follows GET /api/events and reads a wait back after each of its
events. Checks, for every reply: a watching wait has no YES verdict and no
resolved_at; a resolved one has verdict YES and resolved_at; after the last
event about a wait, GET shows it resolved (the stream never announces what
GET does not show yet). Prints one JSON line: replies read, bad replies
(first few), waits, waits whose events never ended in a resolved read."""
import json, sys, threading, time, urllib.request, urllib.error

url, rounds, nwaits, nreaders = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stats = {"replies": 0, "bad": 0, "examples": [], "waits": 0, "errors": 0, "unannounced": 0}
lock = threading.Lock()


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None
    except Exception as e:      # noqa: BLE001 - counted, reported
        sys.stderr.write("%s %s: %s\n" % (method, path, e))
        with lock:
            stats["errors"] += 1
        return 0, None


def judge(w):
    """The reply w of one wait: None if consistent, else why not."""
    st, verdict, resolved = w.get("status"), w.get("verdict"), w.get("resolved_at")
    if st == "watching" and (verdict == "YES" or resolved is not None):
        return "watching with verdict %s, resolved_at %s: %s" % (verdict, resolved, w.get("detail"))
    if st == "resolved" and (verdict != "YES" or resolved is None):
        return "resolved with verdict %s, resolved_at %s" % (verdict, resolved)
    return None


def note(w):
    why = judge(w)
    with lock:
        stats["replies"] += 1
        if why is not None:
            stats["bad"] += 1
            if len(stats["examples"]) < 5:
                stats["examples"].append("%s: %s" % (w.get("wait_id"), why))
    return w.get("status")


# event follower: after each event about a wait, read it back
last_read = {}      # wait id -> status read after its latest event
stop = threading.Event()


def follow():
    req = urllib.request.Request(url + "/api/events")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            for line in r:
                if stop.is_set():
                    return
                if not line.startswith(b"data: "):
                    continue
                ev = json.loads(line[6:])
                if ev.get("type") != "wait" or "ref" not in ev:
                    continue
                code, w = call("GET", "/api/waits/" + ev["ref"])
                if code == 200:
                    last_read[ev["ref"]] = note(w)
    except Exception as e:      # noqa: BLE001 - the stream ends when the test does
        if not stop.is_set():
            sys.stderr.write("events: %s\n" % e)


follower = threading.Thread(target=follow, daemon=True)
follower.start()
time.sleep(0.5)
all_ids = []
for rnd in range(rounds):
    code, task = call("POST", "/api/tasks", {"name": "consistent %d" % rnd, "display": True})
    if code != 201:
        stats["errors"] += 1
        continue
    tid = task["task_id"]
    ids, done = [], set()
    creating = threading.Event()

    def create():
        c, w = call("POST", "/api/waits", {"task_id": tid, "target": "screen",
                                            "wake_when": "consistency: the screen is there",
                                            "timeout": 60})
        if c == 201:
            with lock:
                ids.append(w["wait_id"])

    def read():
        deadline = time.time() + 60
        while time.time() < deadline:
            with lock:
                todo = [w for w in ids if w not in done]
            if not todo and not creating.is_set():
                return
            for wid in todo:
                c, w = call("GET", "/api/waits/" + wid)
                if c == 200 and note(w) != "watching":
                    with lock:
                        done.add(wid)
            c, lst = call("GET", "/api/waits?status=all&task_id=" + tid)
            for w in (lst or {}).get("waits", []):
                note(w)

    creating.set()
    readers = [threading.Thread(target=read) for _ in range(nreaders)]
    makers = [threading.Thread(target=create) for _ in range(nwaits)]
    for t in readers + makers:
        t.start()
    for t in makers:
        t.join()
    creating.clear()
    for t in readers:
        t.join()
    all_ids += ids
    call("PATCH", "/api/tasks/" + tid, {"status": "completed"})
stats["waits"] = len(all_ids)
deadline = time.time() + 30
while time.time() < deadline and any(last_read.get(w) != "resolved" for w in all_ids):
    time.sleep(0.2)
stop.set()
stats["unannounced"] = sum(1 for w in all_ids if last_read.get(w) != "resolved")
print(json.dumps(stats))
