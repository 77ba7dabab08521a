// takeover.mjs - a human drives a task's desktop from the dashboard:
// Debian's chromium (headless, playwright-core) against the real detmd
// run.sh started (DETM_URL), a real Xvfb task display with xev (to see where
// the ButtonPress lands) and an xterm whose cat writes what arrives to a
// file; bin/wake-recv records wake events (WAKE_LOG); bin/detm-mcp carries
// request_human. Prints "N passed, N failed".
import { apiAt, checker, until } from "../lib.mjs";
import { chromium } from "../dashboard/node_modules/playwright-core/index.mjs";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

const url = process.env.DETM_URL, out = process.env.OUT, wakeLog = process.env.WAKE_LOG;
const T = checker(400), check = T.check, api = apiAt(url);
const kids = [];
const wakes = () => existsSync(wakeLog) ? readFileSync(wakeLog, "utf8").split("\n").filter(Boolean)
  .map((l) => { try { return JSON.parse(l.slice(l.indexOf("{"))); } catch { return null; } }).filter(Boolean) : [];
const read = (f) => existsSync(f) ? readFileSync(f, "utf8") : "";

// xev's ButtonPress events as {x, y} root coordinates.
let xevOut = "";
const presses = () => [...xevOut.matchAll(/ButtonPress event[^]*?root:\((\d+),(\d+)\)[^]*?button (\d+)/g)].map((m) => ({ x: +m[1], y: +m[2], b: +m[3] }));
// An audited point within 2 px of (x, y): the view is scaled, so a CSS pixel
// can round to the neighbouring screen pixel (as pressedNear allows).
const auditNear = (acts, kind, x, y) => acts.some((a) => {
  const m = new RegExp(`^human: ${kind} at \\((\\d+), (\\d+)\\)$`).exec(a);
  return m !== null && Math.abs(+m[1] - x) <= 2 && Math.abs(+m[2] - y) <= 2;
});
const pressedNear = (x, y) => presses().some((p) => Math.abs(p.x - x) <= 2 && Math.abs(p.y - y) <= 2);

