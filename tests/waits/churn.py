#!/usr/bin/env python3
"""churn.py URL ROUNDS WAITS: parallel churn of smart waits against a real
detmd. Each round registers a task with its own display, creates WAITS waits
on it from WAITS threads at once, then from as many threads at once cancels
(DELETE), updates (PATCH), reads, and ends or deletes the task while the
waits are queued and judged. Prints one JSON line: rounds done, requests,
5xx replies, transport errors, waits still watching at the end."""
import json, random, sys, threading, urllib.request, urllib.error

url, rounds, nwaits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
stats = {"rounds": 0, "requests": 0, "5xx": 0, "errors": 0, "watching": 0, "statuses": {}}
lock = threading.Lock()


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            code, text = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read()
    except Exception as e:
        sys.stderr.write("%s %s: %s\n" % (method, path, e))
        with lock:
            stats["requests"] += 1
            stats["errors"] += 1
        return 0, None
    with lock:
        stats["requests"] += 1
        if code >= 500:
            stats["5xx"] += 1
    try:
        return code, json.loads(text)
    except ValueError:
        return code, None


def parallel(fns):
    ts = [threading.Thread(target=f) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


for rnd in range(rounds):
    code, task = call("POST", "/api/tasks", {"name": "churn %d" % rnd, "display": True})
    if code != 201:
        sys.stderr.write("task: %s %s\n" % (code, task))
        stats["errors"] += 1
        continue
    tid = task["task_id"]
    ids = []

    def create():
        c, w = call("POST", "/api/waits", {"task_id": tid, "target": "screen",
                                            "wake_when": "a red window appears", "timeout": 60,
                                            "poll_interval": 0.5})
        if c == 201:
            with lock:
                ids.append(w["wait_id"])
        else:
            sys.stderr.write("wait: %s %s\n" % (c, w))
    parallel([create] * nwaits)
    with lock:
        stats["created"] = stats.get("created", 0) + len(ids)
    random.shuffle(ids)
    ops = []
    if rnd % 3 == 0:    # every wait cancelled at once, as an agent giving up
        parallel([lambda w=wid: call("DELETE", "/api/waits/" + w) for wid in ids])
    for i, wid in enumerate(ids):
        kind = i % 4
        if kind == 0:
            ops.append(lambda w=wid: call("DELETE", "/api/waits/" + w))
        elif kind == 1:
            ops.append(lambda w=wid: call("PATCH", "/api/waits/" + w,
                                          {"wake_when": "a blue window appears", "timeout": 30}))
        elif kind == 2:
            ops.append(lambda w=wid: call("GET", "/api/waits/" + w))
        else:
            ops.append(lambda w=wid: call("DELETE", "/api/waits/" + w))
    # the task ends (or goes away) while the waits are being cancelled
    if rnd % 2 == 0:
        ops.insert(len(ops) // 2, lambda: call("PATCH", "/api/tasks/" + tid, {"status": "completed"}))
    else:
        ops.insert(len(ops) // 2, lambda: call("DELETE", "/api/tasks/" + tid))
    parallel(ops)
    stats["rounds"] += 1

code, lst = call("GET", "/api/waits?status=watching&limit=500")
if code == 200 and lst is not None:
    stats["watching"] = lst.get("count", len(lst.get("waits", [])))
else:
    stats["errors"] += 1
print(json.dumps(stats))
