// interop.mjs - the official MCP TypeScript SDK client against bin/detm-mcp.
//
// Needs DETM_URL (a running detmd; tests/mcp/run.sh starts one) and
// DETM_BIN (bin/ by default). Connects over stdio the way a gateway does,
// lists tools, compiles every inputSchema with Ajv, and walks a task through
// register -> log action -> item update -> summary -> drill-down with
// callTool. Prints "N passed, N failed" and exits non-zero on failure.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const bin = path.resolve(root, process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
let passed = 0, failed = 0;

function check(name, cond, detail) {
	if (cond) { passed++; console.log(`ok   sdk: ${name}`); }
	else { failed++; console.log(`FAIL sdk: ${name}${detail ? ": " + detail : ""}`); }
}

async function step(name, fn) {
	try { await fn(); }
	catch (e) { failed++; console.log(`FAIL sdk: ${name}: ${e && e.stack ? e.stack : e}`); }
}

async function connect(viaEnv) {
	const transport = new StdioClientTransport(viaEnv
		? { command: bin, args: [], env: { ...getDefaultEnvironment(), ACU_DAEMON_URL: url }, stderr: "pipe" }
		: { command: bin, args: ["--url", url], stderr: "pipe" });
	const client = new Client({ name: "detm-interop", version: "1.0.0" });
	await client.connect(transport);
	return client;
}

