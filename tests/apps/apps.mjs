// apps.mjs - the apps suite's agent (issue 34 item 7): ordinary work in real
// Debian applications, driven ONLY through detm's MCP tools, by the official
// MCP TypeScript SDK client (tests/mcp/sdk) over bin/detm-mcp, as a model
// with nothing but those tools would: every program is started with
// desktop_launch, seen with desktop_elements, driven with desktop_action,
// waited for with smart_wait / wait_status, read with clipboard_get. Each
// task is one scripted sequence, no retry of any step: a step that does not
// work fails its task. Waits poll the tree or a wait with a cap; no sleep
// stands for a condition.
//
// What each task did is checked OUTSIDE detm: the bytes of the file the app
// saved (node's fs), the log of the test's own HTTP server (server.py),
// the X clipboard read by xclip. Timings are printed, never asserted.
// Effect verdicts are recorded per step and printed; a step that visibly
// did something (a dialog opened, text typed) must not be
// `suspected_noop`, and a step known to do nothing (shift alone; a key
// while no window has the focus) must not be `confirmed`.
//
//   mousepad    GTK 3: type a text, ctrl+s, a path pasted into the Save
//               As dialog (clipboard_set, ctrl+v), Return: the file's
//               bytes are the text
//   calculator  GTK 4 (gnome-calculator): click 1 2 × 7 = at the centres
//               desktop_elements lists (under openbox), read 84 from the
//               tree's text, ctrl+c, clipboard_get and xclip say 84
//   chromium    a form filled by label, submitted: the server's log has
//               the values; smart_wait sees "Saving..." turn into "Saved"
//   firefox     firefox-esr, the same form: the server's log
//   calc        LibreOffice Calc: cells typed, saved as CSV through the
//               Save As dialog and the Keep format question: the CSV bytes
//
// Env: DETM_URL, DETM_BIN, FORM_URL (server.py's /form), FORM_LOG (its
// log), APPS_ONLY (comma list of tasks; default all), APPS_WAVES (e.g.
// "mousepad,calculator,chromium|firefox,calc": tasks in a wave run at once,
// waves one after another; default: all five at once, each on its own
// display), APPS_DEBUG (print every verdict's evidence). Screenshots of a
// failed task go to $DETM_TEST_OUT/apps/. Prints "N passed, N failed".
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(here, "../mcp/sdk/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const bin = path.resolve(here, "../..", process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
const formUrl = process.env.FORM_URL;
const formLog = process.env.FORM_LOG;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

let passed = 0, failed = 0;
const failedBy = {};    // task -> its failed checks (tasks run at once)
const check = (task, name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   ${task}: ${name}`); }
	else {
		failed++;
		failedBy[task] = (failedBy[task] || 0) + 1;
		console.log(`FAIL ${task}: ${name}${detail ? ": " + String(detail).slice(0, 700) : ""}`);
	}
	return !!cond;
};
const first = (r) => ((r.content || [])[0] || {}).text || "";

// One agent session: its own detm-mcp process and MCP client, a task with
// its own display, and the count of tool calls and the effect verdicts.
class Agent {
	constructor(name) {
		this.name = name;
		this.calls = 0;
		this.verdicts = [];       // [{step, effect, ms}]
	}

	async start(plan) {
		this.t0 = Date.now();
		this.client = new Client({ name: `detm-apps-${this.name}`, version: "1.0.0" });
		await this.client.connect(new StdioClientTransport({ command: bin, args: ["--url", url], stderr: "pipe" }));
		const r = await this.tool("task_register", { name: `apps ${this.name}`, plan, display: true });
		this.task = r.structuredContent.task_id;
		this.display = r.structuredContent.metadata.display;
		this.xauth = r.structuredContent.metadata.xauthority;
		const f = await this.tool("file_list", { task_id: this.task });
		this.folder = f.structuredContent.folder;
	}

	// A tool call (counted); a tool error throws with its text.
	async tool(name, args) {
		this.calls++;
		const r = await this.client.callTool({ name, arguments: args }, undefined, { timeout: 330000 });
		if (r.isError)
			throw new Error(`${name} ${JSON.stringify(args).slice(0, 200)}: ${first(r)}`);
		return r;
	}

	// An input through desktop_action: its verdict recorded under step.
	// settle_ms 8000 (not 300): the watch ends at the first evidence (or the
	// expectation met), and on a loaded machine an app may answer seconds
	// after its input (mousepad drew 67 typed characters 1.7-1.8 s late,
	// LibreOffice 28 more than 2 s late, under two busy loops with the
	// other four apps starting): the script waits for what it expects
	// instead of acting on a window that is not there yet.
	async act(step, args) {
		const r = await this.tool("desktop_action", { task_id: this.task, settle_ms: 8000, ...args });
		const s = r.structuredContent || {};
		this.verdicts.push({ step, effect: s.effect || "missing", ms: s.effect_ms, evidence: s.evidence });
		if (process.env.APPS_DEBUG) console.log(`# ${this.name} ${step}: ${s.effect} ${JSON.stringify(s.evidence || {}).slice(0, 600)}`);
		return s;
	}

	// The screen as desktop_look shows it, kept in DETM_TEST_OUT/apps/ (for
	// the reader of a failure; never asserted).
	async shot(tag) {
		try {
			const r = await this.tool("desktop_look", { task_id: this.task });
			const img = (r.content || []).find((c) => c.type === "image");
			const dir = path.resolve(here, "../..", process.env.DETM_TEST_OUT || "test-output", "apps");
			fs.mkdirSync(dir, { recursive: true });
			if (img) fs.writeFileSync(path.join(dir, `${this.name}-${tag}.${img.mimeType === "image/png" ? "png" : "jpg"}`), Buffer.from(img.data, "base64"));
		} catch { /* a picture for the reader only */ }
	}

	async elements(args) {
		const r = await this.tool("desktop_elements", { task_id: this.task, ...args });
		return r.structuredContent || {};
	}

	// desktop_elements(args) until pick(result) is truthy, at most ms: that
	// value, or null.
	async until(args, pick, ms) {
		const end = Date.now() + ms;
		for (;;) {
			const e = await this.elements(args);
			const v = pick(e);
			if (v) return v;
			if (Date.now() > end) return null;
			await sleep(300);
		}
	}

	// The element's centre, clicked.
	async clickEl(step, el, extra = {}) {
		const b = el.bounds;
		return this.act(step, { action: "click", x: b.x + Math.floor(b.width / 2), y: b.y + Math.floor(b.height / 2), ...extra });
	}

	// smart_wait on the screen for cond, then wait_status until it is no
	// longer watching (at most ms): the wait's final state.
	async waitFor(cond, ms) {
		const r = await this.tool("smart_wait", { task_id: this.task, target: "screen", wake_when: cond, timeout: Math.ceil(ms / 1000) });
		const id = r.structuredContent.wait_id;
		let w = r.structuredContent;
		const end = Date.now() + ms + 5000;
		while (w.status === "watching" && Date.now() < end) {
			await sleep(250);
			w = (await this.tool("wait_status", { wait_id: id })).structuredContent;
		}
		return w;
	}

	// Until a text field of window holds text exactly (20 s at most).
	async fieldHolds(window, text) {
		return !!await this.until({ window, role: "text", max: 50 }, (e) => (e.elements || []).find((x) => x.text === text), 20000);
	}

	// smart_wait settled: nothing drew for 500 ms (a window still laying
	// itself out moves what the tree lists), at most 20 s; not asserted.
	async settled() {
		const w = await this.waitFor("settled", 20000);
		if (process.env.APPS_DEBUG) console.log(`# ${this.name} settled: ${w.status} ${w.elapsed_seconds} s`);
		return w;
	}

	// X, Y, WIDTH, HEIGHT of the client window whose title matches re, by
	// xdotool search and xwininfo (outside detm).
	xgeo(re) {
		const env = { ...process.env, DISPLAY: this.display, XAUTHORITY: this.xauth };
		const w = execFileSync("xdotool", ["search", "--name", re], { env, timeout: 10000 }).toString().trim().split("\n")[0];
		const info = execFileSync("xwininfo", ["-id", w], { env, timeout: 10000 }).toString();
		const num = (k) => Number((info.match(new RegExp(`${k}:\\s+(-?\\d+)`)) || [])[1]);
		return { X: num("Absolute upper-left X"), Y: num("Absolute upper-left Y"), WIDTH: num("Width"), HEIGHT: num("Height") };
	}

	// Whether the keyboard focus is the window manager's own holder window
	// (_NET_SUPPORTING_WM_CHECK: openbox focuses it when no client has the
	// focus), by xdotool and xprop (outside detm).
	xfocusIsWmHolder() {
		const env = { ...process.env, DISPLAY: this.display, XAUTHORITY: this.xauth };
		const focus = Number(execFileSync("xdotool", ["getwindowfocus"], { env, timeout: 10000 }).toString().trim());
		const m = /# (0x[0-9a-f]+)/.exec(execFileSync("xprop", ["-root", "_NET_SUPPORTING_WM_CHECK"], { env, timeout: 10000 }).toString());
		return m !== null && focus === Number(m[1]);
	}

	// fn() (outside detm, may throw) until true, every 200 ms, at most ms.
	async untilX(fn, ms) {
		const end = Date.now() + ms;
		for (;;) {
			try { if (fn()) return true; } catch { /* not yet */ }
			if (Date.now() > end) return false;
			await sleep(200);
		}
	}

	// The display's X clipboard, read by xclip (outside detm).
	xclip() {
		return execFileSync("xclip", ["-o", "-selection", "clipboard"], {
			env: { ...process.env, DISPLAY: this.display, XAUTHORITY: this.xauth }, timeout: 10000,
		}).toString();
	}

	async finish(ok) {
		this.ms = Date.now() - this.t0;
		try { await this.tool("task_update", { task_id: this.task, status: ok ? "completed" : "failed" }); } catch { /* reported below */ }
		try { await this.client.close(); } catch { /* gone */ }
	}

	report() {
		const v = this.verdicts.map((x) => `${x.step}=${x.effect}${x.ms != null ? `(${Math.round(x.ms)}ms)` : ""}`).join(" ");
		console.log(`# ${this.name}: ${(this.ms / 1000).toFixed(1)} s, ${this.calls} tool calls; verdicts: ${v}`);
	}
}

