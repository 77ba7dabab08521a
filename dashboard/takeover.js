// takeover.js - human takeover in the dashboard: take a task's desktop over,
// drive it through the live view (mouse and keyboard go to detmd, which
// injects them with XTest), and hand it back with a note. Also shows tasks
// whose agent asked for a human (list marker, banner, browser notification).
//
// Hooks: app.js fires "detm:tasks" (the list) and "detm:task" (the open
// task) on document after rendering; nothing else in app.js knows of this.
// One human driver per display: the lease from POST .../takeover lives in
// this tab's sessionStorage; a browser without it watches read-only.
// Keys are only captured while the live view's key catcher has focus, so
// the browser's own shortcuts work everywhere else on the page.

const $ = (id) => document.getElementById(id);
const KEYS = { Enter: "Return", Backspace: "BackSpace", Tab: "Tab", Escape: "Escape", Delete: "Delete",
  ArrowUp: "Up", ArrowDown: "Down", ArrowLeft: "Left", ArrowRight: "Right", Home: "Home", End: "End",
  PageUp: "Prior", PageDown: "Next", Insert: "Insert", " ": "space" };
for (let i = 1; i <= 12; i++) KEYS[`F${i}`] = `F${i}`;

const tk = { task: null, queue: [], busy: false, downAt: null, notified: new Set(), ui: null };

const leaseKey = (id) => `detm-lease-${id}`;
const lease = () => (tk.task ? sessionStorage.getItem(leaseKey(tk.task.task_id)) : null);
const driving = () => !!(tk.task && tk.task.driver && tk.task.driver.driver === "human" && lease());

