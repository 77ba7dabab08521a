// detm dashboard: the usage panel. Model calls, tokens and cost for all
// tasks or for the selected one (GET /api/usage/stats), a daily bar chart
// drawn as inline SVG (no library), the per-provider/model table, and the
// selected task's budget with what it spent and a form to raise it.
// app.js calls window.detmUsage.task(t) whenever it renders a task; with no
// task on screen the panel shows every task. Refreshes every 30 s.

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const U = { task: null, days: "", timer: null, shown: "", allFor: null };

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "width") e.style.width = v;   // CSSOM: the CSP forbids style attributes
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

const usd = (v) => (v === null || v === undefined ? "unknown" :
  v === 0 ? "$0" : v < 0.01 ? `$${v.toFixed(5)}` : `$${v.toFixed(2)}`);
const num = (v) => (v || 0).toLocaleString();

async function get(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  return r.json();
}

function build() {
  const sel = el("select", { id: "u-period", "aria-label": "Period" },
    el("option", { value: "1", text: "today" }), el("option", { value: "7", text: "7 days" }),
    el("option", { value: "30", text: "30 days" }), el("option", { value: "", text: "all time", selected: true }));
  sel.addEventListener("change", () => { U.days = sel.value; refresh(); });
  const all = el("button", { id: "u-all", type: "button", text: "← All tasks", hidden: true });
  all.addEventListener("click", () => { // toggles between the selected task and every task
    U.allFor = U.allFor ? null : U.task && U.task.task_id;
    refresh();
  });
  const panel = el("section", { id: "usage", class: "panel usage", "aria-label": "Usage and cost" },
    el("div", { class: "panel-head" }, el("h3", { id: "u-title", text: "Usage" }), el("span", {}, all, " ", sel)),
    el("div", { id: "u-cards", class: "u-cards" }),
    el("div", { id: "u-budget", class: "u-budget", hidden: true }),
    el("figure", { class: "u-chart" }, el("div", { id: "u-chart" }),
      el("figcaption", { class: "muted", text: "Cost per day, last 30 days (UTC)" })),
    el("table", { class: "u-table" }, el("thead", {}, el("tr", {},
      ...["provider", "model", "calls", "in", "out", "cost", "share"].map((h) => el("th", { text: h })))),
    el("tbody", { id: "u-rows" })));
  document.querySelector("main").append(panel);
}

function cards(t) {
  const box = $("u-cards");
  box.replaceChildren(
    el("div", { class: "u-card" }, el("b", { text: usd(t.cost_usd) }), el("span", { text: "cost" })),
    el("div", { class: "u-card" }, el("b", { text: num(t.requests) }), el("span", { text: "model calls" })),
    el("div", { class: "u-card" }, el("b", { text: num(t.input_tokens) }), el("span", { text: "tokens in" })),
    el("div", { class: "u-card" }, el("b", { text: num(t.output_tokens) }), el("span", { text: "tokens out" })));
  if (t.unpriced_requests) {
    box.append(el("p", { class: "muted", text: `${t.unpriced_requests} call(s) of a model with no known price are not in the cost (add it to prices.json).` }));
  }
}

// One bar per day: cost, or calls when nothing had a price.
function chart(daily) {
  const byCost = daily.some((d) => d.cost_usd);
  const val = (d) => (byCost ? d.cost_usd || 0 : d.requests || 0);
  const max = Math.max(...daily.map(val), 0);
  const W = 600, H = 120, bw = W / daily.length;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H + 16}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", byCost ? "daily cost" : "daily model calls");
  daily.forEach((d, i) => {
    const h = max > 0 ? Math.max(val(d) > 0 ? 2 : 0, (val(d) / max) * H) : 0;
    const r = document.createElementNS(SVG, "rect");
    r.setAttribute("x", String(i * bw + 1));
    r.setAttribute("y", String(H - h));
    r.setAttribute("width", String(Math.max(bw - 2, 1)));
    r.setAttribute("height", String(h));
    r.setAttribute("class", "u-bar");
    const tip = document.createElementNS(SVG, "title");
    tip.textContent = `${d.date}: ${usd(d.cost_usd)}, ${d.requests} calls`;
    r.append(tip);
    svg.append(r);
  });
  for (const i of [0, daily.length - 1]) {
    const tx = document.createElementNS(SVG, "text");
    tx.setAttribute("x", String(i === 0 ? 0 : W));
    tx.setAttribute("y", String(H + 13));
    tx.setAttribute("text-anchor", i === 0 ? "start" : "end");
    tx.setAttribute("class", "u-axis");
    tx.textContent = daily[i] ? daily[i].date : "";
    svg.append(tx);
  }
  $("u-chart").replaceChildren(svg);
  $("u-chart").dataset.max = String(max);
}