// ---- mousepad (GTK 3): type, save through the Save As dialog ----
async function mousepad(a) {
	const text = "Shopping list\n- 3 apples, 2 pears\n- café au lait, naïve ünïcode €5\n";
	const file = path.join(a.folder, "notes.txt");
	let r = await a.tool("desktop_launch", { task_id: a.task, command: "mousepad", wait_window: 20 });
	const s = r.structuredContent;
	check(a.name, `desktop_launch started mousepad and named its window [${first(r).slice(0, 120)}]`,
		s.window && /Mousepad/.test(s.window.title));
	const text_el = await a.until({ window: "Mousepad", role: "text" }, (e) => (e.elements || [])[0], 30000);
	check(a.name, "its text area is in the tree", text_el);
	// A key that does nothing: shift alone, in an empty document.
	const noop = await a.act("shift alone", { action: "press_key", keys: "shift", settle_ms: 300 });
	check(a.name, `a key that does nothing is not confirmed (${noop.effect})`, noop.effect !== "confirmed");
	const typed = await a.act("type text", { action: "type", text });
	check(a.name, `typing went into mousepad (${typed.effect})`, /Mousepad/.test((typed.focus_window || {}).title || "") &&
		typed.effect !== "suspected_noop", JSON.stringify(typed).slice(0, 400));
	const save = await a.act("ctrl+s", { action: "press_key", keys: "ctrl+s", expect: 'window:"Save As"' });
	check(a.name, `ctrl+s opened the Save As dialog (${save.effect})`, save.effect === "confirmed", JSON.stringify(save.evidence));
	// the name field of the dialog has the focus. The path goes in pasted,
	// in one piece: typed key by key, GTK's completion pops up a list for
	// the folders on the way and may still show it when Return comes, which
	// then only closes the list (0 of 3 saves with Return at once, quiet;
	// 1 of 2 under load even after the screen settled)
	await a.tool("clipboard_set", { task_id: a.task, text: file });
	const name = await a.act("paste path", { action: "press_key", keys: "ctrl+v" });
	check(a.name, `ctrl+v pasted the path into the Save As dialog (${name.effect})`, (name.focus_window || {}).title === "Save As" &&
		name.effect !== "suspected_noop", JSON.stringify(name).slice(0, 400));
	// Return only once the Name field reads the path in the tree: the
	// dialog has then taken the paste in (a Return right after it is
	// sometimes dropped by GTK under load: 1 of 4 saves; 6 of 6 with this)
	check(a.name, "the Name field holds the path (the tree's text)", await a.fieldHolds("Save As", file));
	const ret = await a.act("Return", { action: "press_key", keys: "Return", expect: 'gone:dialog "Save As"' });
	check(a.name, `Return saved and closed the dialog (${ret.effect})`, ret.effect !== "suspected_noop", JSON.stringify(ret.evidence));
	const saved = await a.until({ window: "notes.txt" }, (e) => e.count > 0, 20000);
	check(a.name, "mousepad's window is now titled after the file", saved);
	const bytes = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
	check(a.name, "the file on disk holds exactly the typed text", bytes === text, JSON.stringify(bytes));
	// A click on the bare desktop takes the keyboard focus from mousepad
	// (openbox). Its verdict is printed, not asserted: issue 35's labelled
	// set counts a click on the empty root as no effect (suspected_noop),
	// though the focus left every window.
	await a.act("click desktop", { action: "click", x: 1270, y: 710, settle_ms: 300 });
	// the key once openbox has taken the click: the focus on its own
	// holder window (xdotool and xprop, outside detm). Under load openbox
	// ran seconds behind: the key met the frame of the closed Save As
	// dialog, then openbox gave mousepad the focus during the key's watch.
	const holder = await a.untilX(() => a.xfocusIsWmHolder(), 20000);
	if (!holder) console.log("# mousepad: the focus was not on openbox's holder 20 s after the desktop click");
	// a key then goes nowhere, and says so: nothing to confirm
	const lost = await a.act("key into nothing", { action: "press_key", keys: "x", settle_ms: 8000 });
	// (under load the click can still land on mousepad, or openbox can give
	// it the focus back: then the key goes into the text and must not be
	// called a no-op; either way the verdict has to agree with where the
	// key went; a focus_window that is no application's is openbox's own
	// focus holder, untitled: the key went nowhere)
	if (!lost.focus_window)
		check(a.name, `a key with no focused window is not confirmed (${lost.effect}; "${(lost.observation || "").slice(0, 80)}")`,
			lost.effect !== "confirmed", JSON.stringify(lost).slice(0, 400));
	else if (!/Mousepad/.test(lost.focus_window.title || ""))
		// (the frame of a closed dialog was named so, untitled, before
		// xwin_key_target said such keys go nowhere): not asserted
		console.log(`# mousepad: the key after the desktop click went to "${lost.focus_window.title}" (${lost.focus_window.id}): ${lost.effect}`);
	else
		check(a.name, `a key that went into "${lost.focus_window.title}" (the desktop click left it the focus) is not suspected_noop (${lost.effect})`,
			lost.effect !== "suspected_noop", JSON.stringify(lost).slice(0, 400));
}

