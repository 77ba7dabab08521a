#!/usr/bin/env python3
"""storm.py - the faults suite's writers and checker (tests/faults/run.sh).

Owns: a multi-writer POST storm against a live detmd that records every
request (kind, status, ids, a unique token, start/end times, the error
body), and the checks of that record against a daemon (live or restarted)
and, with the daemon stopped, against data.db itself.

  storm.py run URL OUT SECONDS WRITERS [TRIGGER AT]
      WRITERS threads POST tasks, actions (3 logs each), messages and plan
      items for SECONDS; TRIGGER (a path) is created AT seconds in (the
      injector's window opens then). OUT: one JSON record per request.
  storm.py check URL OUT [--window START_MS,MS] [--expect CODE]
                         [--lost-ok] [--label L]
      prints "ok ..."/"FAIL ..." lines: every 2xx is readable with all its
      logs (--lost-ok: counted and reported, not failed), every non-2xx is
      the JSON error shape, no request hung, with --window some 2xx came
      after it and, with --expect too, some write failed inside it.
  storm.py dbcheck DB OUT --label L
      with detmd stopped: no write answered with an error (not_durable
      aside) is stored
      (nothing of a failed write is kept); reports the not_durable ones.

Invariants: a token is in exactly one request; timestamps are wall-clock
ms (the injector logs its window in the same clock). Does not: judge
latency (only a 30 s "does not hang" deadline per request).
"""
import http.client
import json
import os
import sqlite3
import sys
import threading
import time
import urllib.parse

TIMEOUT = 30
HANG = -2
CONN = -1


def now_ms():
    return int(time.time() * 1000)


class Client:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.conn = None

    def call(self, method, path, body=None):
        """(status, parsed body or raw text); status -1 on a connection
        error, -2 on a timeout (a hung request)."""
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
            try:
                data = json.dumps(body) if body is not None else None
                hdr = {"Content-Type": "application/json"} if data else {}
                self.conn.request(method, path, body=data, headers=hdr)
                r = self.conn.getresponse()
                raw = r.read().decode("utf-8", "replace")
                try:
                    return r.status, json.loads(raw)
                except ValueError:
                    return r.status, raw
            except TimeoutError:
                self.conn.close()
                self.conn = None
                return HANG, "timeout"
            except (OSError, http.client.HTTPException) as e:
                self.conn.close()
                self.conn = None
                if attempt == 1 or method != "GET":
                    return CONN, str(e)
        return CONN, "unreachable"


def writer(url, w, deadline, out, lock):
    c = Client(url)
    task, i = None, 0
    recs = []
    while time.time() < deadline:
        i += 1
        tok = "w%d-i%d-%d" % (w, i, os.getpid())
        kind = "task" if task is None or i % 60 == 0 else ("action", "message", "items", "action", "patch")[i % 5]
        if kind == "task":
            path, body = "/api/tasks", {"name": tok, "plan": ["first"]}
        elif kind == "action":
            path = "/api/tasks/%s/actions" % task
            body = {"action_type": "cli", "summary": tok,
                    "logs": [{"content": "%s-log%d" % (tok, k)} for k in range(3)]}
        elif kind == "message":
            path, body = "/api/tasks/%s/messages" % task, {"content": tok}
        elif kind == "patch":
            path, body = "/api/tasks/%s" % task, {"metadata": {"storm": tok}}
        else:
            path, body = "/api/tasks/%s/items" % task, {"items": [tok]}
        t0 = now_ms()
        st, rb = c.call("PATCH" if kind == "patch" else "POST", path, body)
        rec = {"k": kind, "s": st, "tok": tok, "task": task, "t0": t0, "t1": now_ms()}
        if 200 <= st < 300 and isinstance(rb, dict):
            if kind == "task":
                task = rec["id"] = rb.get("task_id")
                rec["task"] = task
            elif kind == "action":
                rec["id"] = rb.get("action_id")
            elif kind == "message":
                rec["id"] = rb.get("message_id")
            else:
                rec["id"] = [a.get("ordinal") for a in rb.get("added", [])]
        else:
            rec["body"] = rb
            time.sleep(0.005)
        recs.append(rec)
    with lock:
        out.extend(recs)


