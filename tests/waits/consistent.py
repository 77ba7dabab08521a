#!/usr/bin/env python3
"""consistent.py URL ROUNDS WAITS READERS: every reply about a wait is one
consistent snapshot, read while waits resolve. Each round registers a task
with its own display and creates WAITS waits on it whose condition the
vision stand-in answers YES at the first look; READERS threads GET each wait
(and the task's list) over and over until every one has finished, and one
thread follows GET /api/events and has each wait read back after the event
that announces its end. Checks, for every reply: a watching wait has no YES
verdict and no resolved_at; a resolved one has verdict YES and resolved_at;
after the event announcing a wait's end, GET shows it resolved (the stream
never announces what GET does not show yet). Prints one JSON line: replies
read, bad replies (first few), waits, waits never seen announced and read
back resolved, reads that found a wait not resolved after its end was
announced (first few), ring resets (events missed)."""
import json, queue, sys, threading, time, urllib.request, urllib.error

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


# event follower: the stand-in answers YES at the first look, so a wait's
# "updated" event is its end; GET after it must show the wait resolved. The
# reader only queues (a slow reader would fall off the event ring); four
# threads read the waits back.
announced, early = set(), []
stop = threading.Event()
todo_q = queue.Queue()


def follow():
    req = urllib.request.Request(url + "/api/events")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            for line in r:
                if stop.is_set():
                    return
                if line.startswith(b"event: reset"):
                    with lock:
                        stats["resets"] = stats.get("resets", 0) + 1
                if not line.startswith(b"data: "):
                    continue
                ev = json.loads(line[6:])
                if ev.get("type") == "wait" and ev.get("op") == "updated" and "ref" in ev:
                    todo_q.put(ev["ref"])
    except Exception as e:      # noqa: BLE001 - the stream ends when the test does
        if not stop.is_set():
            sys.stderr.write("events: %s\n" % e)


def read_back():
    while True:
        wid = todo_q.get()
        code, w = call("GET", "/api/waits/" + wid)
        if code == 200:
            st = note(w)
            with lock:
                if st == "resolved":
                    announced.add(wid)
                elif len(early) < 5:
                    early.append("%s: %s after its end was announced" % (wid, st))
        todo_q.task_done()


for _ in range(4):
    threading.Thread(target=read_back, daemon=True).start()
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
while time.time() < deadline and any(w not in announced for w in all_ids):
    time.sleep(0.2)
stop.set()
with lock:
    stats["unannounced"] = sum(1 for w in all_ids if w not in announced)
    stats["early"] = early
print(json.dumps(stats))
