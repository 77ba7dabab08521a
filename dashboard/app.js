// detm dashboard: watches detmd's tasks live (Server-Sent Events from
// /api/events, polling when they are not available) and lets an operator
// pause, resume or cancel a task and post to its thread. Plain ES module,
// no build step, nothing loaded from outside detmd.

const $ = (id) => document.getElementById(id);
const FINAL = new Set(["completed", "failed", "cancelled"]);
const state = {
  tasks: [], sel: null, task: null, open: new Map(), caps: {}, es: null,
  poll: null, online: null, timers: [], view: "live", liveFor: null, replayFor: null,
};

// ---- HTTP -------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(path, opts = {}) {
  let r;
  try {
    r = await fetch(path, {
      credentials: "same-origin",
      ...opts,
      headers: opts.body ? { "Content-Type": "application/json" } : {},
    });
  } catch (e) {
    setOnline(false);
    throw e;
  }
  setOnline(true);
  let body = null;
  try { body = await r.json(); } catch { /* not JSON */ }
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

const post = (path, body = {}) => api(path, { method: "POST", body: JSON.stringify(body) });

// ---- small helpers ----------------------------------------------------

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

function age(iso) {
  if (!iso) return "";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.floor(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function dur(sec) {
  if (sec === null || sec === undefined) return "";
  if (sec < 1) return `${Math.round(sec * 1000)} ms`;
  if (sec < 60) return `${sec.toFixed(1)} s`;
  return `${Math.floor(sec / 60)} min ${Math.round(sec % 60)} s`;
}

function bytes(n) {
  if (!n) return "0 B";
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(0)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}

// A progress bar (style set through the CSSOM: the page's CSP has no inline styles).
function bar(pct) {
  const fill = el("div");
  fill.style.width = `${pct}%`;
  return el("span", { class: "bar", title: `${pct}%`, role: "img", "aria-label": `${pct}% done` }, fill);
}

function counts(t) {
  const items = t.items || [];
  const done = items.filter((i) => i.status === "completed").length;
  return { done, total: items.length };
}

function banner(text) {
  const b = $("banner");
  b.textContent = text || "";
  b.hidden = !text;
}

function setOnline(on) {
  if (state.online === on) return;
  state.online = on;
  const c = $("conn");
  if (on) {
    banner("");
    refreshAll();
  } else {
    c.className = "conn down";
    c.textContent = "offline";
    banner("detmd is not answering (restarting?) — retrying…");
    startPolling();
  }
}

// ---- live updates -----------------------------------------------------

let pending = { list: false, detail: false };
let flushTimer = null;

function schedule(list, detail) {
  pending.list ||= list;
  pending.detail ||= detail;
  if (flushTimer) return;
  flushTimer = setTimeout(async () => {
    const p = pending;
    pending = { list: false, detail: false };
    flushTimer = null;
    try {
      if (p.list) await loadTasks();
      if (p.detail && state.sel) await loadTask();
    } catch { /* shown by setOnline / banner */ }
  }, 120);
}

function onEvent(ev) {
  let d = {};
  try { d = JSON.parse(ev.data); } catch { return; }
  const mine = state.sel && d.task_id === state.sel;
  schedule(d.type === "task" || d.type === "item" || d.type === "recording", mine);
}

function connectEvents() {
  if (!window.EventSource) { startPolling(); return; }
  if (state.es) state.es.close();
  const es = new EventSource("/api/events");
  state.es = es;
  es.addEventListener("open", () => {
    const c = $("conn");
    c.className = "conn live";
    c.textContent = "live";
    stopPolling();
    setOnline(true);
  });
  for (const t of ["task", "item", "action", "log", "message", "wait", "recording"])
    es.addEventListener(t, onEvent);
  es.addEventListener("reset", () => schedule(true, true));
  es.addEventListener("error", () => {
    const c = $("conn");
    c.className = "conn down";
    c.textContent = "reconnecting…";
    startPolling();   // EventSource retries by itself; poll meanwhile
  });
}

function startPolling() {
  if (state.poll) return;
  state.poll = setInterval(() => refreshAll().catch(() => {}), 3000);
}

function stopPolling() {
  clearInterval(state.poll);
  state.poll = null;
}

async function refreshAll() {
  await loadTasks();
  if (state.sel) await loadTask();
}

// ---- task list --------------------------------------------------------

// With --peers (deploy.md "Routing") this detmd lists every pod's tasks
// (GET /api/fleet/tasks): each row names its pod, a pod that did not
// answer is named above the list, and a task of another pod is read and
// driven through this one (it forwards). A detmd without the route: its own.
async function loadTasks() {
  const f = $("filter").value;
  const q = `status=${encodeURIComponent(f)}&limit=200`;
  let body = null;
  if (state.fleet !== false) {
    // only a detmd without the route turns the fleet view off for good
    body = await api(`/api/fleet/tasks?${q}`).catch((e) => {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    });
    state.fleet = !!(body && body.peers);
  }
  if (!body) body = await api(`/api/tasks?${q}`);
  state.tasks = body.tasks || [];
  const down = (body.unreachable || []).map((p) => p.detmd);
  $("fleet-note").hidden = !state.fleet;
  $("fleet-note").textContent = state.fleet ? `${(body.pods || []).length} pods` +
    (down.length ? `; not answering: ${down.join(", ")}` : "") : "";
  renderTasks();
}

// A completion the evidence contradicts (api.md "Done, checked"): a badge
// whose title says why. Only contradicted ones are flagged: unchecked is the
// common case and evidenced needs no attention.
function completionBadge(o) {
  if (!o || o.completion !== "contradicted") return null;
  const why = (o.completion_why && o.completion_why.sentence) || "";
  return el("span", { class: "badge contradicted", title: why, text: "done? contradicted" });
}

// Loops detm noticed (api.md "Loops"): a badge with how many, whose title
// is the latest one's explanation.
function loopBadge(o) {
  if (!o || !o.loops || !o.loops.count) return null;
  const last = o.loops.last || {};
  return el("span", { class: "badge loop", title: last.sentence || "", text: `loop ×${o.loops.count}` });
}

function renderTasks() {
  const ul = $("tasks");
  ul.replaceChildren();
  $("tasks-empty").hidden = state.tasks.length > 0;
  if (!state.tasks.length && $("filter").value !== "all")
    $("tasks-empty").textContent = `No ${$("filter").value} tasks.`;
  else
    $("tasks-empty").innerHTML = "No tasks yet — register one with <code>task_register</code>.";
  for (const t of state.tasks) {
    const { done, total } = counts(t);
    const pct = t.progress_pct || 0;
    const btn = el("button", { class: "task-btn", type: "button", "aria-current": t.task_id === state.sel ? "true" : null,
      onclick: () => select(t.task_id) },
      el("span", { class: "name", text: t.name }),
      el("span", { class: "row" },
        el("span", { class: `badge ${t.status}`, text: t.status }),
        ...[completionBadge(t), loopBadge(t)].filter(Boolean),
        bar(pct),
        el("span", { class: "count", text: `${done}/${total}` }),
        el("span", { class: "age", text: age(t.created_at), title: t.created_at }),
        state.fleet ? el("span", { class: "pod", text: t.pod || "", title: t.detmd || "" }) : null));
    const li = el("li", { class: t.task_id === state.sel ? "sel" : null, "data-id": t.task_id, "data-status": t.status }, btn);
    if (FINAL.has(t.status) && t.recording && t.recording.url)
      li.append(el("a", { class: "dl button", href: t.recording.url, download: `task-${t.task_id}.mp4`,
        title: "Download the recording", text: "MP4" }));
    ul.append(li);
  }
  document.dispatchEvent(new CustomEvent("detm:tasks", { detail: state.tasks }));   // takeover.js
}

// ---- one task ---------------------------------------------------------

async function select(id) {
  if (state.sel !== id) {
    state.sel = id;
    state.task = null;
    stopLive();
    state.replayFor = null;
    state.view = "live";
  }
  renderTasks();
  $("pick").hidden = true;
  $("task").hidden = false;
  await loadTask();
}

async function loadTask() {
  const id = state.sel;
  let t;
  try {
    t = await api(`/api/tasks/${id}?detail=actions`);
  } catch (e) {
    if (e.status === 404 && id === state.sel) {
      banner(`Task ${id} was deleted.`);
      state.sel = null;
      stopLive();
      $("task").hidden = true;
      $("pick").hidden = false;
      renderTasks();
    }
    return;
  }
  if (id !== state.sel) return;
  state.task = t;
  renderTask(t);
  const [msgs, waits] = await Promise.all([
    api(`/api/tasks/${id}/messages?limit=200`).catch(() => ({ messages: [] })),
    api(`/api/waits?task_id=${id}&status=watching`).catch(() => ({ waits: [] })),
  ]);
  if (id !== state.sel) return;
  renderMessages(msgs.messages || []);
  renderWaits(waits.waits || []);
}

function renderTask(t) {
  $("t-name").textContent = t.name;
  const st = $("t-status");
  st.className = `badge ${t.status}`;
  st.textContent = t.status;
  st.title = t.completion === "contradicted" && t.completion_why ? `done? contradicted: ${t.completion_why.sentence}` : "";
  if (t.completion === "contradicted") st.textContent += " · contradicted";
  const { done, total } = counts(t);
  $("t-meta").textContent = `${t.task_id} · ${done}/${total} done · started ${age(t.created_at)} ago` +
    (t.metadata && t.metadata.display ? ` · display ${t.metadata.display}` : "");
  const lp = $("t-loop"), last = t.loops && t.loops.last;
  lp.hidden = !last;
  lp.textContent = last ? `Loop ${t.loops.count > 1 ? `(${t.loops.count} so far)` : ""}: ${last.sentence}` +
    (t.loops.paused_at ? " — paused for a human" : "") : "";
  renderRerun(t);
  const pr = $("t-progress");
  pr.firstElementChild.style.width = `${t.progress_pct || 0}%`;
  pr.setAttribute("aria-valuenow", String(t.progress_pct || 0));
  $("b-pause").disabled = t.status !== "active";
  $("b-resume").disabled = t.status !== "paused";
  $("b-cancel").disabled = FINAL.has(t.status);
  $("b-rerun").disabled = !FINAL.has(t.status);
  renderItems(t);
  renderScreen(t);
  document.dispatchEvent(new CustomEvent("detm:task", { detail: t }));   // takeover.js
  if (window.detmUsage) window.detmUsage.task(t);   // usage.js: the usage panel
}

function actionFacts(a) {
  const out = a.output_data && typeof a.output_data === "object" ? a.output_data : {};
  const inp = a.input_data && typeof a.input_data === "object" ? a.input_data : {};
  const facts = [];
  const backend = out.backend || inp.backend;
  const model = out.model || inp.model;
  if (backend) facts.push(`${backend}${model ? ` · ${model}` : ""}`);
  const x = out.x ?? out.screen_x ?? inp.x, y = out.y ?? out.screen_y ?? inp.y;
  if (x !== undefined && y !== undefined && x !== null) facts.push(`at (${x}, ${y})`);
  if (out.scale && out.scale !== 1) facts.push(`scale ${out.scale}`);
  if (a.duration_ms !== null && a.duration_ms !== undefined) facts.push(dur(a.duration_ms / 1000));
  return { facts, shot: out.screenshot || null };
}

function actionLi(a) {
  const { facts, shot } = actionFacts(a);
  const logs = el("ol", { class: "logs" });
  for (const l of a.logs || []) logs.append(el("li", { text: `[${l.log_type}] ${l.content}` }));
  return el("li", { class: `action ${a.status}${a.action_type === "human" ? " human" : ""}`, "data-id": a.action_id,
    "data-type": a.action_type },
    el("div", { class: "head" },
      el("span", { class: "type", text: a.action_type }),
      el("span", { class: "sum", text: a.summary }),
      el("span", { class: `badge ${a.status === "failed" ? "failed" : a.status === "started" ? "active" : "completed"}`, text: a.status })),
    facts.length ? el("div", { class: "facts", text: facts.join(" · ") }) : null,
    shot ? el("button", { class: "thumb", type: "button", "aria-label": "Open screenshot", onclick: () => lightbox(shot) },
      el("img", { src: shot, alt: `Screenshot after: ${a.summary}`, loading: "lazy" })) : null,
    (a.logs || []).length ? logs : null);
}

// One row of the tree: an item (key: its ordinal) or the task-level actions
// (key "task": actions logged while no item was current, and the human's
// input during a takeover of a task without a plan).
function treeRow(open, key, headParts, details, attrs) {
  const isOpen = open.has(key);
  const head = el("button", { type: "button", "aria-expanded": String(isOpen),
    onclick: () => { isOpen ? open.delete(key) : open.add(key); renderItems(state.task); } },
    el("span", { class: "caret", text: isOpen ? "▾" : "▸" }), ...headParts);
  const li = el("li", { class: "item", ...attrs }, head);
  if (isOpen) {
    const acts = el("ol", { class: "actions" });
    for (const a of details || []) acts.append(actionLi(a));
    if (!(details || []).length) acts.append(el("li", { class: "muted", text: "No actions yet." }));
    li.append(acts);
  }
  return li;
}

function renderItems(t) {
  const ol = $("items");
  const open = state.open.get(t.task_id) || new Set();
  state.open.set(t.task_id, open);
  ol.replaceChildren();
  const loose = t.task_actions || [];
  $("items-empty").hidden = (t.items || []).length > 0 || loose.length > 0;
  for (const it of t.items || []) {
    ol.append(treeRow(open, it.ordinal, [
      el("span", { class: "ord muted", text: String(it.ordinal) }),
      el("span", { class: "t", text: it.title }),
      el("span", { class: `badge ${it.status}`, text: it.status }),
      ...[completionBadge(it)].filter(Boolean),
      el("span", { class: "muted", text: `${it.actions} action${it.actions === 1 ? "" : "s"}${it.duration_s ? " · " + dur(it.duration_s) : ""}` })],
      it.action_details, { "data-ordinal": String(it.ordinal) }));
  }
  if (loose.length) {
    const n = t.unassigned_actions ?? loose.length;
    ol.append(treeRow(open, "task", [
      el("span", { class: "ord muted", text: "–" }),
      el("span", { class: "t", text: "Task-level actions" }),
      el("span", { class: "muted", text: `${n} action${n === 1 ? "" : "s"}` })],
      loose, { "data-ordinal": "task" }));
  }
}

// ---- messages and waits -----------------------------------------------

function msgClass(m) {
  const t = m.msg_type || "", c = m.content || "";
  if (t === "stuck" || t === "failed" || t === "timed_out" || t === "error" || /^error/i.test(c)) return "error";
  if (m.role === "error") return "error";
  if (m.role === "agent") return "agent";
  if (m.role === "user") return "user";
  if (m.role === "wait" || t === "wait" || t === "resolved") return "wait";
  if (t === "lifecycle" && /complet/i.test(c)) return "good";
  return "system";
}

function renderMessages(msgs) {
  const ol = $("msgs");
  const atBottom = ol.scrollTop + ol.clientHeight >= ol.scrollHeight - 20;
  ol.replaceChildren();
  for (const m of msgs) {
    ol.append(el("li", { class: `msg ${msgClass(m)}`, "data-role": m.role },
      el("span", { class: "who", text: `${m.role} · ${m.msg_type} · ${new Date(m.created_at).toLocaleTimeString()}` }),
      m.content));
  }
  if (atBottom) ol.scrollTop = ol.scrollHeight;
  const last = msgs[msgs.length - 1];
  const stuck = $("stuck");
  if (last && last.msg_type === "stuck") {
    stuck.hidden = false;
    stuck.textContent = `Stuck? ${last.content.slice(0, 300)}`;
  } else {
    stuck.hidden = true;
  }
}

function renderWaits(waits) {
  const ul = $("waits");
  state.timers.forEach(clearInterval);
  state.timers = [];
  ul.replaceChildren();
  $("waits-empty").hidden = waits.length > 0;
  for (const w of waits) {
    const left = el("span", { class: "timer" });
    const deadline = Date.parse(w.deadline_at);
    const tick = () => { left.textContent = `${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left`; };
    tick();
    state.timers.push(setInterval(tick, 1000));
    ul.append(el("li", { "data-id": w.wait_id },
      el("div", {}, el("strong", { text: w.wake_when }), " on ", el("code", { text: w.target })),
      el("div", { class: "muted" }, left,
        ` · ${w.evaluations} judged, ${w.skipped} skipped unchanged · ${w.backend || ""}`)));
  }
}

// ---- screen: live, replay, recording ------------------------------------

function stopLive() {
  const img = $("live");
  img.removeAttribute("src");   // closes the MJPEG connection
  state.liveFor = null;
}

function setView(v) {
  state.view = v;
  $("v-live").setAttribute("aria-pressed", String(v === "live"));
  $("v-replay").setAttribute("aria-pressed", String(v === "replay"));
  if (state.task) renderScreen(state.task);
}

async function renderScreen(t) {
  const rec = t.recording || { state: "none" };
  const canRec = !!state.caps.recording;
  const final = FINAL.has(t.status);
  $("screen-live").hidden = state.view !== "live";
  $("screen-replay").hidden = state.view !== "replay";
  $("v-replay").disabled = !canRec || !rec.url;
  if (!canRec) {
    stopLive();
    $("live-note").textContent = "Live view and recordings are not available: this detmd reports no recording support.";
    $("rec-state").textContent = "";
    $("b-rec").hidden = true;
    $("rec-dl").hidden = true;
    return;
  }
  if (state.view === "live") {
    if (final) {
      stopLive();
      $("live-note").textContent = rec.url ? "The task has ended: see its recording under Replay." : "The task has ended.";
    } else if (state.liveFor !== t.task_id) {
      state.liveFor = t.task_id;
      $("live-note").textContent = "";
      $("live").src = `/api/tasks/${t.task_id}/live.mjpeg`;
    }
  } else if (rec.url && state.replayFor !== t.task_id + rec.bytes) {
    state.replayFor = t.task_id + rec.bytes;
    const v = $("replay");
    v.src = rec.url;
    const idx = await api(`/api/tasks/${t.task_id}/recording/index`).catch(() => null);
    const ol = $("moments");
    ol.replaceChildren();
    const jump = (at) => () => { v.currentTime = at; v.play().catch(() => {}); };
    for (const k of (idx && idx.takeovers) || []) {   // a human's turns at the desktop
      if (k.start_s === null) continue;
      ol.append(el("li", { class: "takeover" }, el("button", { type: "button", onclick: jump(k.start_s) },
        `${k.start_s.toFixed(1)} s — human takeover${k.end_s !== null ? ` until ${k.end_s.toFixed(1)} s` : " (still driving)"}`)));
    }
    for (const a of (idx && idx.actions) || []) {
      if (a.t_s === null) continue;
      ol.append(el("li", { class: a.action_type === "human" ? "human" : "" }, el("button", { type: "button", onclick: jump(a.t_s) },
        `${a.t_s.toFixed(1)} s — ${a.ordinal === null ? "task" : `item ${a.ordinal}`}: ${a.summary}`)));
    }
  }
  const running = rec.state === "recording" || rec.state === "paused";
  const label = { none: "Not recorded", recording: "Recording", paused: "Recording paused", done: "Recorded",
    capped: "Recording stopped at a limit", discarded: "Recording discarded", failed: "Recording failed",
    interrupted: "Recording interrupted" }[rec.state] || rec.state;
  $("rec-state").textContent = rec.state === "none" ? label :
    `${label} · ${rec.frames || 0} frames · ${bytes(rec.bytes)}${rec.reason ? " · " + rec.reason : ""}${rec.error ? " · " + (rec.error.message || rec.error) : ""}`;
  const timer = $("rec-timer");
  timer.dataset.start = running ? rec.started_at : "";
  timer.dataset.base = String(rec.duration_s || 0);
  timer.dataset.stamp = String(Date.now());
  timer.textContent = running ? clock(rec.duration_s || 0) : "";
  const b = $("b-rec");
  b.hidden = final;
  b.textContent = running ? "Stop recording" : "Start recording";
  const dl = $("rec-dl");
  dl.hidden = !rec.url;
  if (rec.url) { dl.href = rec.url; dl.setAttribute("download", `task-${t.task_id}.mp4`); }
}

function clock(s) {
  s = Math.floor(s);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

setInterval(() => {   // the elapsed timer runs between updates
  const t = $("rec-timer");
  if (!t.dataset.start || !state.task || state.task.recording.state !== "recording") return;
  const s = Number(t.dataset.base) + (Date.now() - Number(t.dataset.stamp)) / 1000;
  t.textContent = clock(s);
}, 1000);

// ---- lightbox ---------------------------------------------------------

let lbReturn = null;
function lightbox(src) {
  lbReturn = document.activeElement;
  const lb = $("lightbox");
  lb.querySelector("img").src = src;
  lb.hidden = false;
  $("lb-close").focus();
}
function closeLightbox() {
  $("lightbox").hidden = true;
  if (lbReturn) lbReturn.focus();
}

// A replay task (api.md "Replay"): what it replays, how far it got and how
// each step was found again; a source: its replays.
function renderRerun(t) {
  const box = $("t-rerun"), p = box.querySelector("p"), ol = box.querySelector("ol");
  const r = t.replay, src = t.metadata && t.metadata.replay_of;
  p.replaceChildren();
  ol.replaceChildren();
  box.hidden = !src && !(t.replays && t.replays.length);
  if (src) {
    p.append("replay of ", el("a", { href: `#task=${src}`, onclick: (ev) => { ev.preventDefault(); select(src); }, text: src }));
    if (r) p.append(` · ${r.status}: ${r.replayed}/${r.steps_total} steps replayed, ${r.regrounded} re-grounded, ` +
      `${r.model_calls} model call${r.model_calls === 1 ? "" : "s"}` +
      (r.needs ? ` · needs the agent at step ${r.needs.step}: ${r.needs.looked_for}` : ""));
    for (const s of (r && r.steps) || [])
      ol.append(el("li", { class: s.ok ? "" : "bad", text: `${s.step} ${s.action}: ${s.grounded_by}` +
        (s.effect ? ` · ${s.effect}` : "") + (s.why ? ` · ${s.why}` : "") }));
  } else if (t.replays && t.replays.length) {
    p.append("replays: ");
    t.replays.forEach((id, i) => p.append(i ? ", " : "", el("a", { href: `#task=${id}`,
      onclick: (ev) => { ev.preventDefault(); select(id); }, text: id })));
  }
}

async function rerun() {
  const t = state.task;
  if (!t) return;
  try {
    const r = await post(`/api/tasks/${t.task_id}/replay`, {});
    banner("");
    await loadTasks();
    await select(r.task_id);
  } catch (e) {
    banner(`Could not replay the task: ${e.message}`);
  }
}

// ---- wiring -----------------------------------------------------------

async function control(verb) {
  const t = state.task;
  if (!t) return;
  if (verb === "cancel" && !confirm(`Cancel task "${t.name}"? The agent will be told to stop.`)) return;
  try {
    await post(`/api/tasks/${t.task_id}/${verb}`, { reason: "from the dashboard" });
    banner("");
  } catch (e) {
    banner(`Could not ${verb} the task: ${e.message}`);
  }
  await loadTask();
  await loadTasks();
}

function wire() {
  $("filter").addEventListener("change", () => loadTasks().catch(() => {}));
  $("b-pause").addEventListener("click", () => control("pause"));
  $("b-resume").addEventListener("click", () => control("resume"));
  $("b-cancel").addEventListener("click", () => control("cancel"));
  $("b-rerun").addEventListener("click", rerun);
  $("v-live").addEventListener("click", () => setView("live"));
  $("v-replay").addEventListener("click", () => { stopLive(); setView("replay"); });
  $("b-rec").addEventListener("click", async () => {
    const t = state.task;
    if (!t) return;
    const running = ["recording", "paused"].includes(t.recording && t.recording.state);
    try {
      await post(`/api/tasks/${t.task_id}/recording/${running ? "stop" : "start"}`);
    } catch (e) {
      banner(`Recording: ${e.message}`);
    }
    await loadTask();
  });
  $("live").addEventListener("error", () => {
    if (!state.liveFor) return;
    state.liveFor = null;
    const row = state.tasks.find((t) => t.task_id === state.sel);
    $("live-note").textContent = row && row.detmd && row.detmd !== "self"
      ? `No live picture: the task runs on pod ${row.pod} (${row.detmd}), which did not send one (down, or the task has no display).`
      : "No live picture: the task has no display of its own and the shared display is not reachable.";
  });
  $("post").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = $("msg");
    const text = input.value.trim();
    if (!text || !state.sel) return;
    try {
      await post(`/api/tasks/${state.sel}/messages`, { content: text, role: "user" });
      input.value = "";
    } catch (e) {
      banner(`Could not post: ${e.message}`);
    }
  });
  $("lb-close").addEventListener("click", closeLightbox);
  $("lightbox").addEventListener("click", (ev) => { if (ev.target === $("lightbox")) closeLightbox(); });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && !$("lightbox").hidden) closeLightbox(); });
}

async function main() {
  wire();
  try {
    const c = await api("/api/capabilities");
    state.caps = c.capabilities || {};
    $("caps").textContent = `detmd ${c.version}`;
  } catch { /* offline: the banner says so */ }
  await loadTasks().catch(() => {});
  const want = new URLSearchParams(location.hash.slice(1)).get("task");
  if (want) await select(want);
  connectEvents();
}

main();