// ---- gnome-calculator (GTK 4): 12 × 7 = by clicking listed buttons ----
async function calculator(a) {
	let r = await a.tool("desktop_launch", { task_id: a.task, command: "gnome-calculator", wait_window: 20 });
	check(a.name, `desktop_launch started gnome-calculator [${first(r).slice(0, 120)}]`, r.structuredContent.window);
	const seen = await a.until({ window: "Calculator", role: "push button", max: 200 },
		(e) => ["1", "2", "7", "×", "="].every((n) => (e.elements || []).some((x) => x.name === n)) && e, 30000);
	if (!check(a.name, "its digit, × and = buttons are in the tree (GTK 4)", seen)) return;
	// GTK 4 sizes its window again after openbox maps it: positions once it is still
	await a.settled();
	const buttons = await a.elements({ window: "Calculator", role: "push button", max: 200 });
	check(a.name, "GTK 4 toolkit", (buttons.windows || []).some((w) => /^GTK 4/.test(w.toolkit || "")), JSON.stringify(buttons.windows));
	// the X window, from xdotool and xwininfo (outside detm; xwininfo's
	// absolute position: xdotool's geometry counts a frame's offset twice)
	const g = a.xgeo("^Calculator$");
	const inside = buttons.elements.filter((x) => x.role === "push button" && x.bounds && x.bounds.width > 0)
		.every((x) => x.bounds.x >= g.X && x.bounds.y >= g.Y && x.bounds.x + x.bounds.width <= g.X + g.WIDTH &&
			x.bounds.y + x.bounds.height <= g.Y + g.HEIGHT);
	check(a.name, `the buttons are placed inside its X window under openbox (${g.X},${g.Y} ${g.WIDTH}x${g.HEIGHT}, xwininfo)`, inside,
		JSON.stringify(buttons.elements.slice(0, 5).map((x) => [x.name, x.bounds])));
	for (const n of ["1", "2", "×", "7", "="]) {
		const el = buttons.elements.find((x) => x.role === "push button" && x.name === n);
		const v = await a.clickEl(`click ${n}`, el);
		check(a.name, `click ${n} at its listed centre has an effect (${v.effect})`, v.effect !== "suspected_noop", JSON.stringify(v.evidence));
	}
	const result = await a.until({ window: "Calculator", role: "text" },
		(e) => (e.elements || []).find((x) => x.text === "84"), 15000);
	check(a.name, "the tree's text reads the result 84", result);
	const copy = await a.act("ctrl+c", { action: "press_key", keys: "ctrl+c" });
	r = await a.tool("clipboard_get", { task_id: a.task, format: "text" });
	const clip = r.structuredContent.text;
	check(a.name, `clipboard_get after ctrl+c reads 84 (${copy.effect})`, clip === "84", JSON.stringify(r.structuredContent).slice(0, 300));
	check(a.name, "xclip reads 84 from the display's clipboard", a.xclip() === "84");
}