def cmd_run(url, outp, seconds, nw, trigger=None, at=None):
    out, lock = [], threading.Lock()
    deadline = time.time() + seconds
    ts = [threading.Thread(target=writer, args=(url, w, deadline, out, lock)) for w in range(nw)]
    for t in ts:
        t.start()
    if trigger:
        time.sleep(at)
        open(trigger, "w").close()
    for t in ts:
        t.join()
    with open(outp, "w") as f:
        json.dump(out, f)
    n2 = sum(1 for r in out if 200 <= r["s"] < 300)
    print("   storm: %d requests, %d 2xx, %d not" % (len(out), n2, len(out) - n2))


class Report:
    def __init__(self, label):
        self.label, self.failed = label, 0

    def check(self, cond, name, why=""):
        if cond:
            print("ok   %s: %s" % (self.label, name))
        else:
            self.failed += 1
            print("FAIL %s: %s%s" % (self.label, name, (": " + why) if why else ""))


def err_shape(body):
    if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict):
        return False
    e = body["error"]
    return (set(e) == {"code", "message", "field"} and isinstance(e["code"], str)
            and isinstance(e["message"], str) and (e["field"] is None or isinstance(e["field"], str)))


def code_of(r):
    b = r.get("body")
    return b["error"]["code"] if err_shape(b) else None


def read_task(c, task, cache):
    """(status, item titles, message contents) of a task: one GET of its
    thread (a storm's task has far fewer than 1000 messages)."""
    if task not in cache:
        st, m = c.call("GET", "/api/tasks/%s/messages?limit=1000" % task)
        ok = st == 200 and isinstance(m, dict)
        titles = {i.get("title") for i in m.get("items", [])} if ok else set()
        contents = {x.get("content") for x in m.get("messages", [])} if ok else set()
        cache[task] = (st, titles, contents)
    return cache[task]


def missing_of(c, r, cache):
    """'' if the acknowledged write r reads back whole, else what is missing."""
    if r["k"] == "patch":
        return ""           # a later patch of the same task overwrites it
    if r["k"] == "task":
        st, _, _ = read_task(c, r["id"], cache)
        return "" if st == 200 else "task %s: GET %d" % (r["id"], st)
    st, titles, contents = read_task(c, r["task"], cache)
    if r["k"] == "items":
        return "" if r["tok"] in titles else "item %s of task %s" % (r["tok"], r["task"])
    if r["k"] == "message":
        return "" if r["tok"] in contents else "message %s of task %s" % (r["tok"], r["task"])
    st, a = c.call("GET", "/api/tasks/%s/actions/%s" % (r["task"], r["id"]))
    if st != 200:
        return "action %s: GET %d" % (r["id"], st)
    logs = {x.get("content") for x in a.get("logs", [])} if isinstance(a, dict) else set()
    want = {"%s-log%d" % (r["tok"], k) for k in range(3)}
    return "" if want <= logs else "action %s: %d of 3 logs" % (r["id"], len(want & logs))


