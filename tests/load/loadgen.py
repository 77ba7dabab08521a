#!/usr/bin/env python3
"""loadgen.py - load for tests/load/run.sh (Python standard library only).

  loadgen.py writes URL SECONDS THREADS ACKED TASK...
      THREADS keep-alive connections POST actions (and every 10th a message)
      to the tasks for SECONDS; every action detmd acknowledged (2xx) is
      appended to ACKED (one action id a line, flushed at once, so a kill -9
      of detmd loses nothing acknowledged from the file). Connection errors
      (detmd killed) end a thread quietly. Prints "acked N errors_before_kill M".

  loadgen.py mcp URL PROXY CLIENTS CALLS
      CLIENTS detm-mcp processes (PROXY --url URL), each initialised, then
      CALLS rounds of task_register / task_log_action / task_summary /
      task_list over stdio, all at once. Prints "calls N errors M actions A".

  loadgen.py readback URL SECONDS THREADS TASK...
      THREADS keep-alive connections POST actions (and every 5th a log on
      the action before) and, as soon as a 2xx comes, read the action back
      on a second connection (GET /api/tasks/{id}/actions/{aid}, a WAL
      read connection: committed data only). A write acknowledged before
      its COMMIT would sometimes read back 404. Prints
      "acked N unseen M logs L logs_unseen K errors E".

  loadgen.py mixed URL SECONDS THREADS TASK
      THREADS HTTP clients doing GET task / GET list / POST action for
      SECONDS. Prints "requests N errors M actions A".
"""
import http.client, json, subprocess, sys, threading, time
from urllib.parse import urlparse


def conn(url):
    u = urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30)


def writes(url, seconds, threads, acked_path, tasks):
    lock = threading.Lock()
    out = open(acked_path, "a")
    stats = {"acked": 0, "errors": 0}
    end = time.time() + seconds

    def run(k):
        c = conn(url)
        n = 0
        while time.time() < end:
            t = tasks[(k + n) % len(tasks)]
            n += 1
            try:
                if n % 10 == 0:
                    body = {"content": f"note {k}-{n}"}
                    c.request("POST", f"/api/tasks/{t}/messages", json.dumps(body), {"Content-Type": "application/json"})
                    r = c.getresponse(); r.read()
                    continue
                body = {"action_type": "cli", "summary": f"w-{k}-{n}"}
                c.request("POST", f"/api/tasks/{t}/actions", json.dumps(body), {"Content-Type": "application/json"})
                r = c.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException):
                return            # detmd went away
            if 200 <= r.status < 300:
                aid = json.loads(data)["action_id"]
                with lock:
                    out.write(aid + "\n"); out.flush()
                    stats["acked"] += 1
            else:
                with lock:
                    stats["errors"] += 1

    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    print(f"acked {stats['acked']} errors_before_kill {stats['errors']}")


def readback(url, seconds, threads, tasks):
    lock = threading.Lock()
    stats = {"acked": 0, "unseen": 0, "logs": 0, "logs_unseen": 0, "errors": 0}
    end = time.time() + seconds
    hdr = {"Content-Type": "application/json"}

    def run(k):
        w, rd = conn(url), conn(url)
        n, last = 0, None
        while time.time() < end:
            t = tasks[(k + n) % len(tasks)]
            n += 1
            try:
                if n % 5 == 0 and last is not None:
                    lt, la = last
                    w.request("POST", f"/api/tasks/{lt}/actions/{la}/logs",
                              json.dumps({"content": f"log {k}-{n}"}), hdr)
                    r = w.getresponse(); r.read()
                    if not 200 <= r.status < 300:
                        with lock: stats["errors"] += 1
                        continue
                    rd.request("GET", f"/api/tasks/{lt}/actions/{la}")
                    g = rd.getresponse(); body = g.read()
                    seen = g.status == 200 and any(l.get("content") == f"log {k}-{n}"
                                                   for l in json.loads(body).get("logs", []))
                    with lock:
                        stats["logs"] += 1
                        stats["logs_unseen"] += 0 if seen else 1
                    continue
                w.request("POST", f"/api/tasks/{t}/actions",
                          json.dumps({"action_type": "cli", "summary": f"r-{k}-{n}"}), hdr)
                r = w.getresponse(); data = r.read()
                if not 200 <= r.status < 300:
                    with lock: stats["errors"] += 1
                    continue
                aid = json.loads(data)["action_id"]
                last = (t, aid)
                rd.request("GET", f"/api/tasks/{t}/actions/{aid}")
                g = rd.getresponse(); g.read()
            except (OSError, http.client.HTTPException):
                with lock: stats["errors"] += 1
                return
            with lock:
                stats["acked"] += 1
                stats["unseen"] += 0 if g.status == 200 else 1

    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("acked {acked} unseen {unseen} logs {logs} logs_unseen {logs_unseen} errors {errors}".format(**stats))


