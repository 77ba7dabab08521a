// eras.mjs - both MCP protocol eras, over both transports, through the
// official TypeScript SDKs: 1.x (@modelcontextprotocol/sdk, handshake only)
// and 2.x (@modelcontextprotocol/client) in its three negotiation modes
// (legacy, auto, pinned 2026-07-28), each over stdio (bin/detm-mcp) and over
// Streamable HTTP (detmd's /mcp).
//
// Every client: connects, checks the era it got, lists the tools, calls
// health_check and task_register, all eight at once. Four of them (1.x and pinned 2.x, stdio
// and /mcp), each on a task with a display of its own, also:
//  - run an 8 s video_record with a 4 s request timeout and
//    resetTimeoutOnProgress: it succeeds only because progress arrives
//    (the same rule that keeps a 70 s call alive under the 60 s default);
//  - make a quick call while that clip records: it answers before the end;
//  - cancel a 40 s clip at its first progress: detmd stops the clip early.
// Needs DETM_URL, DETM_BIN. Prints "N passed, N failed".
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, "../../..", process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
const headers = process.env.DETM_TOKEN ? { Authorization: `Bearer ${process.env.DETM_TOKEN}` } : {};
let passed = 0, failed = 0;
const check = (name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   eras: ${name}`); }
	else { failed++; console.log(`FAIL eras: ${name}${detail ? ": " + String(detail).slice(0, 600) : ""}`); }
};
const first = (r) => ((r.content || [])[0] || {}).text || "";
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

const MODES = {
	legacy: undefined,
	auto: { mode: "auto" },
	pin: { mode: { pin: "2026-07-28" } },
};

function stdioParams() {
	return { command: bin, args: ["--url", url], stderr: "pipe",
		env: { PATH: process.env.PATH, ...(process.env.DETM_TOKEN ? { ACU_TOKEN: process.env.DETM_TOKEN } : {}) } };
}

async function connect(sdk, mode, transport) {
	if (sdk === 1) {
		const c = new Client1({ name: "detm-eras", version: "1.0.0" });
		await c.connect(transport === "stdio" ? new Stdio1(stdioParams())
			: new Http1(new URL(`${url}/mcp`), { requestInit: { headers } }));
		return c;
	}
	const c = new Client2({ name: "detm-eras", version: "2.0.0" },
		MODES[mode] ? { versionNegotiation: MODES[mode] } : {});
	await c.connect(transport === "stdio" ? new Stdio2(stdioParams())
		: new Http2(new URL(`${url}/mcp`), { requestInit: { headers } }));
	return c;
}

function version(sdk, c) {
	if (sdk === 2 && c.getNegotiatedProtocolVersion)
		return c.getNegotiatedProtocolVersion();
	return c.getServerVersion() ? "handshake" : "?";
}

// A clip's record, once it is no longer recording (or after 20 s).
async function clipState(id) {
	let st = {};
	for (let i = 0; i < 10; i++) {
		st = await fetch(`${url}/api/record/${id}?block_s=2`, { headers }).then((x) => x.json());
		if (st.status !== "recording") break;
	}
	return st;
}

async function basics(name, sdk, c, wantModern, isStdio) {
	const v = version(sdk, c);
	if (sdk === 2)
		check(`${name}: era ${wantModern ? "2026-07-28" : "handshake"} (got ${v})`,
			wantModern ? v === "2026-07-28" : v !== "2026-07-28", v);
	const info = c.getServerVersion();
	check(`${name}: serverInfo names ${isStdio ? "detm-mcp" : "detmd"}`,
		info && info.name === (isStdio ? "detm-mcp" : "detmd"), JSON.stringify(info));
	const { tools } = await c.listTools();
	check(`${name}: tools/list has the tool table`, tools.length >= 20 && tools.some((t) => t.name === "video_record"),
		String(tools.length));
	let r = await c.callTool({ name: "health_check", arguments: {} });
	check(`${name}: health_check`, !r.isError && /healthy/.test(first(r)), first(r));
	r = await c.callTool({ name: "task_register", arguments: { name: `eras ${name}`, plan: ["a"] } });
	check(`${name}: task_register returns a task id`, !r.isError && /^[0-9a-f]{8}$/.test((r.structuredContent || {}).task_id || ""),
		first(r));
	r = await c.callTool({ name: "task_summary", arguments: { task_id: "00000000" } });
	check(`${name}: a daemon error is an isError result`, r.isError === true && /00000000/.test(first(r)), first(r));
}

// callTool with request options: 1.x takes (params, resultSchema, options),
// 2.x takes (params, options).
const callWith = (c, params, opts) => c instanceof Client1 ? c.callTool(params, undefined, opts) : c.callTool(params, opts);

async function longCalls(name, c, tid, control) {
	if (control) {
		// the control: without resetTimeoutOnProgress the same call times out
		const t = await callWith(c, { name: "video_record", arguments: { task_id: tid, duration: 8, fps: 2 } },
			{ timeout: 4000, onprogress: () => {} }).then(() => null, (e) => e);
		check(`${name}: without resetTimeoutOnProgress the 8 s call times out at 4 s (the control)`,
			t && (t.code === -32001 || /timed out/i.test(String(t.message))), String(t));
	}
	// 8 s clip, 4 s timeout: only progress keeps it alive
	const msgs = [];
	let done = false;
	const long = callWith(c, { name: "video_record", arguments: { task_id: tid, duration: 8, fps: 2 } },
		{ timeout: 4000, resetTimeoutOnProgress: true, onprogress: (p) => msgs.push(p.message || "") })
		.then((x) => { done = true; return x; }, (e) => { done = true; return { error: e }; });
	while (msgs.length === 0 && !done) await sleep(100);
	const q = await c.callTool({ name: "task_log_action", arguments: { task_id: tid, action_type: "other", summary: "during a clip" } });
	check(`${name}: a quick call during a long one answers before it ends`, !done && !q.isError, first(q));
	const r = await long;
	const clip = (r && r.structuredContent) || {};
	check(`${name}: an 8 s video_record under a 4 s request timeout succeeds with resetTimeoutOnProgress`,
		!r.error && !r.isError && clip.status === "done", r.error ? String(r.error) : first(r));
	check(`${name}: its progress says how far the clip is`, msgs.some((m) => /recording clip [0-9a-f]{8}, \d+\/8 s/.test(m)),
		msgs.slice(0, 3).join(" | "));

	// cancel a 40 s clip at its first progress
	const ac = new AbortController();
	let clipId = null;
	await callWith(c, { name: "video_record", arguments: { task_id: tid, duration: 40, fps: 1 } }, {
		signal: ac.signal, resetTimeoutOnProgress: true,
		onprogress: (p) => { const m = /clip ([0-9a-f]{8})/.exec(p.message || ""); if (m && !clipId) { clipId = m[1]; ac.abort(); } },
	}).catch((e) => e);
	const st = clipId ? await clipState(clipId) : {};
	check(`${name}: cancelling video_record stops the clip on detmd early`,
		clipId && st.status && st.status !== "recording" && st.duration_s < 30, `${clipId} ${JSON.stringify(st)}`);
}

// /mcp's transport rules, with plain fetch.
async function rawHttp() {
	const post = (body, extra = {}) => fetch(`${url}/mcp`, { method: "POST",
		headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers, ...extra },
		body: JSON.stringify(body) });
	const env = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
	let r = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
	const sid = r.headers.get("mcp-session-id");
	check("/mcp: initialize answers with an Mcp-Session-Id of 32 hex digits", r.status === 200 && /^[0-9a-f]{32}$/.test(sid || ""), `${r.status} ${sid}`);
	r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" });
	check("/mcp: a handshake-era request without the session header is 400", r.status === 400, String(r.status));
	r = await post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, { "Mcp-Session-Id": sid });
	const listed = ((await r.json()).result || {}).tools;
	check("/mcp: with it, tools/list answers", r.status === 200 && listed, String(r.status));
	check("/mcp: without --mcp-conformance-tools no conformance fixture (test_*) is listed",
		Array.isArray(listed) && listed.length > 0 && !listed.some((t) => t.name.startsWith("test_")),
		(listed || []).map((t) => t.name).join(" "));
	r = await fetch(`${url}/mcp`, { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":',
		headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers, "Mcp-Session-Id": sid } });
	let pe = await r.json().catch(() => ({}));
	check("/mcp: a body that is not JSON is HTTP 400 with JSON-RPC -32700 and id null",
		r.status === 400 && pe.jsonrpc === "2.0" && pe.id === null && pe.error && pe.error.code === -32700, `${r.status} ${JSON.stringify(pe)}`);
	r = await post([{ jsonrpc: "2.0", id: 31, method: "ping" }], { "Mcp-Session-Id": sid });
	pe = await r.json().catch(() => ({}));
	check("/mcp: a batch in a 2025-11-25 session is 400 with -32600 (batches are 2025-03-26 only)",
		r.status === 400 && pe.error && pe.error.code === -32600, `${r.status} ${JSON.stringify(pe)}`);
	r = await post({ jsonrpc: "2.0", id: 32, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
	const sid03 = r.headers.get("mcp-session-id");
	r = await post([{ jsonrpc: "2.0", id: 33, method: "ping" }, { jsonrpc: "2.0", method: "notifications/initialized" },
		{ jsonrpc: "2.0", id: 34, method: "tools/call", params: { name: "health_check", arguments: {} } },
		{ jsonrpc: "2.0", id: 35, method: "no/such" }], { "Mcp-Session-Id": sid03 });
	pe = await r.json().catch(() => ({}));
	check("/mcp: a 2025-03-26 batch gets one array with a response per request, in order",
		r.status === 200 && Array.isArray(pe) && pe.length === 3 && pe[0].id === 33 && pe[0].result &&
		pe[1].id === 34 && pe[1].result && Array.isArray(pe[1].result.content) && !pe[1].result.isError &&
		pe[2].id === 35 && pe[2].error && pe[2].error.code === -32601, `${r.status} ${JSON.stringify(pe).slice(0, 400)}`);
	r = await post([{ jsonrpc: "2.0", method: "notifications/initialized" }], { "Mcp-Session-Id": sid03 });
	check("/mcp: a 2025-03-26 batch of notifications only is 202", r.status === 202, String(r.status));
	r = await post([], { "Mcp-Session-Id": sid03 });
	pe = await r.json().catch(() => ({}));
	check("/mcp: an empty batch is 400 with -32600", r.status === 400 && pe.error && pe.error.code === -32600, `${r.status} ${JSON.stringify(pe)}`);
	r = await fetch(`${url}/mcp`, { method: "DELETE", headers: { ...headers, "Mcp-Session-Id": sid } });
	check("/mcp: DELETE ends the session", r.status === 200, String(r.status));
	r = await post({ jsonrpc: "2.0", id: 4, method: "tools/list" }, { "Mcp-Session-Id": sid });
	check("/mcp: an ended session is 404", r.status === 404, String(r.status));
	r = await post({ jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: env } }, { "MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list" });
	let j = await r.json();
	check("/mcp: an MCP-Protocol-Version header that disagrees with _meta is 400 with -32020", r.status === 400 && j.error && j.error.code === -32020, JSON.stringify(j));
	r = await post({ jsonrpc: "2.0", id: 6, method: "tools/list", params: { _meta: env } }, { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call" });
	j = await r.json();
	check("/mcp: an Mcp-Method header that disagrees with the body is 400 with -32020", r.status === 400 && j.error && j.error.code === -32020, JSON.stringify(j));
	r = await post({ jsonrpc: "2.0", id: 7, method: "tools/list", params: { _meta: { ...env, "io.modelcontextprotocol/protocolVersion": "2030-01-01" } } });
	j = await r.json();
	check("/mcp: an unsupported version in _meta is 400 with -32022 naming 2026-07-28", r.status === 400 && j.error && j.error.code === -32022 &&
		(j.error.data.supported || []).includes("2026-07-28"), JSON.stringify(j));
	r = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "Mcp-Session-Id": "0".repeat(32) });
	check("/mcp: a notification to an unknown session is 404", r.status === 404, String(r.status));
	r = await fetch(`${url}/mcp`, { headers });
	check("/mcp: GET is 405 (no server-initiated stream)", r.status === 405, String(r.status));
}

async function main() {
	if (!url) { console.log("DETM_URL is not set"); console.log("0 passed, 1 failed"); process.exit(1); }
	const runs = [
		["sdk1 stdio", 1, "legacy", "stdio", false, true],
		["sdk1 /mcp", 1, "legacy", "http", false, true],
		["sdk2 legacy stdio", 2, "legacy", "stdio", false, false],
		["sdk2 legacy /mcp", 2, "legacy", "http", false, false],
		["sdk2 auto stdio", 2, "auto", "stdio", true, false],
		["sdk2 auto /mcp", 2, "auto", "http", true, false],
		["sdk2 pinned 2026-07-28 stdio", 2, "pin", "stdio", true, true],
		["sdk2 pinned 2026-07-28 /mcp", 2, "pin", "http", true, true],
	];
	// The eight clients run at once (each long one records on a task of
	// its own): one after another they spent ~50 s, most of it in the
	// fixed 8 s clips.
	await Promise.all(runs.map(async ([name, sdk, mode, transport, modern, long]) => {
		let c = null;
		try {
			c = await connect(sdk, mode, transport);
			await basics(name, sdk, c, modern, transport === "stdio");
			if (long) {
				const r = await c.callTool({ name: "task_register", arguments: { name: `eras clips ${name}`, plan: ["a"], display: true, display_resolution: "640x480" } });
				const tid = (r.structuredContent || {}).task_id;
				check(`${name}: a task with its own display for the clips`, !r.isError && tid, first(r));
				await longCalls(name, c, tid, name === "sdk1 stdio");
			}
		} catch (e) {
			failed++;
			console.log(`FAIL eras: ${name}: ${e && e.stack ? e.stack : e}`);
		} finally {
			if (c) await c.close().catch(() => {});
		}
	}));
	await rawHttp().catch((e) => { failed++; console.log(`FAIL eras: raw /mcp: ${e && e.stack ? e.stack : e}`); });
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
}

main();
