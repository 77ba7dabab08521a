// agentside.mjs - issue 19 items 1-4 through the official TypeScript SDK
// client (1.x) against bin/detm-mcp and a real detmd on a task display:
//  - a video_record longer than the request timeout (8 s against 4 s, the
//    rule that keeps a 70 s call alive under the 60 s default) succeeds with resetTimeoutOnProgress,
//    with progress messages naming the clip; a ping and a task_log_action
//    made while it records answer before it ends;
//  - cancelling a clip stops it on detmd (its status is no longer
//    "recording" long before its duration);
//  - after a look at scale 2, desktop_action, gui_do "move(x, y)" and the
//    gui_find result (passed on unchanged) put the pointer on the same
//    screen pixel (xdotool getmouselocation);
//  - every result's first text block is one sentence with the ids needed
//    next, and no text block over 2 KB holds base64;
//  - every input/output schema compiles with Ajv strict and keeps to the
//    portable subset of docs/mcp.md.
// Needs DETM_URL, DETM_BIN and STUB_URL (bin/vision-stub answering
// grounding with a UI-TARS click). Prints "N passed, N failed".
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, "../../..", process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
const LONG_S = 8;      // with a 4 s request timeout (progress comes every 2 s): only progress keeps it alive
let passed = 0, failed = 0;
const check = (name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   agent-side: ${name}`); }
	else { failed++; console.log(`FAIL agent-side: ${name}${detail ? ": " + String(detail).slice(0, 600) : ""}`); }
};
const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const first = (r) => ((r.content || [])[0] || {}).text || "";

// The portable subset (docs/mcp.md): one type per node, no empty schemas,
// these keywords only, string enums, closed top-level objects.
const TYPES = new Set(["object", "string", "integer", "number", "boolean", "array"]);
const KEYS = new Set(["type", "description", "properties", "required", "additionalProperties", "items",
	"enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "default"]);
function portable(s, where, bad) {
	if (typeof s !== "object" || s === null || typeof s.type !== "string" || !TYPES.has(s.type)) {
		bad.push(`${where}: not one type (${JSON.stringify(s && s.type)})`); return;
	}
	for (const k of Object.keys(s)) if (!KEYS.has(k)) bad.push(`${where}: keyword ${k}`);
	if (s.enum && (s.type !== "string" || !s.enum.every((v) => typeof v === "string"))) bad.push(`${where}: enum`);
	if (s.additionalProperties !== undefined && s.additionalProperties !== false) bad.push(`${where}: additionalProperties`);
	if (s.type === "array" && !s.items) bad.push(`${where}: array without items`);
	for (const [k, v] of Object.entries(s.properties || {})) portable(v, `${where}.${k}`, bad);
	if (s.items) portable(s.items, `${where}[]`, bad);
}

async function main() {
	const client = new Client({ name: "detm-agent-side", version: "1.0.0" });
	await client.connect(new StdioClientTransport({ command: bin, args: ["--url", url], stderr: "pipe" }));

	const { tools } = await client.listTools();
	const ajv = new Ajv({ strict: true, allErrors: true });
	const bad = [];
	for (const t of tools) {
		for (const [kind, s] of [["in", t.inputSchema], ["out", t.outputSchema]]) {
			if (!s) { bad.push(`${t.name}: no ${kind} schema`); continue; }
			try { ajv.compile(s); } catch (e) { bad.push(`${t.name} ${kind}: ${e.message}`); }
		}
		if (t.inputSchema.additionalProperties !== false) bad.push(`${t.name}: open input object`);
		portable(t.inputSchema, t.name, bad);
		for (const id of ["task_id", "wait_id"])
			if (t.inputSchema.properties?.[id] && t.inputSchema.properties[id].pattern !== "^[0-9a-f]{8}$")
				bad.push(`${t.name}.${id}: no id pattern`);
	}
	check(`every schema of ${tools.length} tools compiles with Ajv strict and is in the portable subset`, bad.length === 0, bad.join("; "));
	let r = await client.callTool({ name: "wait_status", arguments: { wait_id: ".." } });
	check("an id that is not 8 hex digits is an argument error, not a route error", r.isError && /wait_id/.test(text(r)), text(r));

	r = await client.callTool({ name: "task_register", arguments: { name: "agent side", plan: ["a"], display: true, display_resolution: "800x600" } });
	const tid = r.structuredContent.task_id;
	const disp = await fetch(`${url}/api/tasks/${tid}`).then((x) => x.json());
	const env = { ...process.env, DISPLAY: disp.metadata.display, XAUTHORITY: disp.metadata.xauthority };
	const pointer = () => execFileSync("xdotool", ["getmouselocation"], { env }).toString().match(/x:(\d+) y:(\d+)/).slice(1).map(Number);
	const results = {};   // tool -> a result, for the first-line table

	// ---- 1. a long call with progress, a quick call during it, a cancelled clip
	const msgs = [];
	let longDone = false;
	const long = client.callTool({ name: "video_record", arguments: { task_id: tid, duration: LONG_S, fps: 1 } },
		undefined, { timeout: 4000, resetTimeoutOnProgress: true, onprogress: (p) => msgs.push(p.message || "") })
		.then((x) => { longDone = true; return x; });
	while (msgs.length === 0) await new Promise((res) => setTimeout(res, 200));
	await client.ping();
	const pingDuring = !longDone;
	r = await client.callTool({ name: "task_log_action", arguments: { task_id: tid, action_type: "other", summary: "during a clip" } });
	check("a ping and a task_log_action during a long video_record answer before it ends", pingDuring && !longDone && !r.isError, text(r));
	results.task_log_action = r;

	const ac = new AbortController();
	let clipId = null;
	const cancelled = client.callTool({ name: "video_record", arguments: { task_id: tid, duration: 40, fps: 1 } }, undefined,
		{ signal: ac.signal, onprogress: (p) => { const m = /clip ([0-9a-f]{8})/.exec(p.message || ""); if (m && !clipId) { clipId = m[1]; ac.abort(); } } })
		.catch((e) => e);
	await cancelled;
	const st = clipId ? await fetch(`${url}/api/record/${clipId}?block_s=10`).then((x) => x.json()) : {};
	check("cancelling video_record stops the clip on detmd early", clipId && st.status && st.status !== "recording" && st.duration_s < 40,
		JSON.stringify(st));

	// ---- 2. one coordinate space: look at scale 2, then each tool puts the pointer on (320,240)
	r = await client.callTool({ name: "desktop_look", arguments: { task_id: tid, max_width: 400 } });
	results.desktop_look = r;
	check("the look is at scale 2", r.structuredContent.scale === 2, first(r));
	await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "mouse_move", x: 5, y: 5 } });
	r = await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "mouse_move", x: 320, y: 240 } });
	results.desktop_action = r;
	check("desktop_action mouse_move 320,240 lands on screen pixel 320,240", String(pointer()) === "320,240", `${pointer()} ${first(r)}`);
	await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "mouse_move", x: 5, y: 5 } });
	r = await client.callTool({ name: "gui_do", arguments: { task_id: tid, instruction: "move(320, 240)" } });
	results.gui_do = r;
	check("gui_do move(320, 240) lands on the same pixel", !r.isError && String(pointer()) === "320,240", `${pointer()} ${text(r)}`);
	await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "mouse_move", x: 5, y: 5 } });
	r = await client.callTool({ name: "gui_find", arguments: { task_id: tid, description: "the middle of the screen" } });
	results.gui_find = r;
	const f = r.structuredContent || {};
	check("gui_find says its x, y are screen pixels", !r.isError && f.coords === "screen" && /screen pixels/.test(first(r)), text(r));
	r = await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "mouse_move", x: f.x, y: f.y } });
	check("gui_find's x, y passed unchanged to desktop_action land on the pixel it found", f.x > 5 && String(pointer()) === `${f.x},${f.y}`, `${pointer()} ${JSON.stringify(f)}`);
	r = await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "get_mouse_position" } });
	check("get_mouse_position answers in screen pixels and says so", r.structuredContent.x === f.x && r.structuredContent.coords === "screen" && first(r).includes(`(${f.x}, ${f.y}) in screen pixels`), first(r));

	// ---- 3. first lines
	r = await client.callTool({ name: "smart_wait", arguments: { task_id: tid, target: "screen", wake_when: 'text:"never"', timeout: 60 } });
	results.smart_wait = r;
	const wid = r.structuredContent.wait_id;
	results.wait_status = await client.callTool({ name: "wait_status", arguments: { wait_id: wid } });
	results.wait_update = await client.callTool({ name: "wait_update", arguments: { wait_id: wid, message: "still" } });
	results.wait_cancel = await client.callTool({ name: "wait_cancel", arguments: { wait_id: wid } });
	results.humanize_status = await client.callTool({ name: "humanize_status", arguments: {} });
	results.memory_search = await client.callTool({ name: "memory_search", arguments: { query: "nothing here" } });
	results.health_check = await client.callTool({ name: "health_check", arguments: {} });
	results.task_summary = await client.callTool({ name: "task_summary", arguments: { task_id: tid } });
	results.video_record = await long;
	const clip = results.video_record.structuredContent || {};
	check(`a ${LONG_S} s video_record (over a 4 s request timeout) succeeds with resetTimeoutOnProgress`,
		!results.video_record.isError && clip.status === "done" && clip.duration_s >= LONG_S - 2, text(results.video_record));
	check("its progress messages say how far the clip is", msgs.some((m) => new RegExp(`recording clip [0-9a-f]{8}, \\d+/${LONG_S} s`).test(m)), msgs.slice(0, 3).join(" | "));
	const need = {
		task_log_action: (s) => s.action_id, desktop_look: () => "scale 2", desktop_action: (s) => "320, 240",
		gui_do: () => "320, 240", gui_find: () => "screen pixels", smart_wait: (s) => `${s.wait_id} is watching`,
		wait_status: () => wid, wait_update: () => wid, wait_cancel: () => `${wid} is cancelled`,
		humanize_status: () => "Humanised input is", memory_search: () => "match", health_check: () => "api_version",
		task_summary: () => tid, video_record: (s) => `Clip ${s.clip_id} is done`,
	};
	for (const [name, want] of Object.entries(need)) {
		const res = results[name];
		const line = first(res);
		const w = want(res.structuredContent || {});
		check(`${name}: first line is one sentence naming ${w}`, !res.isError && line.includes(w) && /[.!]$/.test(line) &&
			!line.includes("\n") && !/: done\.$/.test(line), line);
		const b64 = (res.content || []).filter((c) => c.type === "text" && c.text.length > 2048 && /[A-Za-z0-9+/]{2048}/.test(c.text));
		check(`${name}: no text block over 2 KB holds base64`, b64.length === 0);
	}
	check("gui_do's after-screenshot is an image block", (results.gui_do.content || []).some((c) => c.type === "image"), JSON.stringify(results.gui_do.content.map((c) => c.type)));
	await client.close();
}

const watchdog = setTimeout(() => { console.log("FAIL agent-side: timed out after 150 s"); console.log(`${passed} passed, ${failed + 1} failed`); process.exit(1); }, 150000);
main().catch((e) => { failed++; console.log(`FAIL agent-side: ${e && e.stack ? e.stack : e}`); })
	.finally(() => { clearTimeout(watchdog); console.log(`${passed} passed, ${failed} failed`); process.exit(failed ? 1 : 0); });
