// tasks.mjs - the MCP Tasks extension (SEP-2663, io.modelcontextprotocol/
// tasks) on detmd's /mcp and on bin/detm-mcp (stdio), in raw JSON-RPC at
// protocol 2026-07-28 (the 2.x SDK has the types but no tasks client):
//  - server/discover declares the extension; tools/list marks smart_wait,
//    gui_agent and video_record execution.taskSupport "optional";
//  - video_record from a request that declares the extension is a task at
//    once (resultType "task", taskId, status working, integer ttlMs and
//    pollIntervalMs, no content); tasks/get follows it to "completed" with
//    the clip's CallToolResult inline;
//  - without the extension the same call is a plain result, as before;
//  - tasks/cancel of a 40 s clip: an empty ack, the task says "cancelled",
//    and (stdio, where progress names the clip) detmd stops the clip early;
//  - smart_wait as a task completes when the wait resolves (the wait's
//    record inline); cancelling it cancels the wait; without the extension
//    it is the wait_id handle at once;
//  - tasks/get without the extension is -32021 (HTTP 400), of an unknown
//    id -32602; tasks/list and tasks/result are -32601.
// Needs DETM_URL, DETM_BIN. Prints "N passed, N failed".
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, "../../..", process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
const auth = process.env.DETM_TOKEN ? { Authorization: `Bearer ${process.env.DETM_TOKEN}` } : {};
const EXT = "io.modelcontextprotocol/tasks";
let passed = 0, failed = 0;
const check = (name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   tasks: ${name}`); }
	else { failed++; console.log(`FAIL tasks: ${name}${detail ? ": " + String(detail).slice(0, 500) : ""}`); }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const meta = (tasks) => ({
	"io.modelcontextprotocol/protocolVersion": "2026-07-28",
	"io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [EXT]: {} } } : {},
});
const nameOf = { "tools/call": "name", "resources/read": "uri", "tasks/get": "taskId", "tasks/cancel": "taskId" };

// HTTP: one request per POST, with the SEP-2243 headers.
let nextId = 1;
async function httpCall(method, params, tasks) {
	const body = { jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: { ...meta(tasks), ...(params._meta || {}) } } };
	const h = { "Content-Type": "application/json", Accept: "application/json", ...auth,
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method };
	if (nameOf[method] && params[nameOf[method]]) h["Mcp-Name"] = params[nameOf[method]];
	const r = await fetch(`${url}/mcp`, { method: "POST", headers: h, body: JSON.stringify(body) });
	return { status: r.status, msg: await r.json() };
}

// stdio: one detm-mcp process; responses matched by id, progress kept.
function stdio() {
	const p = spawn(bin, ["--url", url], { stdio: ["pipe", "pipe", process.env.TASKS_DEBUG ? "inherit" : "ignore"],
		env: { PATH: process.env.PATH, ...(process.env.DETM_TOKEN ? { ACU_TOKEN: process.env.DETM_TOKEN } : {}) } });
	const waiting = new Map(), progress = [];
	readline.createInterface({ input: p.stdout }).on("line", (l) => {
		const m = JSON.parse(l);
		if (m.method === "notifications/progress") progress.push(m.params);
		else if (waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
	});
	return {
		progress,
		call(method, params, tasks) {
			const id = nextId++;
			const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...meta(tasks), ...(params._meta || {}) } } };
			return new Promise((res) => { waiting.set(id, (msg) => res({ status: 200, msg })); p.stdin.write(JSON.stringify(body) + "\n"); });
		},
		close() { p.stdin.end(); },
	};
}

async function until(call, taskId, want, ms) {
	let t = {};
	for (const end = Date.now() + ms; Date.now() < end;) {
		t = (await call("tasks/get", { taskId }, true)).msg.result || {};
		if (want.includes(t.status)) break;
		await sleep(300);
	}
	return t;
}

async function run(name, call, prog) {
	const d = (await call("server/discover", {}, false)).msg.result || {};
	check(`${name}: server/discover declares ${EXT}`, d.capabilities && d.capabilities.extensions && EXT in d.capabilities.extensions,
		JSON.stringify(d.capabilities));
	const tl = (await call("tools/list", {}, false)).msg.result.tools;
	const marked = tl.filter((t) => t.execution && t.execution.taskSupport === "optional").map((t) => t.name).sort();
	check(`${name}: tools/list marks smart_wait, gui_agent and video_record taskSupport optional`,
		JSON.stringify(marked) === JSON.stringify(["gui_agent", "smart_wait", "video_record"]), JSON.stringify(marked));
	const reg = (await call("tools/call", { name: "task_register", arguments: { name: `tasks ${name}`, plan: ["a"], display: true } }, true)).msg.result;
	const tid = reg.structuredContent.task_id;
	check(`${name}: a tool without task support is a plain result though the request declares tasks`,
		reg.resultType === "complete" && !("taskId" in reg) && Array.isArray(reg.content), JSON.stringify(reg).slice(0, 200));

	const t0 = Date.now();
	const cr = await call("tools/call", { name: "video_record", arguments: { task_id: tid, duration: 3, fps: 2 } }, true);
	const c = cr.msg.result || {};
	check(`${name}: video_record with the extension is a task at once`,
		c.resultType === "task" && /^[0-9a-f]{32}$/.test(c.taskId || "") && c.status === "working" && !("content" in c) &&
		Number.isInteger(c.ttlMs) && Number.isInteger(c.pollIntervalMs) && c.createdAt && c.lastUpdatedAt &&
		!("task" in c) && !("ttl" in c) && Date.now() - t0 < 2500, JSON.stringify(cr.msg));
	const g0 = (await call("tasks/get", { taskId: c.taskId }, true)).msg.result || {};
	check(`${name}: tasks/get resolves at once (working, no result yet)`, g0.resultType === "complete" &&
		g0.taskId === c.taskId && g0.status === "working" && !("result" in g0), JSON.stringify(g0));
	const g = await until(call, c.taskId, ["completed", "failed", "cancelled"], 30000);
	const clip = (g.result && g.result.structuredContent) || {};
	check(`${name}: the task completes with the clip's CallToolResult inline`,
		g.status === "completed" && Array.isArray(g.result.content) && clip.status === "done" && !g.result.isError,
		JSON.stringify(g).slice(0, 400));

	const t1 = Date.now();
	const plain = (await call("tools/call", { name: "video_record", arguments: { task_id: tid, duration: 1, fps: 2 } }, false)).msg.result || {};
	check(`${name}: without the extension video_record is the plain call it was`,
		plain.resultType === "complete" && !("taskId" in plain) && (plain.structuredContent || {}).status === "done" &&
		Date.now() - t1 >= 800, JSON.stringify(plain).slice(0, 300));

	const long = (await call("tools/call", { name: "video_record", arguments: { task_id: tid, duration: 40, fps: 1 },
		_meta: { progressToken: "clip40" } }, true)).msg.result || {};
	let clipId = null;
	for (let i = 0; i < 50 && prog && !clipId; i++) {
		const m = prog.map((p) => /clip ([0-9a-f]{8})/.exec(p.message || "")).find(Boolean);
		if (m) clipId = m[1]; else await sleep(100);
	}
	if (!prog) await sleep(1500);
	const ack = await call("tasks/cancel", { taskId: long.taskId }, true);
	check(`${name}: tasks/cancel answers an empty ack`, ack.msg.result && ack.msg.result.resultType === "complete" &&
		!("taskId" in ack.msg.result) && !("status" in ack.msg.result), JSON.stringify(ack.msg));
	const gc = await until(call, long.taskId, ["cancelled"], 5000);
	check(`${name}: the cancelled task says so`, gc.status === "cancelled" && !("result" in gc), JSON.stringify(gc));
	const again = await call("tasks/cancel", { taskId: long.taskId }, true);
	check(`${name}: tasks/cancel of a finished task is the same ack`, again.msg.result && again.msg.result.resultType === "complete",
		JSON.stringify(again.msg));
	if (prog) {
		let st = {};
		for (let i = 0; i < 10; i++) {
			st = await fetch(`${url}/api/record/${clipId}?block_s=2`, { headers: auth }).then((x) => x.json());
			if (st.status !== "recording") break;
		}
		check(`${name}: detmd stops the cancelled task's clip early`, clipId && st.status && st.status !== "recording" &&
			st.duration_s < 30, `${clipId} ${JSON.stringify(st)}`);
	}
	// smart_wait: a task that ends when the wait does; without the
	// extension the wait_id handle at once, as before.
	const sw = (w) => ({ name: "smart_wait", arguments: { task_id: tid, target: "screen", wake_when: w, judge: "ocr",
		timeout: 120, poll_interval: 0.5 } });
	const wt = (await call("tools/call", sw("text-gone:Saving"), true)).msg.result || {};
	check(`${name}: smart_wait with the extension is a task`, wt.resultType === "task" && wt.taskId, JSON.stringify(wt));
	const wg = await until(call, wt.taskId, ["completed", "failed", "cancelled"], 60000);
	const wrec = (wg.result && wg.result.structuredContent) || {};
	check(`${name}: the smart_wait task completes when the wait resolves, with the wait's record`,
		wg.status === "completed" && wrec.status === "resolved" && /^[0-9a-f]{8}$/.test(wrec.wait_id || ""),
		JSON.stringify(wg).slice(0, 400));
	const wp = (await call("tools/call", sw("text:NeverOnThisScreen"), false)).msg.result || {};
	const wps = wp.structuredContent || {};
	check(`${name}: smart_wait without the extension answers the wait_id handle at once`,
		wp.resultType === "complete" && /^[0-9a-f]{8}$/.test(wps.wait_id || "") && wps.status === "watching",
		JSON.stringify(wp).slice(0, 300));
	const wc = (await call("tools/call", sw("text:NeverOnThisScreenEither"), true)).msg.result || {};
	await sleep(1500);
	await call("tasks/cancel", { taskId: wc.taskId }, true);
	const wcg = await until(call, wc.taskId, ["cancelled"], 5000);
	let wrow = {};
	for (let i = 0; i < 20; i++) {
		const all = await fetch(`${url}/api/waits?task_id=${tid}&status=all`, { headers: auth }).then((x) => x.json());
		wrow = (all.waits || []).find((w) => /NeverOnThisScreenEither/.test(w.wake_when || w.condition || JSON.stringify(w))) || {};
		if (wrow.status && wrow.status !== "watching") break;
		await sleep(250);
	}
	check(`${name}: cancelling the smart_wait task cancels the wait on detmd`,
		wcg.status === "cancelled" && wrow.status === "cancelled", `${JSON.stringify(wcg).slice(0, 150)} ${JSON.stringify(wrow).slice(0, 300)}`);
	await fetch(`${url}/api/waits/${wps.wait_id}`, { method: "DELETE", headers: { ...auth, "Content-Type": "application/json" }, body: "{}" });

	const nocap = await call("tasks/get", { taskId: c.taskId }, false);
	check(`${name}: tasks/get without the extension is -32021${prog ? "" : " at HTTP 400"}`,
		nocap.msg.error && nocap.msg.error.code === -32021 && (prog || nocap.status === 400) &&
		EXT in ((nocap.msg.error.data || {}).requiredCapabilities || {}).extensions, JSON.stringify(nocap));
	const unk = await call("tasks/get", { taskId: "0".repeat(32) }, true);
	check(`${name}: tasks/get of an unknown task is -32602`, unk.msg.error && unk.msg.error.code === -32602, JSON.stringify(unk.msg));
	for (const m of ["tasks/list", "tasks/result"]) {
		const r = await call(m, { taskId: c.taskId }, true);
		check(`${name}: ${m} (gone from the extension) is -32601`, r.msg.error && r.msg.error.code === -32601, JSON.stringify(r.msg));
	}
}

try {
	await run("/mcp", httpCall, null);
} catch (e) {
	check("/mcp: runs", false, e && e.stack);
}
const s = stdio();
try {
	await run("stdio", s.call, s.progress);
} catch (e) {
	check("stdio: runs", false, e && e.stack);
}
s.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