function rows(list, total) {
  $("u-rows").replaceChildren(...list.map((r) => {
    const share = total > 0 && r.cost_usd ? (r.cost_usd / total) * 100 : 0;
    return el("tr", {}, el("td", { text: r.provider }), el("td", { text: r.model }),
      el("td", { text: num(r.requests) }), el("td", { text: num(r.input_tokens) }),
      el("td", { text: num(r.output_tokens) }), el("td", { text: usd(r.cost_usd) }),
      el("td", {}, el("span", { class: "u-share", width: `${share.toFixed(1)}%` })));
  }));
}

const LIMITS = [["usd", "USD"], ["model_calls", "model calls"], ["tokens", "tokens"], ["minutes", "minutes"]];

async function saveBudget(ev) {
  ev.preventDefault();
  const budget = {};
  for (const [k] of LIMITS) {
    const v = ev.target.elements[k].value.trim();
    if (v !== "") budget[k] = Number(v);
  }
  const r = await fetch(`/api/tasks/${U.task.task_id}`, {
    method: "PATCH", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify({ budget }),
  });
  const out = await r.json().catch(() => ({}));
  $("u-bmsg").textContent = r.ok ? "Saved. Resume the task to go on." : (out.error && out.error.message) || `HTTP ${r.status}`;
  if (r.ok) U.task = out;
}

function budget(t) {
  const box = $("u-budget");
  const b = t && t.budget;
  const key = t ? `${t.task_id} ${JSON.stringify(b || null)}` : "";
  box.hidden = !t;
  // Same figures, or the operator is typing: leave the form alone.
  if (!t || key === box.dataset.key || box.contains(document.activeElement)) return;
  box.dataset.key = key;
  const bars = LIMITS.filter(([k]) => b && b[k] !== null && b[k] !== undefined).map(([k, label]) => {
    const spent = b.spent[k] || 0, pct = Math.min(100, b[k] > 0 ? (spent / b[k]) * 100 : 100);
    return el("div", { class: `u-limit${b.reached === k ? " reached" : ""}` },
      el("span", { text: `${label}: ${k === "usd" ? usd(spent) : num(Math.round(spent * 100) / 100)} of ${k === "usd" ? usd(b[k]) : num(b[k])}` }),
      el("span", { class: "u-meter" }, el("span", { width: `${pct.toFixed(1)}%` })));
  });
  const form = el("form", { class: "u-bform" }, ...LIMITS.map(([k, label]) =>
    el("label", {}, `${label} `, el("input", { name: k, type: "number", min: "0", step: "any", value: b && b[k] !== null && b[k] !== undefined ? String(b[k]) : "", size: "8" }))),
    el("button", { type: "submit", text: "Set budget" }), el("span", { id: "u-bmsg", class: "muted" }));
  form.addEventListener("submit", (ev) => saveBudget(ev).catch((e) => { $("u-bmsg").textContent = e.message; }));
  box.replaceChildren(el("h4", { text: b ? (b.reached ? `Budget reached: ${b.reached}` : "Budget") : "No budget" }), ...bars, form);
}

async function refresh() {
  if (!$("usage")) build();
  const selected = U.task && !$("task").hidden;
  const taskShown = selected && U.allFor !== U.task.task_id;
  const q = new URLSearchParams();
  if (U.days) q.set("since", U.days);
  if (taskShown) q.set("task_id", U.task.task_id);
  let s;
  try { s = await get(`/api/usage/stats?${q}`); } catch { return; }
  $("u-title").textContent = taskShown ? `Usage of ${U.task.name}` : "Usage, all tasks";
  $("u-all").hidden = !selected;
  $("u-all").textContent = taskShown ? "← All tasks" : "This task →";
  cards(s.totals || {});
  chart(s.daily || []);
  rows(s.rows || [], (s.totals && s.totals.cost_usd) || 0);
  budget(taskShown ? U.task : null);
  U.shown = taskShown ? U.task.task_id : "";
}

window.detmUsage = {
  // app.js: a task was rendered (its summary carries usage and budget).
  task(t) {
    const changed = !U.task || U.task.task_id !== t.task_id;
    if (changed) U.allFor = null;
    U.task = t;
    if (changed || !$("usage")) refresh();
    else if (U.shown === t.task_id) budget(t);
  },
};

function start() {
  refresh();
  U.timer = setInterval(refresh, 30000);
  new MutationObserver(() => { if (($("task").hidden ? "" : (U.task || {}).task_id || "") !== U.shown) refresh(); })
    .observe($("task"), { attributes: true, attributeFilter: ["hidden"] });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
