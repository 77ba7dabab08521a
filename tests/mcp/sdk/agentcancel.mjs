// agentcancel.mjs - cancelling gui_agent through MCP stops the run on detmd,
// not only the client's wait: over stdio (SDK 1.x -> detm-mcp, whose aborted
// HTTP exchange hangs up on detmd) and over /mcp (SDK 1.x handshake and 2.x
// pinned 2026-07-28: notifications/cancelled or the closed SSE stream).
// The supervisor model is bin/vision-stub (SUPERVISOR_URL), scripted by
// run.sh to answer "wait 0.2 s" forever, slowly: a run that is not stopped
// keeps asking it. The check: after the cancel, the stub's request count
// stops growing. Needs DETM_URL, DETM_BIN, SUPERVISOR_URL.
// Then gui_find with a grounding model (the same stub: with an OpenRouter
// key set, UI-TARS grounding goes there too) that takes 90 s to answer: cancelling the call abandons the model request on
// detmd (its usage row says "cancelled") instead of waiting it out.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, "../../..", process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL, sup = process.env.SUPERVISOR_URL;
let passed = 0, failed = 0;
const check = (name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   agent-cancel: ${name}`); }
	else { failed++; console.log(`FAIL agent-cancel: ${name}${detail ? ": " + String(detail).slice(0, 600) : ""}`); }
};
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const asks = async () => (await fetch(`${sup}/_stub/requests`).then((x) => x.json())).requests.filter((r) => r.api === "openai").length;

async function run(name, c, callWith, tid) {
	const ac = new AbortController();
	let progress = 0;
	const call = callWith(c, { name: "gui_agent", arguments: { task_id: tid, instruction: "keep waiting", timeout: 120 } },
		{ signal: ac.signal, timeout: 150000, onprogress: () => { progress++; } }).then(() => "finished", (e) => e);
	while (progress === 0) await sleep(100);
	let before = await asks();
	for (let i = 0; i < 50 && (await asks()) < before + 2; i++) await sleep(200);  // the run is asking the model
	ac.abort();
	await call;
	// the run ends at its next step: let a step in flight finish, then count
	let prev = -1, now = await asks();
	for (let i = 0; i < 20 && now !== prev; i++) { await sleep(1500); prev = now; now = await asks(); }
	before = now;
	await sleep(2500);
	const after = await asks();
	check(`${name}: cancelling gui_agent stops the run on detmd (model asked ${before} then ${after} times)`,
		before > 0 && after === before, `${before} -> ${after}`);
}

// run.sh's script for the supervisor: "wait 0.2 s", slowly, forever
const waitScript = { answers: ['TOOL_CALL wait {"seconds":0.2}'], delay_ms: 300 };
const script = (body) => fetch(`${sup}/_stub/script`, { method: "POST", body: JSON.stringify(body) });
const newTask = async (name) => (await fetch(`${url}/api/tasks`, { method: "POST", headers: { "Content-Type": "application/json" },
	body: JSON.stringify({ name, plan: ["a"], display: true, display_resolution: "640x480" }) }).then((x) => x.json())).task_id;
const usage = async (tid) => (await fetch(`${url}/api/usage/stats?task_id=${tid}`).then((x) => x.json())).totals || {};

async function groundCancel(name, c, callWith) {
	const tid = await newTask(`ground cancel ${name}`);
	const ac = new AbortController();
	let progress = 0;
	const call = callWith(c, { name: "gui_find", arguments: { task_id: tid, description: "the middle of the screen" } },
		{ signal: ac.signal, timeout: 150000, onprogress: () => { progress++; } }).then(() => "finished", (e) => e);
	// two progress notes (4 s): the screenshot is taken, the model is asked
	for (let i = 0; i < 600 && progress < 2; i++) await sleep(100);
	ac.abort();
	await call;
	// the stub answers after 90 s; an abandoned request is recorded long before
	let u = {};
	for (let i = 0; i < 120 && !(u.requests >= 1); i++) { await sleep(250); u = await usage(tid); }
	check(`${name}: cancelling gui_find abandons its grounding model call on detmd (usage: ${u.requests} request, ${u.errors} error)`,
		progress >= 2 && u.requests === 1 && u.errors === 1, JSON.stringify(u));
}

// gui_agent as an MCP task (the Tasks extension, raw 2026-07-28 over /mcp):
// the call answers a task at once, and tasks/cancel stops the run on detmd.
async function taskCancel(tid) {
	const EXT = "io.modelcontextprotocol/tasks";
	const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": { extensions: { [EXT]: {} } } };
	let n = 1;
	const post = (method, params, name) => fetch(`${url}/mcp`, { method: "POST", headers: { "Content-Type": "application/json",
		Accept: "application/json", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name },
		body: JSON.stringify({ jsonrpc: "2.0", id: n++, method, params: { ...params, _meta: meta } }) }).then((x) => x.json());
	const t0 = Date.now();
	const cr = (await post("tools/call", { name: "gui_agent", arguments: { task_id: tid, instruction: "keep waiting", timeout: 120 } },
		"gui_agent")).result || {};
	check("gui_agent task over /mcp: answered with a task at once", cr.resultType === "task" && cr.taskId && Date.now() - t0 < 5000,
		JSON.stringify(cr));
	let before = await asks();
	for (let i = 0; i < 50 && (await asks()) < before + 2; i++) await sleep(200);
	const ack = (await post("tasks/cancel", { taskId: cr.taskId }, cr.taskId)).result || {};
	let prev = -1, now = await asks();
	for (let i = 0; i < 20 && now !== prev; i++) { await sleep(1500); prev = now; now = await asks(); }
	before = now;
	await sleep(2500);
	const after = await asks();
	const g = (await post("tasks/get", { taskId: cr.taskId }, cr.taskId)).result || {};
	check(`gui_agent task over /mcp: tasks/cancel stops the run on detmd (model asked ${before} then ${after} times)`,
		ack.resultType === "complete" && g.status === "cancelled" && before > 0 && after === before,
		`${before} -> ${after} ${JSON.stringify(g).slice(0, 200)}`);
}

async function main() {
	if (!url || !sup) { console.log("DETM_URL or SUPERVISOR_URL is not set"); console.log("0 passed, 1 failed"); process.exit(1); }
	const r = await fetch(`${url}/api/tasks`, { method: "POST", headers: { "Content-Type": "application/json" },
		body: JSON.stringify({ name: "agent cancel", plan: ["a"], display: true, display_resolution: "640x480" }) }).then((x) => x.json());
	const tid = r.task_id;
	const v1 = (c, p, o) => c.callTool(p, undefined, o), v2 = (c, p, o) => c.callTool(p, o);
	const runs = [
		["sdk1 stdio", async () => { const c = new Client1({ name: "ac", version: "1" }); await c.connect(new Stdio1({ command: bin, args: ["--url", url], stderr: "pipe" })); return [c, v1]; }],
		["sdk1 /mcp", async () => { const c = new Client1({ name: "ac", version: "1" }); await c.connect(new Http1(new URL(`${url}/mcp`))); return [c, v1]; }],
		["sdk2 pinned 2026-07-28 /mcp", async () => { const c = new Client2({ name: "ac", version: "2" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } }); await c.connect(new Http2(new URL(`${url}/mcp`))); return [c, v2]; }],
	];
	for (const [name, open] of runs) {
		let c = null;
		try {
			const [client, callWith] = await open();
			c = client;
			await run(name, c, callWith, tid);
			await script({ answers: ["click(start_box='(320,240)')"], delay_ms: 90000 });
			await groundCancel(name, c, callWith);
			await script(waitScript);
		} catch (e) {
			failed++;
			console.log(`FAIL agent-cancel: ${name}: ${e && e.stack ? e.stack : e}`);
		} finally {
			if (c) await c.close().catch(() => {});
		}
	}
	try {
		await taskCancel(tid);
	} catch (e) {
		failed++;
		console.log(`FAIL agent-cancel: gui_agent task: ${e && e.stack ? e.stack : e}`);
	}
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
}

main();