// A minimal MCP client over detm-mcp's stdio.
function mcp() {
  const p = spawn(`${process.env.DETM_BIN}/detm-mcp`, [], { env: { ...process.env, ACU_DAEMON_URL: url }, stdio: ["pipe", "pipe", "ignore"] });
  kids.push(p);
  let buf = "", id = 0;
  const waiting = new Map();
  p.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      try { const m = JSON.parse(line); if (waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); } } catch { /* not ours */ }
    }
  });
  const call = (method, params) => new Promise((res) => { id++; waiting.set(id, res); p.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"); });
  const note = (method) => p.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
  return { call, note };
}

async function viewPoint(page, sx, sy, sw, sh) {
  const b = await page.locator("#live").boundingBox();
  return { x: b.x + (sx + 0.5) * b.width / sw, y: b.y + (sy + 0.5) * b.height / sh };
}

// A task without a plan, taken over through the API: a batch with one bad
// event is refused whole (nothing typed), the human's actions are
// task-level `human` actions the dashboard shows, and the replay jumps to
// the takeover span of the recording.
async function noPlan(page) {
  const t3 = (await api("POST", "/api/tasks", { name: "No plan", display: true, display_resolution: "640x480" })).json;
  const T3 = t3.task_id, typed3 = `${out}/typed3.txt`;
  const env = { ...process.env, DISPLAY: t3.metadata.display, XAUTHORITY: t3.metadata.xauthority, LC_ALL: "C.UTF-8" };
  kids.push(spawn("xterm", ["-geometry", "50x10+0+0", "-fa", "Mono", "-fs", "14", "-T", "np-xterm", "-e", "sh", "-c", `cat > ${typed3}`], { env, stdio: "ignore" }));
  check("an xterm runs on the plan-less task's display, which is being recorded", await until(async () => existsSync(typed3) &&
    ((await api("POST", "/api/desktop/action", { task_id: T3, action: "list_windows" })).json.windows || []).some((w) => w.title === "np-xterm") &&
    (await api("GET", `/api/tasks/${T3}`)).json.recording.frames >= 1, 20000));
  // A smart wait for what the human will type: it must not look while they drive.
  const w = await api("POST", "/api/waits", { task_id: T3, wake_when: 'text:"good morning"', timeout: 300 });
  check("a smart wait (OCR) watches the plan-less task's screen", w.status === 201, w.text);
  const waitNow = async () => (await api("GET", `/api/waits/${w.json.wait_id}`)).json;
  const tk = await api("POST", `/api/tasks/${T3}/takeover`, { reason: "type the password" });
  check("the operator takes it over through the API", tk.status === 200 && /^[0-9a-f]{32}$/.test(tk.json.lease), tk.text);
  const input = (events) => api("POST", `/api/tasks/${T3}/input`, { lease: tk.json.lease, events });
  const bad = [
    [[{ t: "down", b: 1, x: 100, y: 50 }, { t: "up", b: 1, x: 100, y: 50 }, { t: "text", s: "bad" }, { t: "key", k: "ctrl+nosuchkey" }], "events[3].k"],
    [[{ t: "text", s: "bad" }, { t: "move", x: "10", y: 5 }], "events[1].x"],
    [[{ t: "text", s: "bad" }, { t: "warp" }], "events[1].t"],
    [[{ t: "text", s: "bad" }, { t: "down", b: 7, x: 1, y: 1 }], "events[1].b"],
    [[{ t: "text", s: "bad" }, { t: "text", s: "tab\u0007" }], "events[1].s"],
    [[{ t: "text", s: "bad" }, { t: "up", b: 1, x: 1, y: 1, x0: 5 }], "events[1].y0"],
  ];
  for (const [events, field] of bad) {
    const r = await api("POST", `/api/tasks/${T3}/input`, { lease: tk.json.lease, events });
    check(`a batch with a bad ${field} is refused whole: 400 naming it`, r.status === 400 && r.json.error.code === "invalid_argument" &&
      r.json.error.field === field && /nothing in this batch was injected/.test(r.json.error.message), r.text);
  }
  const good = await input([{ t: "down", b: 1, x: 100, y: 50 }, { t: "up", b: 1, x: 100, y: 50 }, { t: "text", s: "good morning" }, { t: "key", k: "Return" }]);
  check("a good batch after them is injected", good.status === 200 && good.json.injected === 4, good.text);
  check("only the good batch's text reached the xterm (the refused ones typed nothing)", await until(() => read(typed3) === "good morning\n") &&
    read(typed3) === "good morning\n", JSON.stringify(read(typed3)));
  // A wait is ticked by one worker at a time: once a tick has not looked
  // (skipped_human), no check begun before the takeover is still running.
  let first = null;
  await until(async () => (first = await waitNow()).skipped_human >= 1, 30000);
  check("while the human drives, the wait's checks do not look at the screen", await until(async () => {
    const x = await waitNow();
    return x.status === "watching" && x.skipped_human >= first.skipped_human + 2 && x.evaluations === first.evaluations;
  }, 30000), JSON.stringify((({ status, evaluations, skipped_human }) => ({ status, evaluations, skipped_human, first: [first.evaluations, first.skipped_human] }))(await waitNow())));
  const el = await api("GET", `/api/desktop/elements?task_id=${T3}`);
  check("the agent's accessibility tree is refused meanwhile (409 human_control)", el.status === 409 && el.json.error.code === "human_control", el.text);
  const clip = await api("POST", "/api/record", { task_id: T3, duration: 2, wait: false });
  check("and so is a video_record clip", clip.status === 409 && clip.json.error.code === "human_control", clip.text);
  const rel = await api("POST", `/api/tasks/${T3}/release`, { lease: tk.json.lease, note: "done" });
  check("the operator hands it back", rel.status === 200 && rel.json.clicks === 1, rel.text);
  const done = await api("GET", `/api/waits/${w.json.wait_id}?block_s=60`);
  check("after the release the wait looks again and sees what the human typed", done.json.status === "resolved" &&
    done.json.judged_by === "ocr", done.text.slice(0, 400));

  const sum = (await api("GET", `/api/tasks/${T3}?detail=actions`)).json;
  const acts = sum.task_actions || [];
  const sums = acts.map((a) => a.summary);
  check("a task without a plan lists the human's input as task-level human actions", sum.items.length === 0 &&
    sum.unassigned_actions === acts.length && sums.includes("human: click at (100, 50)") && sums.includes("human: typed 12 characters") &&
    sums.includes("human: pressed Return") && acts.filter((a) => /^human:/.test(a.summary)).every((a) => a.action_type === "human" && a.ordinal === null),
    JSON.stringify(acts.map((a) => [a.action_type, a.summary])));
  check("nothing of the refused batches was audited", !sums.some((a) => /typed 3 char|nosuchkey/.test(a)), sums.join(" | "));

  await page.locator(`#tasks li[data-id="${T3}"] .task-btn`).click();
  check("the dashboard's plan panel shows the task-level actions", await until(async () =>
    (await page.locator('#items li[data-ordinal="task"]').count()) === 1));
  await page.locator('#items li[data-ordinal="task"] > button').click();
  check("with the human's actions marked as such", await until(async () =>
    (await page.locator('#items li[data-ordinal="task"] .action.human').count()) >= 5 &&
    /human: click at \(100, 50\)/.test(await page.locator('#items li[data-ordinal="task"]').innerText())));

  await api("PATCH", `/api/tasks/${T3}`, { status: "completed" });
  check("the recording is finished when the task completes", await until(async () =>
    (await api("GET", `/api/tasks/${T3}`)).json.recording.state === "done", 20000));
  const idx = await api("GET", `/api/tasks/${T3}/recording/index`);
  const k = idx.status === 200 ? idx.json.takeovers : [];
  check("the recording index of a plan-less task has the takeover span", k.length === 1 && k[0].start_s !== null &&
    k[0].end_s !== null && k[0].end_s >= k[0].start_s && idx.json.actions.some((a) => a.event === "takeover" && a.ordinal === null),
    idx.text.slice(0, 600));
  await page.click("#v-replay");
  check("the replay lists the takeover", await until(async () => (await page.locator("#moments li.takeover").count()) === 1, 15000));
  await page.locator("#replay").evaluate((v) => { v.pause(); v.dataset.seeked = ""; v.addEventListener("seeking", () => { v.dataset.seeked = "1"; }); });
  await page.locator("#moments li.takeover button").click();
  check("and jumps to it", k.length === 1 && await until(async () => await page.locator("#replay").evaluate((v, at) =>
    v.dataset.seeked === "1" && v.currentTime >= at - 0.05, k[0].start_s)), String(k.length && k[0].start_s));
  await page.click("#v-live");
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  const ctxA = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await ctxA.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // ---- a task with its own display, xev and an xterm on it ----
  const t = (await api("POST", "/api/tasks", { name: "Log in", plan: ["log in"], display: true, display_resolution: "800x600" })).json;
  const T = t.task_id;
  await api("PATCH", `/api/tasks/${T}/items/0`, { status: "active" });
  const env = { ...process.env, DISPLAY: t.metadata.display, XAUTHORITY: t.metadata.xauthority, LC_ALL: "C.UTF-8" };
  const xev = spawn("xev", ["-geometry", "300x300+0+0", "-event", "button"], { env });
  kids.push(xev);
  xev.stdout.on("data", (d) => { xevOut += d; });
  const typed = `${out}/typed.txt`;
  kids.push(spawn("xterm", ["-u8", "-geometry", "40x8+400+0", "-T", "tk-xterm", "-e", "sh", "-c", `stty -echo; cat > ${typed}`], { env, stdio: "ignore" }));
  const titles = async () => ((await api("POST", "/api/desktop/action", { task_id: T, action: "list_windows" })).json.windows || []).map((w) => w.title);
  check("xev and the xterm run on the task's display", await until(async () => existsSync(typed) &&
    (await titles()).includes("tk-xterm") && (await titles()).includes("Event Tester"), 20000), JSON.stringify(await titles()));

  await page.goto(`${url}/dashboard#task=${T}`);
  check("the live view shows the task's display", await until(async () =>
    (await page.locator("#live").evaluate((i) => i.naturalWidth)) === 800, 20000));
  check("the agent drives at first", (await api("GET", `/api/tasks/${T}`)).json.driver.driver === "agent");

  // ---- take over ----
  await page.click("#b-takeover");
  check("Take over hands the desktop to this browser", await until(async () =>
    (await api("GET", `/api/tasks/${T}`)).json.driver.driver === "human" &&
    (await page.locator("#tk-state").getAttribute("data-mode")) === "driving"));
  check("the list shows a human driving", await until(async () =>
    (await page.locator(`#tasks li[data-id="${T}"] .badge.human`).count()) === 1));

  // ---- a click lands at the mapped screen point ----
  let p = await viewPoint(page, 100, 80, 800, 600);
  await page.mouse.click(p.x, p.y);
  check("a click in the live view is a ButtonPress at the mapped screen point (100, 80)",
    await until(() => pressedNear(100, 80)), JSON.stringify(presses()));

  p = await viewPoint(page, 120, 100, 800, 600);
  await page.mouse.dblclick(p.x, p.y);
  check("a double click is two presses there", await until(() => presses().filter((q) => Math.abs(q.x - 120) <= 2 && Math.abs(q.y - 100) <= 2).length === 2));
  p = await viewPoint(page, 130, 200, 800, 600);
  await page.mouse.click(p.x, p.y, { button: "right" });
  check("a right click is button 3", await until(() => presses().some((q) => q.b === 3 && Math.abs(q.x - 130) <= 2 && Math.abs(q.y - 200) <= 2)));
  const q0 = await viewPoint(page, 40, 250, 800, 600), q1 = await viewPoint(page, 240, 260, 800, 600);
  await page.mouse.move(q0.x, q0.y);
  await page.mouse.down();
  await page.mouse.move(q1.x, q1.y, { steps: 5 });
  await page.mouse.up();
  check("a drag presses at its start", await until(() => pressedNear(40, 250)));
  p = await viewPoint(page, 200, 120, 800, 600);
  await page.mouse.move(p.x, p.y);
  await page.mouse.wheel(0, 120);
  check("the wheel scrolls there (button 5)", await until(() => presses().some((q) => q.b === 5 &&
    Math.abs(q.x - 200) <= 2 && Math.abs(q.y - 120) <= 2)), JSON.stringify(presses().slice(-3)));

  // ---- the agent is fenced off meanwhile ----
  const before = presses().length;
  const da = await api("POST", "/api/desktop/action", { task_id: T, action: "click", x: 50, y: 50 });
  check("the agent's desktop_action gets 409 human_control with a sentence", da.status === 409 &&
    da.json.error.code === "human_control" && /human is driving/.test(da.json.error.message), da.text);
  const gd = await api("POST", "/api/gui/do", { task_id: T, instruction: "click(60, 60)" });
  check("the agent's gui_do gets 409 human_control", gd.status === 409 && gd.json.error.code === "human_control", gd.text);
  const cm = await api("POST", "/api/commands", { task_id: T, commands: [{ action: "click", parameters: { x: 70, y: 70 } }] });
  check("the agent's commands get 409 human_control", cm.status === 409 && cm.json.error.code === "human_control", cm.text);
  const ga = await api("POST", "/api/gui/agent", { task_id: T, instruction: "click the button" });
  check("the agent's gui_agent gets 409 human_control", ga.status === 409 && ga.json.error.code === "human_control", ga.text);
  const sh = await api("GET", `/api/desktop/screenshot?task_id=${T}&format=json`);
  check("the agent's screenshots are refused (the operator did not allow them)", sh.status === 409 && sh.json.error.code === "human_control", sh.text.slice(0, 200));

  // ---- a second browser watches read-only ----
  const ctxB = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const pageB = await ctxB.newPage();
  await pageB.goto(`${url}/dashboard#task=${T}`);
  check("a second browser gets a read-only view and a notice", await until(async () =>
    (await pageB.locator("#tk-state").getAttribute("data-mode")) === "readonly" &&
    /Read-only/.test(await pageB.locator("#tk-state").innerText()) && await pageB.locator("#b-takeover").isHidden()));
  await until(async () => (await pageB.locator("#live").evaluate((i) => i.naturalWidth)) === 800, 20000);
  const pb = await viewPoint(pageB, 200, 200, 800, 600);
  await pageB.mouse.click(pb.x, pb.y);
  const second = await api("POST", `/api/tasks/${T}/takeover`, { reason: "me too" });
  check("a second takeover of the display is refused (409)", second.status === 409, second.text);
  // The driver clicks once more: its press arrives; the read-only one, made before, never does.
  p = await viewPoint(page, 150, 150, 800, 600);
  await page.mouse.click(p.x, p.y);
  await until(() => pressedNear(150, 150));
  check("nothing the agent or the read-only browser sent reached the screen",
    pressedNear(150, 150) && !pressedNear(200, 200) && !pressedNear(50, 50) && !pressedNear(60, 60) &&
    !pressedNear(70, 70) && presses().length === before + 1, JSON.stringify(presses()));
  await ctxB.close();

  // ---- keyboard: any script and a chord, into the xterm ----
  kids.push(spawn("xmessage", ["-geometry", "+10+400", "a window the human opened"], { env, stdio: "ignore" }));
  // it must be up before the hand-back counts windows_opened (under load
  // xmessage mapped after the release once)
  // (asked of the X server: the agent's list_windows is refused while the
  // human drives)
  check("the window the human opened is up", await until(() =>
    spawnSync("xdotool", ["search", "--name", "^xmessage$"], { env }).status === 0, 20000));
  p = await viewPoint(page, 500, 60, 800, 600);
  await page.mouse.click(p.x, p.y);
  // Keys typed outside the view stay in the page (the browser's own
  // shortcuts too): were they sent, the xterm's exact text below would show them.
  await page.focus("#msg");
  await page.keyboard.type("zz");
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Backspace");
  await page.mouse.click(p.x, p.y);
  const text = "héllo Привет 你好";
  await page.keyboard.type(text);
  await page.keyboard.press("Control+l");
  await page.keyboard.press("Enter");
  check("mixed-script text and ctrl+l typed in the view arrive in the xterm", await until(() =>
    read(typed) === `${text}\f\n`), JSON.stringify(read(typed)));

  // ---- audit ----
  const sum = (await api("GET", `/api/tasks/${T}?detail=actions`)).json;
  const acts = sum.items[0].action_details.map((a) => a.summary);
  check("human input is in the task tree: clicks at x,y, typed N characters, the chord",
    auditNear(acts, "click", 100, 80) && acts.includes(`human: typed ${[...text].length} characters`) &&
    acts.includes("human: pressed ctrl+l") && acts.includes("human: pressed Return") &&
    auditNear(acts, "right-click", 130, 200) && acts.some((a) => /^human: drag from \(40, 250\) to \(2[34]\d, 2[56]\d\)$/.test(a)),
    acts.join(" | "));
  const humanActs = sum.items[0].action_details.filter((a) => /^human:/.test(a.summary));
  check("the human's actions have action_type human", humanActs.length >= 6 && humanActs.every((a) => a.action_type === "human"),
    JSON.stringify(humanActs.map((a) => a.action_type)));
  check("the typed text itself is recorded nowhere in the tree", !JSON.stringify(sum).includes("Привет"));

  // ---- hand back ----
  await page.fill("#tk-note", "logged in as demo");
  await page.click("#b-release");
  check("Hand back gives the desktop to the agent", await until(async () =>
    (await api("GET", `/api/tasks/${T}`)).json.driver.driver === "agent"));
  check("the agent is woken with the summary", await until(() => wakes().some((w) => w.event === "human_released" &&
    w.task_id === T && w.payload.clicks >= 3 && w.payload.keystrokes >= [...text].length + 2 &&
    w.payload.chords === 1 && w.payload.note === "logged in as demo" && w.payload.windows_opened >= 1)),
    JSON.stringify(wakes().filter((w) => w.event === "human_released")));
  check("the wake-up never carries the typed text", !read(wakeLog).includes("Привет") && !read(wakeLog).includes("héllo"));
  const msgs = (await api("GET", `/api/tasks/${T}/messages`)).json.messages;
  const iTake = msgs.findIndex((m) => m.msg_type === "control" && /took over the desktop/.test(m.content));
  const iBack = msgs.findIndex((m) => m.msg_type === "control" && /handed the desktop back/.test(m.content));
  check("the thread shows takeover, then release, as control messages", iTake >= 0 && iBack > iTake,
    msgs.map((m) => m.content).join(" | "));
  check("the release message names the note and the counts, not the text",
    iBack >= 0 && /logged in as demo/.test(msgs[iBack].content) && /click/.test(msgs[iBack].content) &&
    !/Привет/.test(msgs[iBack].content));
  const da2 = await api("POST", "/api/desktop/action", { task_id: T, action: "click", x: 250, y: 250 });
  check("after release the agent acts again", da2.status === 200 && await until(() => pressedNear(250, 250)), da2.text);
  const idx = await api("GET", `/api/tasks/${T}/recording/index`);
  const span = idx.status === 200 ? idx.json.actions.filter((a) => /^human: (took over|handed)/.test(a.summary)) : [];
  check("the recording index marks the takeover span (start and end moments)", span.length === 2 &&
    span.every((a) => a.t_s !== null && a.action_type === "human") && idx.json.takeovers.length === 1 &&
    idx.json.takeovers[0].start_s === span[0].t_s && idx.json.takeovers[0].end_s === span[1].t_s, idx.text.slice(0, 600));

  // ---- request_human through detm-mcp ----
  const t2 = (await api("POST", "/api/tasks", { name: "Two-factor", plan: ["sign in"], display: true, display_resolution: "640x480" })).json.task_id;
  const m = mcp();
  await m.call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "takeover-test", version: "1" } });
  m.note("notifications/initialized");
  const r = await m.call("tools/call", { name: "request_human", arguments: { task_id: t2, reason: "a two-factor code is needed",
    instructions: "type the code from the phone" } });
  const rid = r.result && r.result.structuredContent && r.result.structuredContent.request_id;
  check("request_human returns at once with a request id", r.result && !r.result.isError && /^[0-9a-f]{8}$/.test(rid || ""), JSON.stringify(r));
  check("the operator is woken (wake event human_needed)", await until(() => wakes().some((w) =>
    w.event === "human_needed" && w.task_id === t2 && w.payload.request_id === rid)));
  check("the list says the task needs a human", await until(async () =>
    (await page.locator(`#tasks li[data-id="${t2}"] .badge.help`).count()) === 1));
  check("and a banner says so", await until(async () => /needs a human: a two-factor code/.test(await page.locator("#banner").innerText())));
  await page.locator(`#tasks li[data-id="${t2}"] .task-btn`).click();
  check("the open task shows the request and its instructions", await until(async () =>
    /type the code from the phone/.test(await page.locator("#tk-help").innerText())));
  await page.click("#b-takeover");
  await until(async () => (await page.locator("#tk-state").getAttribute("data-mode")) === "driving");
  await page.click("#b-release");
  check("release wakes the agent of that task", await until(() => wakes().some((w) => w.event === "human_released" && w.task_id === t2)));
  const after = await m.call("tools/call", { name: "task_summary", arguments: { task_id: t2 } });
  check("task_summary shows the agent driving again, the request answered",
    after.result && after.result.structuredContent.driver.driver === "agent" && !after.result.structuredContent.driver.needs_human,
    JSON.stringify(after.result && after.result.structuredContent.driver));
  await noPlan(page);
  check("no script errors", errors.length === 0, errors.join(" | "));
  await browser.close();
}

try {
  await main();
} catch (e) {
  check("the browser run", false, e.stack || e);
} finally {
  for (const k of kids) k.kill("SIGKILL");
}
T.finish();
