#!/usr/bin/env python3
"""controls.py - operators racing on one task (tests/persist/run.sh, section 4).

  controls.py run URL CLIENTS ROUNDS TASK OUT
      CLIENTS HTTP clients (own keep-alive connection each, released at
      once) send ROUNDS random pause/resume/cancel calls each to TASK, every
      one with a unique reason "op-K-N"; cancel only in the last third of a
      client's rounds, so the task is paused and resumed many times first.
      Meanwhile an agent logs actions to TASK until the operators are done.
      Then one more cancel, so the task ends cancelled. Writes OUT (JSON:
      the acknowledged reasons and action ids, and the counts). Prints
      "ok NAME" / "FAIL NAME: why" lines for: no 5xx or other unexpected
      status (only 2xx, and 409 once the task is cancelled).

  controls.py check URL TASK OUT
      Reads TASK's thread and checks it against OUT; prints "ok"/"FAIL"
      lines: every acknowledged control is recorded exactly once and nothing
      else is; the control and lifecycle messages replay as a walk of the
      task status machine (written out here, independently of detmd) that
      ends in the task's status; each transition is a control message
      immediately followed by its lifecycle message; created_at never goes
      back in thread order; every acknowledged action is there.

Python standard library only.
"""
import http.client, json, random, re, sys, threading
from urllib.parse import urlparse

# The task machine of docs/api.md, spelled out here on purpose.
MOVES = {("active", "paused"), ("active", "completed"), ("active", "failed"),
         ("active", "cancelled"), ("paused", "active"), ("paused", "cancelled")}
TARGET = {"pause": "paused", "resume": "active", "cancel": "cancelled"}
DONE = {"paused": "paused", "active": "resumed", "cancelled": "cancelled"}


def conn(url):
    u = urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def call(c, method, path, body=None):
    hdr = {"Content-Type": "application/json"} if body is not None else {}
    c.request(method, path, json.dumps(body) if body is not None else None, hdr)
    r = c.getresponse()
    return r.status, r.read()