// ---- a browser: the form, filled by label, submitted ----
async function form(a, launch, mark) {
	const before = fs.existsSync(formLog) ? fs.readFileSync(formLog, "utf8") : "";
	let r = await a.tool("desktop_launch", { task_id: a.task, ...launch, wait_window: 20 });
	check(a.name, `desktop_launch started the browser [${first(r).slice(0, 140)}]`, r.structuredContent.window);
	const want = { "Full name": `Ada ${mark}`, City: "Zürich", Quantity: "12" };
	const field = (e, n) => (e.elements || []).find((x) => (x.role === "entry" || x.role === "spin button") && x.name === n);
	const seen = await a.until({ max: 300 }, (e) => Object.keys(want).every((n) => field(e, n)) && e, 60000);
	if (!check(a.name, "the form's fields are in the tree, named by their labels", seen)) return;
	// the page may still move (an info bar above it): positions once the screen is still
	await a.settled();
	const fields = await a.elements({ max: 300 });
	if (!check(a.name, "and still are once the screen is still", Object.keys(want).every((n) => field(fields, n)))) return;
	for (const [label, value] of Object.entries(want)) {
		const el = field(fields, label);
		const c = await a.clickEl(`click ${label}`, el);
		// type once the field has the focus (the tree's "focused" state):
		// a browser moves the focus when its page process has taken the
		// click, and on a loaded machine keys sent before that went into
		// the field before (City read "Zürich12", Quantity stayed empty)
		const focused = await a.until({ max: 300 }, (e) => ((field(e, label) || {}).states || []).includes("focused"), 20000);
		check(a.name, `clicking "${label}" gave it the focus (the tree's focused state; ${c.effect})`, focused);
		const t = await a.act(`type ${label}`, { action: "type", text: value });
		check(a.name, `typed into "${label}" (${c.effect}, ${t.effect})`, t.effect !== "suspected_noop", JSON.stringify(t.evidence));
	}
	const filled = await a.elements({ max: 300 });
	check(a.name, "the tree reads back the typed values", Object.entries(want).every(([n, v]) =>
		field(filled, n) && (field(filled, n).text === v || String(field(filled, n).value) === v)),
		JSON.stringify(Object.keys(want).map((n) => field(filled, n))));
	const submit = await a.until({ role: "push button", name: "Submit" }, (e) => (e.elements || [])[0], 10000);
	const sub = await a.clickEl("click Submit", submit);
	check(a.name, `clicking Submit had an effect (${sub.effect})`, sub.effect !== "suspected_noop", JSON.stringify(sub.evidence));
	const w = await a.waitFor('text:"Saved"', 30000);
	check(a.name, `smart_wait sees "Saving..." turn into "Saved" (${w.status}, ${w.elapsed_seconds} s, judged by ${w.judged_by})`,
		w.status === "resolved", JSON.stringify(w).slice(0, 500));
	if (process.env.APPS_DEBUG) console.log(`# ${a.name} wait: ${JSON.stringify(w).slice(0, 1500)}`);
	const log = (fs.existsSync(formLog) ? fs.readFileSync(formLog, "utf8") : "").slice(before.length);
	const posts = log.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((p) => p.fields.name === want["Full name"]);
	check(a.name, "the server's log has the submitted values, once", posts.length === 1 &&
		posts[0].fields.city === want.City && posts[0].fields.qty === want.Quantity, log);
}