function text(res) {
	return (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function main() {
	if (!url) { console.log("DETM_URL is not set"); console.log("0 passed, 1 failed"); process.exit(1); }
	const client = await connect(false);

	await step("handshake", async () => {
		const info = client.getServerVersion();
		check("serverInfo name is detm-mcp", info && info.name === "detm-mcp", JSON.stringify(info));
		check("tools capability without listChanged",
			client.getServerCapabilities()?.tools?.listChanged === false);
		check("instructions present", (client.getInstructions() || "").includes("smart_wait"));
		await client.ping();
		check("ping", true);
	});

	await step("tools/list", async () => {
		const { tools } = await client.listTools();
		check("37 tools listed", tools.length === 37, String(tools.length));
		const ajv = new Ajv({ strict: false, allErrors: true });
		const bad = [];
		for (const t of tools) {
			try {
				ajv.compile(t.inputSchema);
				if (t.inputSchema.type !== "object" || t.inputSchema.additionalProperties !== false) bad.push(t.name);
				if (!/^[a-z0-9_]{1,40}$/.test(t.name)) bad.push(t.name);
			} catch (e) { bad.push(`${t.name}: ${e.message}`); }
		}
		check("every inputSchema compiles and is a closed object", bad.length === 0, bad.join("; "));
		const reg = tools.find((t) => t.name === "task_register");
		check("task_register has title and annotations",
			reg && reg.title && reg.annotations && reg.annotations.readOnlyHint === false);
	});

	let tid = null;
	await step("task walk", async () => {
		let r = await client.callTool({ name: "task_register",
			arguments: { name: "SDK interop", plan: ["Open app", "Export"] } });
		tid = r.structuredContent && r.structuredContent.task_id;
		check("task_register returns a string task_id", !r.isError && typeof tid === "string", text(r));
		check("task_register text names the task", text(r).includes(tid) && text(r).includes("SDK interop"));

		r = await client.callTool({ name: "task_log_action", arguments: {
			task_id: tid, action_type: "gui", summary: "clicked Export", input_data: { x: 10, y: 20 } } });
		check("task_log_action", !r.isError && typeof r.structuredContent.action_id === "string", text(r));

		r = await client.callTool({ name: "task_item_update",
			arguments: { task_id: tid, ordinal: 0, status: "active" } });
		check("task_item_update active", !r.isError && r.structuredContent.items[0].status === "active", text(r));

		r = await client.callTool({ name: "task_summary", arguments: { task_id: tid, detail_level: "actions" } });
		check("task_summary", !r.isError && r.structuredContent.items.length === 2 &&
			r.structuredContent.status === "active", text(r));

		// OpenClaw drops a text block only when it equals this: a result must
		// never carry its data twice (issue 36).
		const dup = (x) => x.structuredContent === undefined ||
			x.content.some((c) => c.type === "text" && c.text === JSON.stringify(x.structuredContent, null, 2));
		check("task_summary's JSON text is JSON.stringify(structuredContent, null, 2)", dup(r), text(r).slice(0, 300));

		r = await client.callTool({ name: "task_drill_down", arguments: { task_id: tid, ordinal: 0 } });
		check("task_drill_down's JSON text is JSON.stringify(structuredContent, null, 2)", dup(r), text(r).slice(0, 300));
		check("task_drill_down shows the action", !r.isError &&
			r.structuredContent.actions.length === 1 &&
			r.structuredContent.actions[0].summary === "clicked Export" &&
			r.structuredContent.actions[0].input_data.x === 10, text(r));
	});

	await step("errors", async () => {
		let r = await client.callTool({ name: "task_summary", arguments: { task_id: "deadbeef" } });
		check("unknown task is isError with the daemon message", r.isError === true &&
			text(r).includes("deadbeef"), text(r));
		r = await client.callTool({ name: "task_drill_down", arguments: { task_id: tid } });
		check("missing ordinal is isError", r.isError === true && text(r).includes("ordinal"), text(r));
		r = await client.callTool({ name: "smart_wait", arguments: { task_id: tid, target: "screen", wake_when: "text:\"never shown\"", timeout: 60 } });
		const wid = (r.structuredContent && r.structuredContent.wait_id) || (text(r).match(/[0-9a-f]{8}/) || [])[0];
		check("smart_wait returns a watching wait", r.isError !== true && wid && text(r).includes("watching"), text(r));
		r = await client.callTool({ name: "wait_status", arguments: { wait_id: wid } });
		check("wait_status finds it", r.isError !== true && text(r).includes(wid), text(r));
		r = await client.callTool({ name: "wait_cancel", arguments: { wait_id: wid, reason: "sdk test" } });
		check("wait_cancel cancels it", r.isError !== true && text(r).includes("cancelled"), text(r));
		r = await client.callTool({ name: "video_record", arguments: { task_id: tid, duration: 1, fps: 2 } });
		check("video_record without a display is an isError naming the display", r.isError === true &&
			text(r).includes("display"), text(r));
		let code = null;
		try { await client.callTool({ name: "no_such_tool", arguments: {} }); }
		catch (e) { code = e.code; }
		check("unknown tool is JSON-RPC -32602", code === -32602, String(code));
	});

	await step("desktop on the task's own display", async () => {
		let r = await client.callTool({ name: "task_register",
			arguments: { name: "SDK desktop", display: true, display_resolution: "800x600" } });
		const dt = r.structuredContent && r.structuredContent.task_id;
		check("task_register with display: true gets an 800x600 display", !r.isError &&
			r.structuredContent.metadata.display_resolution === "800x600", text(r));
		r = await client.callTool({ name: "desktop_look", arguments: { task_id: dt, max_width: 400 } });
		const img = (r.content || []).find((c) => c.type === "image");
		check("desktop_look returns a JPEG image block", !r.isError && img && img.mimeType === "image/jpeg" &&
			Buffer.from(img.data, "base64").subarray(0, 2).toString("hex") === "ffd8", text(r));
		check("desktop_look's text gives the image and screen sizes", /400/.test(text(r)) && /800/.test(text(r)), text(r));
		r = await client.callTool({ name: "desktop_action", arguments: { task_id: dt, action: "mouse_move", x: 100, y: 50, coords: "image" } });
		check("desktop_action succeeds", !r.isError, text(r));
		r = await client.callTool({ name: "desktop_action", arguments: { task_id: dt, action: "get_mouse_position" } });
		const pos = r.structuredContent || {};
		check("desktop_action with coords image takes pixels of the last look (scale 2: 100,50 -> 200,100), and answers in screen pixels by default",
			!r.isError && pos.x === 200 && pos.y === 100 && pos.coords === "screen" && pos.scale === 2, text(r));
		r = await client.callTool({ name: "video_record", arguments: { task_id: dt, duration: 1, fps: 2 } });
		const clip = r.structuredContent || {};
		check("video_record records a clip of the task's display", !r.isError && clip.status === "done" &&
			/clip\.mp4$/.test(clip.url || "") && clip.duration_s >= 1, text(r));
		const vid = clip.url ? await fetch(`${url}${clip.url}`) : null;
		check("and its URL serves the MP4", vid && vid.status === 200 &&
			vid.headers.get("content-type") === "video/mp4" &&
			Buffer.from(await vid.arrayBuffer()).subarray(4, 8).toString() === "ftyp", vid ? String(vid.status) : "no url");
		r = await client.callTool({ name: "desktop_action", arguments: { task_id: dt, action: "click", x: 5000, y: 1 } });
		check("an off-screen click is a tool error naming the screen size", r.isError === true &&
			text(r).includes("800x600"), text(r));
		// A smart wait resolved for real: the daemon judges with the in-process
		// OCR backend (tests/mcp/run.sh starts it so), an xterm prints the text.
		r = await client.callTool({ name: "smart_wait", arguments: { task_id: dt, target: "screen",
			wake_when: 'text:"sdk wait done"', timeout: 60 } });
		const wid = r.structuredContent && r.structuredContent.wait_id;
		check("smart_wait on the task display is watching", !r.isError && wid && text(r).includes("watching"), text(r));
		const disp = await fetch(`${url}/api/tasks/${dt}`).then((x) => x.json());
		const xt = spawn("xterm", ["-geometry", "40x5+0+0", "-fa", "DejaVu Sans Mono", "-fs", "14", "-e",
			"sh", "-c", "sleep 1; echo sdk wait done; sleep 60"],
			{ env: { ...process.env, DISPLAY: disp.metadata.display, XAUTHORITY: disp.metadata.xauthority }, stdio: "ignore" });
		let st = null;
		for (let i = 0; i < 120; i++) {
			r = await client.callTool({ name: "wait_status", arguments: { wait_id: wid } });
			st = r.structuredContent || {};
			if (st.status && st.status !== "watching") break;
			await new Promise((res) => setTimeout(res, 250));
		}
		xt.kill();
		check("wait_status through MCP reports it resolved once the text shows", st && st.status === "resolved" &&
			st.verdict === "YES", JSON.stringify(st));
		r = await client.callTool({ name: "task_update", arguments: { task_id: dt, status: "completed" } });
		check("completing the task", !r.isError, text(r));
	});

	await client.close();

	await step("ACU_DAEMON_URL from env", async () => {
		const c2 = await connect(true);
		const r = await c2.callTool({ name: "health_check", arguments: {} });
		check("health_check via env URL", !r.isError && r.structuredContent.api_version === 1, text(r));
		await c2.close();
	});
}

const watchdog = setTimeout(() => {
	console.log("FAIL sdk: timed out after 60 s");
	console.log(`${passed} passed, ${failed + 1} failed`);
	process.exit(1);
}, 60000);
main().catch((e) => { failed++; console.log(`FAIL sdk: ${e && e.stack ? e.stack : e}`); })
	.finally(() => {
		clearTimeout(watchdog);
		console.log(`${passed} passed, ${failed} failed`);
		process.exit(failed ? 1 : 0);
	});