def cmd_check(url, outp, args):
    recs = json.load(open(outp))
    label = args.get("--label", "storm")
    rep = Report(label)
    c = Client(url)
    acked = [r for r in recs if 200 <= r["s"] < 300]
    cache, missing = {}, []
    for r in acked:
        m = missing_of(c, r, cache)
        if m:
            missing.append(m)
    if "--lost-ok" in args:
        print("   %s: %d of %d acknowledged writes missing (allowed here)" % (label, len(missing), len(acked)))
    else:
        rep.check(not missing, "all %d acknowledged writes read back with their logs" % len(acked),
                  "%d missing, e.g. %s" % (len(missing), "; ".join(missing[:3])))
    # A write on a task this storm created (and saw acknowledged) is never
    # "no such task", whatever the disk does: a failed read is the store's
    # error (issue 33: a POST during a disk fault once answered 404).
    created = {r["id"] for r in acked if r["k"] == "task"}
    nf = [r for r in recs if r["k"] != "task" and r["task"] in created and code_of(r) == "not_found"]
    rep.check(not nf, "no write on an acknowledged task answered not_found",
              "%d, e.g. %s %s" % (len(nf), nf[0]["k"] if nf else "", str(nf[0].get("body"))[:200] if nf else ""))
    hung = [r for r in recs if r["s"] == HANG]
    rep.check(not hung, "no request hung (%d s deadline)" % TIMEOUT, "%d hung" % len(hung))
    conn = [r for r in recs if r["s"] == CONN]
    rep.check(not conn, "no connection was dropped", "%d, e.g. %s" % (len(conn), conn[:1]))
    bad = [r for r in recs if r["s"] >= 300 and not err_shape(r.get("body"))]
    rep.check(not bad, "every non-2xx reply is {\"error\":{code,message,field}}",
              "%d, e.g. %s %s" % (len(bad), bad[0]["s"] if bad else "", str(bad[0].get("body"))[:200] if bad else ""))
    codes = {}
    for r in recs:
        if r["s"] >= 300:
            k = "%d %s" % (r["s"], code_of(r))
            codes[k] = codes.get(k, 0) + 1
    print("   %s: %d requests, %d 2xx; replies not 2xx: %s" % (label, len(recs), len(acked), codes or "none"))
    if "--expect" in args:
        want = args["--expect"].split(",")
        got = [k for k in codes if k.split()[1] in want]
        rep.check(got, "the fault was answered %s" % "/".join(want), "codes %s" % codes)
    if "--window" in args:
        start, ms = (int(x) for x in args["--window"].split(","))
        end = start + ms
        after = [r for r in acked if r["t0"] > end]
        rep.check(after, "writes succeed again after the window (%d 2xx after it)" % len(after))
        if "--expect" in args:
            failed_in = [r for r in recs if r["s"] >= 300 and r["t1"] >= start]
            rep.check(failed_in, "writes failed in the window (%d)" % len(failed_in))
    return rep.failed


def cmd_dbcheck(db, outp, args):
    recs = json.load(open(outp))
    rep = Report(args.get("--label", "db"))
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    q = {"task": "SELECT 1 FROM tasks WHERE name = ?",
         "action": "SELECT 1 FROM actions WHERE summary = ?",
         "message": "SELECT 1 FROM task_messages WHERE content = ?",
         "items": "SELECT 1 FROM plan_items WHERE title = ?",
         "patch": "SELECT 1 FROM tasks WHERE json_extract(metadata, '$.storm') = ?"}
    stored = lambda r: con.execute(q[r["k"]], (r["tok"],)).fetchone() is not None
    # Every error but not_durable says "nothing was stored": an internal
    # 500 for a stored write is as false as an io_error one.
    failed = [r for r in recs if r["s"] >= 400 and code_of(r) not in (None, "not_durable")]
    kept = [r for r in failed if stored(r)]
    rep.check(not kept, "no write answered with an error (but not_durable) is stored (%d such replies)" % len(failed),
              "%d stored, e.g. %s" % (len(kept), kept[0]["tok"] if kept else ""))
    nd = [r for r in recs if code_of(r) == "not_durable"]
    print("   %s: %d not_durable replies, %d of them stored after the restart"
          % (rep.label, len(nd), sum(1 for r in nd if stored(r))))
    return rep.failed


def opts(argv):
    d, i = {}, 0
    while i < len(argv):
        if argv[i] in ("--lost-ok",):
            d[argv[i]] = True
            i += 1
        else:
            d[argv[i]] = argv[i + 1]
            i += 2
    return d


def main():
    a = sys.argv[1:]
    if a[0] == "run":
        cmd_run(a[1], a[2], float(a[3]), int(a[4]), *(a[5:6] + [float(x) for x in a[6:7]]))
        return 0
    if a[0] == "check":
        return 1 if cmd_check(a[1], a[2], opts(a[3:])) else 0
    if a[0] == "dbcheck":
        return 1 if cmd_dbcheck(a[1], a[2], opts(a[3:])) else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