async function chromium(a) {
	await form(a, { command: "chromium", args: ["--no-first-run", "--no-default-browser-check", "--disable-gpu",
		`--user-data-dir=${path.join(a.folder, "chromium")}`, "--window-size=1200,680", formUrl] }, "chromium");
}

async function firefox(a) {
	// a profile of the agent's own (file_upload into the task's folder): no
	// first-run pages, no welcome tab
	const prefs = ["browser.shell.checkDefaultBrowser", "false", "browser.aboutwelcome.enabled", "false",
		"datareporting.policy.dataSubmissionEnabled", "false", "toolkit.telemetry.reportingpolicy.firstRun", "false",
		"browser.startup.homepage_override.mstone", '"ignore"', "trailhead.firstrun.didSeeAboutWelcome", "true",
		"browser.tabs.warnOnClose", "false", "app.update.enabled", "false", "browser.startup.page", "0"];
	let js = "";
	for (let i = 0; i < prefs.length; i += 2) js += `user_pref("${prefs[i]}", ${prefs[i + 1]});\n`;
	await a.tool("file_upload", { task_id: a.task, path: "firefox/user.js", content: js });
	await form(a, { command: "firefox-esr", args: ["--new-instance", "--profile", path.join(a.folder, "firefox"), formUrl] }, "firefox");
}

