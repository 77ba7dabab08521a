// dashboard.mjs - browser tests of detmd's /dashboard: Debian's chromium,
// headless, driven by playwright-core, against the real detmd run.sh
// started (DETM_URL, DETM_PID), with tasks seeded through the HTTP API and
// a real Xvfb task display with an xterm for the live view. Saves
// screenshots of the main views to $SHOTS. Prints "N passed, N failed".
import { apiAt, checker, until } from "../lib.mjs";
import { chromium } from "playwright-core";
import { spawn } from "node:child_process";

const url = process.env.DETM_URL;
const shots = process.env.SHOTS || "test-output/dashboard";
const T = checker(300), check = T.check, api = apiAt(url);
const xterms = [];

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu"] });
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error" && !/Failed to load resource/.test(m.text())) errors.push(m.text()); });
  const external = [];
  page.on("request", (r) => { if (!r.url().startsWith(url)) external.push(r.url()); });

  // ---- empty state ----
  await page.goto(`${url}/dashboard`);
  check("the page loads from detmd with its title", (await page.title()) === "detm");
  check("empty state: a hint to register a task",
    await until(async () => (await page.locator("#tasks-empty").isVisible()) &&
      (await page.locator("#tasks-empty").innerText()).includes("task_register")));
  check("live updates connect (SSE)", await until(async () => (await page.locator("#conn").innerText()) === "live"));
  await page.screenshot({ path: `${shots}/empty.png` });

  // ---- seed ----
  const a = (await api("POST", "/api/tasks", { name: "Export report", plan: ["Open app", "Export", "Verify", "Mail it"] })).json.task_id;
  await api("PATCH", `/api/tasks/${a}/items/0`, { status: "active" });
  await api("PATCH", `/api/tasks/${a}/items/0`, { status: "completed" });
  await api("PATCH", `/api/tasks/${a}/items/1`, { status: "active" });
  const act = (await api("POST", `/api/tasks/${a}/actions`, { action_type: "gui", summary: "clicked Export",
    input_data: { x: 640, y: 360 }, output_data: { backend: "uitars", model: "ui-tars-1.5-7b", x: 640, y: 360 } })).json.action_id;
  await api("POST", `/api/tasks/${a}/actions/${act}/logs`, { log_type: "info", content: "dialog opened" });
  await api("POST", `/api/tasks/${a}/actions`, { action_type: "cli", summary: "ls exports/" });
  const b = (await api("POST", "/api/tasks", { name: "Paused one", plan: ["x", "y"] })).json.task_id;
  await api("POST", `/api/tasks/${b}/pause`, {});
  const c = (await api("POST", "/api/tasks", { name: "Done one", plan: ["only"] })).json.task_id;
  await api("PATCH", `/api/tasks/${c}`, { status: "completed" });

  // ---- list: badges and progress, live ----
  check("new tasks appear without a reload (SSE)", await until(async () => (await page.locator("#tasks li").count()) === 3));
  const badge = async (id) => page.locator(`#tasks li[data-id="${id}"] .badge`).innerText();
  // The list shows a task when its creation event arrives; the pause and the
  // completion are later events, so on a busy machine they may still be on
  // their way when the third task appears: wait for them (a lost event fails).
  check("badges show each status", await until(async () => (await badge(a)) === "active" &&
    (await badge(b)) === "paused" && (await badge(c)) === "completed"),
    `${await badge(a)} ${await badge(b)} ${await badge(c)}`);
  check("progress: 1 of 4 items done", (await page.locator(`#tasks li[data-id="${a}"] .count`).innerText()) === "1/4" &&
    (await page.locator(`#tasks li[data-id="${a}"] .bar > div`).evaluate((d) => d.style.width)) === "25%");
  await page.selectOption("#filter", "paused");
  check("the filter shows only paused tasks", await until(async () => (await page.locator("#tasks li").count()) === 1 &&
    (await badge(b)) === "paused"));
  await page.selectOption("#filter", "all");
  await until(async () => (await page.locator("#tasks li").count()) === 3);

  // ---- the tree ----
  await page.locator(`#tasks li[data-id="${a}"] .task-btn`).focus();
  await page.keyboard.press("Enter");
  check("a task opens from the keyboard", await until(async () => (await page.locator("#t-name").innerText()) === "Export report"));
  await page.locator('#items .item[data-ordinal="1"] > button').click();
  check("expanding an item shows its actions", await until(async () => (await page.locator('#items .item[data-ordinal="1"] .action').count()) === 2));
  check("and their logs", (await page.locator(`#items .action[data-id="${act}"] .logs`).innerText()).includes("dialog opened"));
  const facts = await page.locator(`#items .action[data-id="${act}"] .facts`).innerText();
  check("an action shows its backend, model and coordinates", facts.includes("uitars") && facts.includes("ui-tars-1.5-7b") &&
    facts.includes("(640, 360)"), facts);
  await api("POST", `/api/tasks/${a}/actions`, { action_type: "reasoning", summary: "export looks right" });
  check("a new action appears in the open item without a reload", await until(async () =>
    (await page.locator('#items .item[data-ordinal="1"] .action').count()) === 3));
  await api("POST", `/api/tasks/${a}/messages`, { content: "please also export the CSV", role: "user" });
  check("a message posted through the API appears in the feed (SSE)", await until(async () =>
    (await page.locator("#msgs").innerText()).includes("please also export the CSV")));
  check("messages are colour-coded by role", (await page.locator("#msgs .msg.user").count()) >= 1 &&
    (await page.locator("#msgs .msg.system").count()) >= 1);
  await page.fill("#msg", "operator note");
  await page.press("#msg", "Enter");
  check("the operator can post a message", await until(async () => {
    const m = (await api("GET", `/api/tasks/${a}/messages`)).json.messages;
    return m.some((x) => x.content === "operator note" && x.role === "user");
  }));
  // A text condition: judged by OCR in detmd, so no model server is needed.
  const w = await api("POST", "/api/waits", { task_id: a, target: "screen", wake_when: 'text:"export finished"', timeout: 300 });
  check(`a text wait is created without a model (${w.status})`, w.status === 201);
  check("a wait in progress shows its condition and time left", await until(async () =>
    (await page.locator("#waits").innerText()).includes("export finished") &&
    /\d+ s left/.test(await page.locator("#waits").innerText())));
  await page.screenshot({ path: `${shots}/task.png`, fullPage: true });

  // ---- controls ----
  await page.click("#b-pause");
  check("Pause pauses the task in the daemon", await until(async () => (await api("GET", `/api/tasks/${a}`)).json.status === "paused"));
  check("and the page shows it", await until(async () => (await page.locator("#t-status").innerText()) === "paused"));
  await page.click("#b-resume");
  check("Resume resumes it", await until(async () => (await api("GET", `/api/tasks/${a}`)).json.status === "active"));
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.dismiss(); });
  await page.click("#b-cancel");
  await new Promise((r) => setTimeout(r, 300));
  check("Cancel asks first; dismissing keeps the task", asked.includes("Cancel") &&
    (await api("GET", `/api/tasks/${a}`)).json.status === "active", asked);
  page.once("dialog", (d) => d.accept());
  await page.click("#b-cancel");
  check("confirmed Cancel cancels it", await until(async () => (await api("GET", `/api/tasks/${a}`)).json.status === "cancelled"));
  check("the controls follow the status", await until(async () => await page.locator("#b-cancel").isDisabled() &&
    await page.locator("#b-pause").isDisabled()));

  // ---- live view, screenshots, recording ----
  const caps = (await api("GET", "/api/capabilities")).json.capabilities;
  const d = (await api("POST", "/api/tasks", { name: "On screen", plan: ["look"], display: true, display_resolution: "800x600" })).json;
  const dt = d.task_id;
  const env = { ...process.env, DISPLAY: d.metadata.display, XAUTHORITY: d.metadata.xauthority };
  xterms.push(spawn("xterm", ["-T", "detm-dash-xterm", "-geometry", "60x15+10+10", "-e", "sh", "-c",
    "while :; do date +%N; sleep 0.3; done"], { env, stdio: "ignore" }));
  await until(async () => (await page.locator(`#tasks li[data-id="${dt}"]`).count()) === 1);
  await page.locator(`#tasks li[data-id="${dt}"] .task-btn`).click();
  if (caps.recording) {
    check("the live view shows frames of the task's display", await until(async () =>
      (await page.locator("#live").evaluate((i) => i.naturalWidth)) === 800, 15000));
    check("one capture serves the page", await until(async () =>
      (await api("GET", "/api/live")).json.streams.some((s) => s.task_id === dt && s.viewers >= 1)));
    check("the recording state is shown", await until(async () => /^Recording · \d+ frames/.test(await page.locator("#rec-state").innerText())));
    await api("POST", "/api/gui/do", { task_id: dt, instruction: "click(20, 20)" });
    await page.locator('#items .item[data-ordinal="0"] > button').click();
    check("a gui action shows its screenshot thumbnail", await until(async () =>
      (await page.locator("#items .action .thumb img").count()) === 1 &&
      (await page.locator("#items .action .thumb img").evaluate((i) => i.naturalWidth)) > 0));
    await page.locator("#items .action .thumb").click();
    check("the thumbnail opens in a lightbox", await page.locator("#lightbox").isVisible());
    await page.keyboard.press("Escape");
    check("Escape closes it", await page.locator("#lightbox").isHidden());
    await page.screenshot({ path: `${shots}/live.png`, fullPage: true });
    await new Promise((r) => setTimeout(r, 1500));
    await api("PATCH", `/api/tasks/${dt}`, { status: "completed" });
    const dl = page.locator(`#tasks li[data-id="${dt}"] a.dl`);
    check("a completed task gets a download button", await until(async () => (await dl.count()) === 1));
    check("tasks without a recording get none", (await page.locator(`#tasks li[data-id="${c}"] a.dl`).count()) === 0);
    check("a finished task offers no recording start", await until(async () => await page.locator("#b-rec").isHidden()));
    const got = await page.evaluate(async (href) => {
      const r = await fetch(href);
      const buf = new Uint8Array(await r.arrayBuffer());
      return { status: r.status, type: r.headers.get("content-type"), ftyp: String.fromCharCode(...buf.slice(4, 8)) };
    }, await dl.getAttribute("href"));
    check("the download link returns the MP4", got.status === 200 && got.type === "video/mp4" && got.ftyp === "ftyp", JSON.stringify(got));
    await page.click("#v-replay");
    check("replay plays the recording and lists action moments", await until(async () =>
      (await page.locator("#replay").evaluate((v) => v.readyState >= 1 && v.duration > 0)) &&
      (await page.locator("#moments li").count()) >= 1, 15000));
    await page.locator("#moments button").first().click();
    check("jumping to an action seeks the video", await until(async () =>
      (await page.locator("#replay").evaluate((v) => v.currentTime)) > 0));
  } else {
    check("without recording support the page says so", (await page.locator("#live-note").innerText()).includes("not available"));
  }

  // ---- narrow, dark ----
  await page.setViewportSize({ width: 390, height: 844 });
  check("on a phone width the layout stacks (no horizontal scroll)", await page.evaluate(() =>
    document.documentElement.scrollWidth <= window.innerWidth + 1));
  await page.screenshot({ path: `${shots}/phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: "dark" });
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check("dark colour scheme", bg === "rgb(17, 21, 28)", bg);
  await page.screenshot({ path: `${shots}/dark.png`, fullPage: true });
  await page.emulateMedia({ colorScheme: "light" });

  // ---- a loop (api.md "Loops"): the agent's own rows, four suspected_noop in a row ----
  const l = (await api("POST", "/api/tasks", { name: "Looping one" })).json.task_id;
  for (const w of ["a", "b", "c", "d"])
    await api("POST", `/api/tasks/${l}/actions`, { action_type: "gui", summary: `type ${w}`, status: "completed",
      input_data: { action: "type", text: w }, output_data: { effect: "suspected_noop" } });
  const lb = page.locator(`#tasks li[data-id="${l}"] .badge.loop`);
  check("a loop is marked in the list", await until(async () => (await lb.count()) === 1 &&
    (await lb.innerText()) === "loop ×1"));
  await page.locator(`#tasks li[data-id="${l}"] .task-btn`).click();
  check("and explained in the task view", await until(async () => await page.locator("#t-loop").isVisible() &&
    (await page.locator("#t-loop").innerText()).includes("signal: noop")));

  // ---- replay (api.md "Replay"): the button on a finished task opens its replay ----
  await page.locator(`#tasks li[data-id="${c}"] .task-btn`).click();
  await until(async () => (await page.locator("#t-name").innerText()) === "Done one");
  check("a finished task offers Replay task", await until(async () => await page.locator("#b-rerun").isEnabled()));
  await page.locator("#b-rerun").click();
  check("Replay task opens the new task: replay of its source, with its result", await until(async () =>
    (await page.locator("#t-name").innerText()) === `replay of ${c}` && await page.locator("#t-rerun").isVisible() &&
    (await page.locator("#t-rerun").innerText()).includes(`replay of ${c} · done: 0/0 steps replayed`), 15000),
    await page.locator("#t-rerun").innerText().catch(() => ""));
  const src = (await api("GET", `/api/tasks/${c}`)).json;
  check("and the source lists it", Array.isArray(src.replays) && src.replays.length === 1);

  // ---- error states ----
  await page.locator(`#tasks li[data-id="${b}"] .task-btn`).click();
  await until(async () => (await page.locator("#t-name").innerText()) === "Paused one");
  await api("DELETE", `/api/tasks/${b}`);
  check("a task deleted while open says so", await until(async () =>
    (await page.locator("#banner").innerText()).includes("deleted") && await page.locator("#task").isHidden()));
  check("nothing was loaded from outside detmd", external.length === 0, external.join(" "));
  check("no script errors", errors.length === 0, errors.join(" | "));
  process.kill(Number(process.env.DETM_PID), "SIGKILL");
  check("a daemon that stops answering is shown", await until(async () =>
    /offline|reconnecting/.test(await page.locator("#conn").innerText()), 10000));
  await page.screenshot({ path: `${shots}/offline.png` });
  await browser.close();
}

try {
  await main();
} catch (e) {
  check("the browser run", false, e.stack || e);
} finally {
  for (const x of xterms) x.kill("SIGKILL");
}
T.finish();