async function call(path, body) {
  const r = await fetch(path, { method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
  let j = null;
  try { j = await r.json(); } catch { /* not JSON */ }
  if (!r.ok) throw new Error((j && j.error && j.error.message) || `HTTP ${r.status}`);
  return j;
}

function el(tag, attrs = {}, text = "") {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

// ---- the bar under the live view -------------------------------------

function buildUi() {
  if (tk.ui) return tk.ui;
  const live = $("screen-live");
  const bar = el("div", { id: "tk-bar", class: "tk-bar" });
  const state = el("span", { id: "tk-state", class: "muted", role: "status" });
  const take = el("button", { id: "b-takeover", type: "button" }, "Take over");
  const note = el("input", { id: "tk-note", placeholder: "Note for the agent (optional)", maxlength: "1000",
    autocomplete: "off" });
  const give = el("button", { id: "b-release", type: "button" }, "Hand back");
  const keys = el("textarea", { id: "tk-keys", class: "tk-keys", "aria-label": "Keyboard input to the task's desktop",
    autocomplete: "off", autocapitalize: "off", spellcheck: "false" });
  bar.append(take, note, give, state);
  live.append(bar, keys);
  const help = el("div", { id: "tk-help", class: "alert tk-help", role: "alert" });
  help.hidden = true;
  $("task").insertBefore(help, $("task").querySelector(".grid"));
  take.addEventListener("click", takeOver);
  give.addEventListener("click", release);
  wireView($("live"), keys);
  tk.ui = { bar, state, take, note, give, keys, help };
  return tk.ui;
}

function render() {
  const t = tk.task;
  if (!t) return;
  const ui = buildUi();
  const d = t.driver || { driver: "agent" };
  const final = ["completed", "failed", "cancelled"].includes(t.status);
  if (d.driver !== "human" && lease()) sessionStorage.removeItem(leaseKey(t.task_id));
  const mine = driving();
  ui.take.hidden = d.driver === "human" || final;
  ui.give.hidden = !mine;
  ui.note.hidden = !mine;
  $("live").classList.toggle("driving", mine);
  if (mine) ui.state.textContent = "You are driving: click the picture, then type. The agent waits.";
  else if (d.driver === "human")
    ui.state.textContent = `Read-only: another browser drives this desktop since ${new Date(d.since).toLocaleTimeString()}.`;
  else ui.state.textContent = "";
  ui.state.dataset.mode = mine ? "driving" : d.driver === "human" ? "readonly" : "agent";
  if (d.help && d.needs_human) {
    ui.help.hidden = false;
    ui.help.textContent = `Needs a human: ${d.help.reason}${d.help.instructions ? " — " + d.help.instructions : ""}`;
  } else {
    ui.help.hidden = true;
  }
}

async function takeOver() {
  const t = tk.task;
  if (!t) return;
  if (window.Notification && Notification.permission === "default") Notification.requestPermission().catch(() => {});
  try {
    const r = await call(`/api/tasks/${t.task_id}/takeover`, { reason: "from the dashboard" });
    sessionStorage.setItem(leaseKey(t.task_id), r.lease);
    t.driver = r;
    render();
    tk.ui.keys.focus({ preventScroll: true });
  } catch (e) {
    tk.ui.state.textContent = `Could not take over: ${e.message}`;
    tk.ui.state.dataset.mode = "refused";
  }
}

async function release() {
  const t = tk.task;
  if (!t) return;
  const note = tk.ui.note.value.trim();
  await flush();
  try {
    await call(`/api/tasks/${t.task_id}/release`, { lease: lease(), ...(note ? { note } : {}) });
    tk.ui.note.value = "";
  } catch (e) {
    tk.ui.state.textContent = `Could not hand back: ${e.message}`;
  }
  sessionStorage.removeItem(leaseKey(t.task_id));
  t.driver = { driver: "agent" };
  render();
}

// ---- input: queued, sent in order, one request at a time ---------------

function push(ev) {
  if (!driving()) return;
  const q = tk.queue, last = q[q.length - 1];
  if (last && ev.t === "move" && last.t === "move") q[q.length - 1] = ev;
  else if (last && ev.t === "text" && last.t === "text") last.s += ev.s;
  else q.push(ev);
  flush();
}

async function flush() {
  if (tk.busy || !tk.queue.length || !tk.task) return;
  const img = $("live");
  const events = tk.queue.splice(0);
  tk.busy = true;
  try {
    await call(`/api/tasks/${tk.task.task_id}/input`, { lease: lease(), events,
      iw: img.naturalWidth || undefined, ih: img.naturalHeight || undefined });
  } catch (e) {
    if (tk.ui) tk.ui.state.textContent = `Input refused: ${e.message}`;
  } finally {
    tk.busy = false;
  }
  if (tk.queue.length) flush();
}

function point(img, ev) {
  const r = img.getBoundingClientRect();
  const w = img.naturalWidth || r.width, h = img.naturalHeight || r.height;
  return { x: Math.round((ev.clientX - r.left) * w / r.width), y: Math.round((ev.clientY - r.top) * h / r.height) };
}

function keyName(ev) {
  if (KEYS[ev.key]) return KEYS[ev.key];
  if (/^Key[A-Z]$/.test(ev.code)) return ev.code.slice(3).toLowerCase();
  if (/^Digit\d$/.test(ev.code)) return ev.code.slice(5);
  return ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
}

function wireView(img, keys) {
  img.addEventListener("mousedown", (ev) => {
    if (!driving()) return;
    ev.preventDefault();
    keys.focus({ preventScroll: true });
    const p = point(img, ev);
    tk.downAt = p;
    push({ t: "down", b: ev.button === 2 ? 3 : ev.button === 1 ? 2 : 1, ...p });
  });
  img.addEventListener("mouseup", (ev) => {
    if (!driving()) return;
    ev.preventDefault();
    const p = point(img, ev), from = tk.downAt || p;
    tk.downAt = null;
    push({ t: "up", b: ev.button === 2 ? 3 : ev.button === 1 ? 2 : 1, ...p, x0: from.x, y0: from.y });
  });
  img.addEventListener("mousemove", (ev) => { if (driving()) push({ t: "move", ...point(img, ev) }); });
  img.addEventListener("contextmenu", (ev) => { if (driving()) ev.preventDefault(); });
  img.addEventListener("dragstart", (ev) => { if (driving()) ev.preventDefault(); });
  img.addEventListener("wheel", (ev) => {
    if (!driving()) return;
    ev.preventDefault();
    const dy = Math.sign(ev.deltaY), dx = Math.sign(ev.deltaX);
    if (dy || dx) push({ t: "wheel", ...point(img, ev), dy, dx });
  }, { passive: false });
  keys.addEventListener("keydown", (ev) => {
    if (!driving() || ev.isComposing || ev.key === "Process" || ev.key === "Dead") return;
    const mods = [ev.ctrlKey && "ctrl", ev.altKey && "alt", ev.metaKey && "super"].filter(Boolean);
    const special = KEYS[ev.key] && ev.key !== " ";
    if (["Control", "Shift", "Alt", "Meta"].includes(ev.key)) return;
    if (!mods.length && !special) return;          // printable: arrives as an input event
    ev.preventDefault();
    if (ev.shiftKey && (mods.length || special)) mods.push("shift");
    push({ t: "key", k: [...mods, keyName(ev)].join("+") });
  });
  keys.addEventListener("input", (ev) => {
    if (ev.isComposing) return;
    const s = keys.value;
    keys.value = "";
    if (s && driving()) push({ t: "text", s });
  });
  keys.addEventListener("compositionend", () => {
    const s = keys.value;
    keys.value = "";
    if (s && driving()) push({ t: "text", s });
  });
}

// ---- "needs a human": list markers, notifications -----------------------

function markList(tasks) {
  for (const t of tasks) {
    const li = document.querySelector(`#tasks li[data-id="${t.task_id}"] .row`);
    const d = t.driver || {};
    if (!li) continue;
    if (d.needs_human) li.append(el("span", { class: "badge help", title: d.help ? d.help.reason : "" }, "needs a human"));
    else if (d.driver === "human") li.append(el("span", { class: "badge human" }, "human driving"));
    if (d.needs_human && d.help && !tk.notified.has(d.help.request_id)) {
      tk.notified.add(d.help.request_id);
      const text = `Task "${t.name}" needs a human: ${d.help.reason}`;
      const b = $("banner");
      b.textContent = text;
      b.hidden = false;
      b.dataset.help = t.task_id;
      if (window.Notification && Notification.permission === "granted") {
        try { new Notification("detm: a task needs a human", { body: text, tag: d.help.request_id }); } catch { /* not allowed */ }
      }
    }
  }
}

document.addEventListener("detm:tasks", (ev) => markList(ev.detail || []));
document.addEventListener("detm:task", (ev) => {
  const t = ev.detail;
  if (tk.task && t && tk.task.task_id !== t.task_id) tk.queue = [];
  tk.task = t;
  render();
});