// ---- LibreOffice Calc: cells, saved as CSV through the dialogs ----
async function calc(a) {
	const file = path.join(a.folder, "sheet.csv");
	let r = await a.tool("desktop_launch", { task_id: a.task, command: "libreoffice", wait_window: 20,
		args: ["--calc", "--norestore", "--nologo", "--nolockcheck", `-env:UserInstallation=file://${path.join(a.folder, "lo")}`] });
	check(a.name, `desktop_launch started LibreOffice [${first(r).slice(0, 140)}]`, r.structuredContent.status === "running");
	const cell = await a.until({ window: "LibreOffice Calc", name: "A1", max: 50 },
		(e) => (e.elements || []).find((x) => x.role === "table cell" && x.name === "A1"), 90000);
	if (!check(a.name, "the sheet's cell A1 is in the tree", cell)) return;
	// a new sheet has its cursor in A1; its toolbars are still being laid out
	await a.settled();
	const t = await a.act("type cells", { action: "type", text: "fruit\tcount\napple\t3\npear\t14\n" });
	check(a.name, `typing the cells went into Calc (${t.effect})`, /LibreOffice Calc/.test((t.focus_window || {}).title || "") &&
		t.effect !== "suspected_noop", JSON.stringify(t).slice(0, 400));
	const b3 = await a.until({ window: "LibreOffice Calc", name: "B3", max: 50 },
		(e) => (e.elements || []).find((x) => x.name === "B3" && x.text === "14"), 20000);
	check(a.name, "the tree reads B3's text: 14", b3);
	// an untitled document: ctrl+shift+s opens the dialog titled "Save"
	const saveAs = await a.act("ctrl+shift+s", { action: "press_key", keys: "ctrl+shift+s", expect: 'window:"Save"' });
	check(a.name, `ctrl+shift+s opened the Save dialog (${saveAs.effect})`, saveAs.effect === "confirmed", JSON.stringify(saveAs.evidence));
	// a name ending in .csv picks the Text CSV filter (GTK's chooser,
	// LibreOffice's gtk3 plugin); pasted whole, as in mousepad
	await a.tool("clipboard_set", { task_id: a.task, text: file });
	const p = await a.act("paste path", { action: "press_key", keys: "ctrl+v" });
	check(a.name, `ctrl+v pasted the path into the dialog (${p.effect})`, (p.focus_window || {}).title === "Save" &&
		p.effect !== "suspected_noop", JSON.stringify(p).slice(0, 400));
	check(a.name, "the Name field holds the path (the tree's text)", await a.fieldHolds("Save", file));
	const ret = await a.act("Return", { action: "press_key", keys: "Return", expect: 'window:"Confirm File Format"' });
	check(a.name, `Return asked whether to keep the format (${ret.effect})`, ret.effect === "confirmed", JSON.stringify(ret.evidence));
	const keep = await a.until({ window: "Confirm File Format", role: "push button", max: 50 },
		(e) => (e.elements || []).find((x) => x.name === "Use Text CSV Format"), 30000);
	if (!check(a.name, "the question's \"Use Text CSV Format\" button is in the tree (window= the X title)", keep)) return;
	const k = await a.clickEl("click Use Text CSV Format", keep, { expect: 'window:"Export Text File"' });
	check(a.name, `clicking "Use Text CSV Format" opened the export options (${k.effect})`, k.effect === "confirmed", JSON.stringify(k.evidence));
	const ok = await a.until({ window: "Export Text File", role: "push button", name: "OK" },
		(e) => (e.elements || []).find((x) => x.name === "OK"), 30000);
	if (!check(a.name, "the Export Text File options' OK is in the tree", ok)) return;
	const o = await a.clickEl("click OK", ok, { expect: 'gone:dialog "Export Text File"' });
	check(a.name, `clicking OK closed the options (${o.effect})`, o.effect !== "suspected_noop", JSON.stringify(o.evidence));
	const want = "fruit,count\napple,3\npear,14\n";
	let bytes = null;
	const end = Date.now() + 20000;
	while (Date.now() < end && (bytes = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null) !== want) await sleep(200);
	check(a.name, "the CSV file on disk holds the cells", bytes === want, JSON.stringify(bytes));
}