def mcp(url, proxy, clients, calls):
    stats = {"calls": 0, "errors": 0, "actions": 0}
    lock = threading.Lock()

    def run(k):
        p = subprocess.Popen([proxy, "--url", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, bufsize=1)
        rid = [0]

        def call(method, params):
            rid[0] += 1
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid[0], "method": method, "params": params}) + "\n")
            p.stdin.flush()
            while True:
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError("proxy closed")
                m = json.loads(line)
                if m.get("id") == rid[0]:
                    return m

        def tool(name, args):
            m = call("tools/call", {"name": name, "arguments": args})
            ok = "result" in m and not m["result"].get("isError")
            with lock:
                stats["calls"] += 1
                if not ok:
                    stats["errors"] += 1
            return m.get("result", {}).get("structuredContent", {}) if ok else None

        try:
            call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": f"load-{k}", "version": "1"}})
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            for i in range(calls):
                t = tool("task_register", {"name": f"mcp load {k}-{i}", "plan": ["a", "b"]})
                if not t:
                    continue
                if tool("task_log_action", {"task_id": t["task_id"], "action_type": "other", "summary": f"m-{k}-{i}"}) is not None:
                    with lock:
                        stats["actions"] += 1
                tool("task_summary", {"task_id": t["task_id"], "detail_level": "actions"})
                tool("task_list", {"status": "all", "limit": 5})
        except Exception as e:  # noqa: BLE001 - counted, not hidden
            with lock:
                stats["errors"] += 1
            print(f"client {k}: {e}", file=sys.stderr)
        finally:
            p.stdin.close()
            p.wait(timeout=10)

    ts = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in ts: t.start()
    for t in ts: t.join()
    print(f"calls {stats['calls']} errors {stats['errors']} actions {stats['actions']}")


def mixed(url, seconds, threads, task):
    stats = {"requests": 0, "errors": 0, "actions": 0}
    lock = threading.Lock()
    end = time.time() + seconds

    def run(k):
        c = conn(url)
        n = 0
        while time.time() < end:
            n += 1
            if n % 3 == 0:
                c.request("POST", f"/api/tasks/{task}/actions", json.dumps({"action_type": "cli", "summary": f"x-{k}-{n}"}),
                          {"Content-Type": "application/json"})
            elif n % 3 == 1:
                c.request("GET", f"/api/tasks/{task}?detail=focused")
            else:
                c.request("GET", "/api/tasks?status=all&limit=20")
            r = c.getresponse(); r.read()
            with lock:
                stats["requests"] += 1
                if not 200 <= r.status < 300:
                    stats["errors"] += 1
                elif n % 3 == 0:
                    stats["actions"] += 1

    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    print(f"requests {stats['requests']} errors {stats['errors']} actions {stats['actions']}")


if __name__ == "__main__":
    a = sys.argv
    if a[1] == "writes":
        writes(a[2], float(a[3]), int(a[4]), a[5], a[6:])
    elif a[1] == "mcp":
        mcp(a[2], a[3], int(a[4]), int(a[5]))
    elif a[1] == "readback":
        readback(a[2], float(a[3]), int(a[4]), a[5:])
    elif a[1] == "mixed":
        mixed(a[2], float(a[3]), int(a[4]), a[5])
    else:
        sys.exit(__doc__)