def run(url, clients, rounds, task, out_path):
    lock = threading.Lock()
    go = threading.Barrier(clients + 1)
    acked, actions, bad = [], [], []
    stats = {"requests": 0, "conflicts": 0}
    done = threading.Event()

    def operator(k):
        rng = random.Random(k)
        c = conn(url)
        go.wait()
        for n in range(rounds):
            verbs = ["pause", "resume"] + (["cancel"] if n >= rounds * 2 // 3 else [])
            verb = rng.choice(verbs)
            reason = f"op-{k}-{n}"
            try:
                st, data = call(c, "POST", f"/api/tasks/{task}/{verb}", {"reason": reason})
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    bad.append(f"{verb} {reason}: {e}")
                return
            with lock:
                stats["requests"] += 1
                if 200 <= st < 300:
                    acked.append({"reason": reason, "verb": verb})
                elif st == 409 and verb != "cancel":
                    stats["conflicts"] += 1
                else:
                    bad.append(f"{verb} {reason}: {st} {data[:200]!r}")

    def agent():
        c = conn(url)
        n = 0
        go.wait()
        while not done.is_set():
            n += 1
            try:
                st, data = call(c, "POST", f"/api/tasks/{task}/actions",
                                {"action_type": "cli", "summary": f"agent step {n}"})
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    bad.append(f"action {n}: {e}")
                return
            with lock:
                if 200 <= st < 300:
                    actions.append(json.loads(data)["action_id"])
                else:
                    bad.append(f"action {n}: {st} {data[:200]!r}")

    ops = [threading.Thread(target=operator, args=(k,)) for k in range(clients)]
    ag = threading.Thread(target=agent)
    for t in ops + [ag]:
        t.start()
    for t in ops:
        t.join()
    done.set()
    ag.join()
    st, data = call(conn(url), "POST", f"/api/tasks/{task}/cancel", {"reason": "op-final"})
    if 200 <= st < 300:
        acked.append({"reason": "op-final", "verb": "cancel"})
    else:
        bad.append(f"final cancel: {st} {data[:200]!r}")
    with open(out_path, "w") as f:
        json.dump({"acked": acked, "actions": actions, **stats}, f)
    print(f"   {stats['requests']} operator calls from {clients} clients: {len(acked)} acknowledged, "
          f"{stats['conflicts']} refused (409 after the cancel); {len(actions)} agent actions")
    report("no 5xx or unexpected status from operators or the agent", not bad, "; ".join(bad[:5]))
    report("the agent logged actions while the operators clicked", len(actions) > 0, "none")


def report(name, good, why=""):
    print(f"ok   {name}" if good else f"FAIL {name}: {why}")


CTRL_MOVE = re.compile(r"^Operator (paused|resumed|cancelled) the task: (op-[0-9a-z-]+)$")
CTRL_NOOP = re.compile(r"^Operator: (pause|resume|cancel) changed nothing "
                       r"\(the task was already (\w+)\): (op-[0-9a-z-]+)$")
LIFE = re.compile(r"^Status changed: (\w+) → (\w+)$")


def replay(msgs):
    """Walks the thread; returns (problems, final state, reasons seen)."""
    problems, seen = [], []
    state = None
    i = 0
    while i < len(msgs):
        m, c = msgs[i], msgs[i]["content"]
        t = m["msg_type"]
        if t == "lifecycle" and c.startswith("Task registered"):
            if state is not None:
                problems.append(f"#{i}: registered twice")
            state = "active"
        elif t == "lifecycle":
            problems.append(f"#{i}: status change without a control message before it: {c}")
            lm = LIFE.match(c)
            if lm:
                state = lm.group(2)
        elif t == "control":
            mv, nop = CTRL_MOVE.match(c), CTRL_NOOP.match(c)
            if mv:
                to = {v: k for k, v in DONE.items()}[mv.group(1)]
                seen.append(mv.group(2))
                nxt = msgs[i + 1] if i + 1 < len(msgs) else None
                lm = LIFE.match(nxt["content"]) if nxt and nxt["msg_type"] == "lifecycle" else None
                if lm is None:
                    problems.append(f"#{i}: transition '{c}' is not followed by its lifecycle message")
                else:
                    frm, to2 = lm.groups()
                    if frm != state or to2 != to or (frm, to2) not in MOVES:
                        problems.append(f"#{i}: '{c}' + '{nxt['content']}' from state {state}")
                    i += 1
                state = to
            elif nop:
                seen.append(nop.group(3))
                if TARGET[nop.group(1)] != state or nop.group(2) != state:
                    problems.append(f"#{i}: '{c}' but the task was {state}")
            else:
                problems.append(f"#{i}: unreadable control message: {c}")
        i += 1
    return problems, state, seen


def check(url, task, out_path):
    with open(out_path) as f:
        out = json.load(f)
    c = conn(url)
    st, data = call(c, "GET", f"/api/tasks/{task}/messages?limit=1000")
    th = json.loads(data)
    msgs = th["messages"]
    report("the whole thread is read", st == 200 and th["message_count"] == len(msgs),
           f"{st}, {th.get('message_count')} messages, {len(msgs)} read")
    times = [m["created_at"] for m in msgs]
    back = [i for i in range(1, len(times)) if times[i] < times[i - 1]]
    report("created_at never goes back in thread order", not back,
           f"at {[(i, times[i - 1], times[i]) for i in back[:3]]}")
    problems, state, seen = replay(msgs)
    report("control + lifecycle messages replay as a walk of the status machine", not problems,
           "; ".join(problems[:4]) + f" ({len(problems)} problems)")
    report(f"the walk ends in the task's status ({th['status']})", state == th["status"] == "cancelled",
           f"walk ends {state}, task {th['status']}")
    acked = [a["reason"] for a in out["acked"]]
    missing = set(acked) - set(seen)
    report(f"every acknowledged control ({len(acked)}) is in the thread", not missing,
           f"missing {sorted(missing)[:5]}")
    dup = len(seen) - len(set(seen))
    extra = set(seen) - set(acked)
    report("no control recorded twice, none that was refused", dup == 0 and not extra,
           f"{dup} duplicates, refused but recorded {sorted(extra)[:5]}")
    moves = sum(1 for m in msgs if m["msg_type"] == "lifecycle" and m["content"].startswith("Status"))
    report(f"the task really moved ({moves} transitions)", moves >= 3, f"{moves}")
    got, off = set(), 0
    while True:   # the drill-down of item 0 (the current item), page by page
        st, data = call(c, "GET", f"/api/tasks/{task}/items/0?limit=1000&offset={off}")
        page = json.loads(data).get("actions", []) if st == 200 else []
        got.update(a["action_id"] for a in page)
        off += len(page)
        if len(page) < 1000:
            break
    lost = set(out["actions"]) - got
    report(f"every acknowledged agent action ({len(out['actions'])}) is there", not lost,
           f"missing {len(lost)}")


if __name__ == "__main__":
    a = sys.argv
    if len(a) == 7 and a[1] == "run":
        run(a[2], int(a[3]), int(a[4]), a[5], a[6])
    elif len(a) == 5 and a[1] == "check":
        check(a[2], a[3], a[4])
    else:
        sys.exit(__doc__)