const tasks = {
	mousepad: [mousepad, ["type", "save as"]],
	calculator: [calculator, ["compute", "read"]],
	chromium: [chromium, ["fill", "submit", "wait"]],
	firefox: [firefox, ["fill", "submit", "wait"]],
	calc: [calc, ["cells", "save as csv"]],
};

async function run(name) {
	const a = new Agent(name);
	let ok = false;
	try {
		await a.start(tasks[name][1]);
		await tasks[name][0](a);
		ok = !failedBy[name];
		if (!ok) await a.shot("failed");
	} catch (e) {
		check(name, "the scripted sequence ran to its end", false, e.stack || e);
		await a.shot("failed");
	}
	await a.finish(ok);
	return a;
}

async function main() {
	const only = (process.env.APPS_ONLY || Object.keys(tasks).join(",")).split(",");
	const waves = (process.env.APPS_WAVES || Object.keys(tasks).join(",")).split("|")
		.map((w) => w.split(",").filter((n) => only.includes(n))).filter((w) => w.length);
	const done = [];
	const t0 = Date.now();
	for (const w of waves) done.push(...await Promise.all(w.map(run)));
	for (const a of done) a.report();
	console.log(`# ${done.length} tasks in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${done.reduce((n, a) => n + a.calls, 0)} tool calls`);
}

main().catch((e) => { failed++; console.log(`FAIL apps: ${e.stack || e}`); }).finally(() => {
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
});
