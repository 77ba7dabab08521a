// launch.mjs - desktop_launch through the official MCP TypeScript SDK client
// (1.x, tests/mcp/sdk's node_modules) over bin/detm-mcp, as an agent with
// only MCP tools would: register a task with a display, start mousepad,
// see it in desktop_elements, type into it, cancel the task and find the
// process gone; then xlogo through detmd's own /mcp (Streamable HTTP). The SDK checks every structuredContent against the tool's
// outputSchema. Needs DETM_URL and DETM_BIN. Prints "N passed, N failed".
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(here, "../mcp/sdk/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const bin = path.resolve(here, "../..", process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
let passed = 0, failed = 0;
const check = (name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   sdk: ${name}`); }
	else { failed++; console.log(`FAIL sdk: ${name}${detail ? ": " + String(detail).slice(0, 600) : ""}`); }
};
const first = (r) => ((r.content || [])[0] || {}).text || "";
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

async function main() {
	const client = new Client({ name: "detm-launch", version: "1.0.0" });
	await client.connect(new StdioClientTransport({ command: bin, args: ["--url", url], stderr: "pipe" }));
	const { tools } = await client.listTools();
	const tool = tools.find((t) => t.name === "desktop_launch");
	check("tools/list has desktop_launch with an output schema", tool && tool.outputSchema && tool.inputSchema.required.includes("task_id"));

	let r = await client.callTool({ name: "task_register", arguments: { name: "sdk launch", plan: ["edit"], display: true } });
	const tid = r.structuredContent.task_id;
	const disp = r.structuredContent.metadata.display;
	check("task_register names its display in the first line", first(r).includes(`own display ${disp}`), first(r));

	r = await client.callTool({ name: "desktop_launch", arguments: { task_id: tid, command: "mousepad", wait_window: 20 } });
	const s = r.structuredContent || {};
	check("desktop_launch starts mousepad and names its window", !r.isError && s.status === "running" &&
		s.window && s.window.title === "Untitled 1 - Mousepad" && first(r).includes("Untitled 1 - Mousepad"), JSON.stringify(r));
	let seen = false;
	for (let i = 0; i < 40 && !seen; i++) {
		const e = await client.callTool({ name: "desktop_elements", arguments: { task_id: tid, window: "Mousepad", max: 20 } });
		seen = !e.isError && (e.structuredContent.elements || []).some((x) => x.application === "mousepad");
		if (!seen) await sleep(250);
	}
	check("desktop_elements lists mousepad's elements", seen);
	r = await client.callTool({ name: "desktop_action", arguments: { task_id: tid, action: "type", text: "hello from the sdk" } });
	check("type says which window got the keys", first(r).includes('into "Untitled 1 - Mousepad"'), first(r));
	r = await client.callTool({ name: "task_summary", arguments: { task_id: tid } });
	check("task_summary lists the launched process", (r.structuredContent.launched || []).some((p) => p.pid === s.pid && p.status === "running"),
		JSON.stringify(r.structuredContent.launched));
	r = await client.callTool({ name: "desktop_launch", arguments: { task_id: tid, command: "sh", args: ["-c", "id"] } });
	check("a shell is refused as a tool error", r.isError && /allow-list/.test(first(r)), first(r));
	r = await client.callTool({ name: "task_update", arguments: { task_id: tid, status: "cancelled" } });
	let gone = false;
	for (let i = 0; i < 50 && !gone; i++) { gone = !alive(s.pid); if (!gone) await sleep(100); }
	check("cancelling the task stopped mousepad", gone);
	await client.close();

	// The same tool served by detmd's own /mcp (no proxy).
	const direct = new Client({ name: "detm-launch-http", version: "1.0.0" });
	await direct.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
	r = await direct.callTool({ name: "task_register", arguments: { name: "sdk launch over /mcp", display: true } });
	const t2 = r.structuredContent.task_id;
	r = await direct.callTool({ name: "desktop_launch", arguments: { task_id: t2, command: "xlogo", args: ["-geometry", "200x200"], wait_window: 20 } });
	const x = r.structuredContent || {};
	check("/mcp: desktop_launch starts xlogo and names its window", !r.isError && x.window && x.window.class === "XLogo" &&
		first(r).startsWith("desktop_launch started xlogo"), JSON.stringify(r));
	await direct.callTool({ name: "task_update", arguments: { task_id: t2, status: "completed" } });
	gone = false;
	for (let i = 0; i < 50 && !gone; i++) { gone = !alive(x.pid); if (!gone) await sleep(100); }
	check("/mcp: completing the task stopped xlogo", gone);
	await direct.close();
}

main().catch((e) => { failed++; console.log(`FAIL sdk: ${e.stack || e}`); }).finally(() => {
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
});
