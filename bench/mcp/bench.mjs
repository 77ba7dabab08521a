// bench.mjs - how much detm-mcp adds on top of detmd (not part of make test).
//
//   node bench/mcp/bench.mjs [URL] [N]
//
// Needs a running detmd at URL (default $DETM_URL or http://127.0.0.1:18790)
// and bin/detm-mcp (DETM_BIN selects bin-asan etc.). Measures, with raw
// JSON-RPC over pipes (no SDK in the way):
//   1. spawn -> initialize answered -> tools/list answered (median of 20)
//   2. per-call latency of tools/call task_summary through the proxy vs.
//      GET /api/tasks/{id} with fetch (keep-alive), N calls each.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bin = path.resolve(root, process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.argv[2] || process.env.DETM_URL || "http://127.0.0.1:18790";
const N = Number(process.argv[3] || 500);

function proxy() {
	const child = spawn(bin, ["--url", url], { stdio: ["pipe", "pipe", "ignore"] });
	let buf = "";
	const waiters = new Map();
	child.stdout.setEncoding("utf8");
	child.stdout.on("data", (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf("\n")) >= 0) {
			const msg = JSON.parse(buf.slice(0, i));
			buf = buf.slice(i + 1);
			const w = waiters.get(msg.id);
			if (w) { waiters.delete(msg.id); w(msg); }
		}
	});
	let next = 1;
	const call = (method, params) => new Promise((resolve) => {
		const id = next++;
		waiters.set(id, resolve);
		child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
	});
	return { child, call };
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const p99 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length * 0.99)]; };
const fmt = (ms) => `${ms.toFixed(3)} ms`;

async function main() {
	const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } };
	const startup = [];
	for (let i = 0; i < 20; i++) {
		const t0 = performance.now();
		const p = proxy();
		await p.call("initialize", init);
		const r = await p.call("tools/list", {});
		startup.push(performance.now() - t0);
		if (!r.result || r.result.tools.length < 10) throw new Error("tools/list failed");
		p.child.stdin.end();
		await new Promise((res) => p.child.on("exit", res));
	}
	// The floor: the same spawn and two lines back from a program that does
	// nothing (cat echoes them), i.e. what node and the kernel cost here.
	const floor = [];
	for (let i = 0; i < 20; i++) {
		const t0 = performance.now();
		const c = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
		let got = "";
		await new Promise((res) => {
			c.stdout.on("data", (d) => { got += d; if (got.split("\n").length > 2) res(); });
			c.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: init }) + "\n");
			c.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }) + "\n");
		});
		floor.push(performance.now() - t0);
		c.stdin.end();
		await new Promise((res) => c.on("exit", res));
	}
	console.log(`spawn -> initialize -> tools/list: median ${fmt(median(startup))}, max ${fmt(Math.max(...startup))}`);
	console.log(`  floor (spawn cat, the same two lines echoed): median ${fmt(median(floor))}; ` +
		`detm-mcp's own share: ${fmt(median(startup) - median(floor))}`);

	const p = proxy();
	await p.call("initialize", init);
	const reg = await p.call("tools/call", { name: "task_register", arguments: { name: "bench", plan: ["a", "b", "c"] } });
	if (!reg.result || reg.result.isError) throw new Error("cannot register a task: " + JSON.stringify(reg));
	const tid = reg.result.structuredContent.task_id;

	const direct = [], viaProxy = [];
	for (let i = 0; i < N; i++) {
		let t0 = performance.now();
		const res = await fetch(`${url}/api/tasks/${tid}`);
		await res.json();
		direct.push(performance.now() - t0);
		t0 = performance.now();
		const r = await p.call("tools/call", { name: "task_summary", arguments: { task_id: tid } });
		viaProxy.push(performance.now() - t0);
		if (r.result.isError) throw new Error(JSON.stringify(r));
	}
	console.log(`GET /api/tasks/{id} direct:      median ${fmt(median(direct))}, p99 ${fmt(p99(direct))} (${N} calls)`);
	console.log(`tools/call task_summary (proxy): median ${fmt(median(viaProxy))}, p99 ${fmt(p99(viaProxy))}`);
	console.log(`proxy overhead per call:          median ${fmt(median(viaProxy) - median(direct))}`);
	await fetch(`${url}/api/tasks/${tid}`, { method: "DELETE" });
	p.child.stdin.end();
}

main().catch((e) => { console.error(e); process.exit(1); });
