// unit.mjs - the detm-computer plugin's own checks, with plain node against
// the real detmd at DETM_URL (no OpenClaw process): OpenClaw's `api` is a
// fake that only collects the registered node-host commands, as the
// Gateway's computer helper would. When OPENCLAW_DIR names an installed
// openclaw package, the descriptor and every reply are checked with
// OpenClaw's own schemas (openclaw/plugin-sdk/computer-use).
//
//   DETM_URL=... [OPENCLAW_DIR=.../node_modules/openclaw] node unit.mjs
// Prints "ok"/"FAIL" lines and "N passed, N failed".
import { randomUUID } from "node:crypto";
import plugin from "../../integrations/openclaw/index.js";
import { createDetmProvider } from "../../integrations/openclaw/src/provider.js";
import { createExecutionHost } from "../../integrations/openclaw/src/host.js";

const URL_ = process.env.DETM_URL;
let pass = 0, fail = 0;
const ok = (n) => { pass++; console.log(`ok   ${n}`); };
const bad = (n, why) => { fail++; console.log(`FAIL ${n}${why ? `: ${why}` : ""}`); };
const check = (n, cond, why) => (cond ? ok(n) : bad(n, why));
async function throwsCode(n, code, fn) {
	try {
		await fn();
		bad(n, `no error, want ${code}`);
	} catch (e) {
		check(n, String(e.message).startsWith(`${code}:`), `got ${e.message}`);
	}
}
async function api(method, path, body) {
	const r = await fetch(URL_ + path, { method, headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
	return r.json();
}
async function gui(taskId) {
	const t = await api("GET", `/api/tasks/${taskId}?detail=actions`);
	return (t.task_actions || []).filter((a) => a.action_type === "gui");
}

let sdk = null;
if (process.env.OPENCLAW_DIR) sdk = await import(`${process.env.OPENCLAW_DIR}/dist/plugin-sdk/computer-use.js`);
const validDescriptor = sdk ? sdk.compileComputerUseValidator(sdk.ComputerUseCapabilityDescriptorSchema) : null;
const validShot = sdk ? sdk.compileComputerUseValidator(sdk.ScreenSnapshotResultSchema) : null;
const validAct = sdk ? sdk.compileComputerUseValidator(sdk.ComputerActResultSchema) : null;
const validParams = sdk ? sdk.compileComputerUseValidator(sdk.ComputerActParamsSchema) : null;

// The plugin as OpenClaw loads it: register(api) with a fake api.
const cmds = {};
plugin.register({ pluginConfig: { url: URL_ }, registerNodeHostCommand: (c) => { cmds[c.command] = c; } });
check("register: screen.snapshot and computer.act", cmds["screen.snapshot"] && cmds["computer.act"]);
check("computer.act is dangerous, screen.snapshot not", cmds["computer.act"].dangerous === true && cmds["screen.snapshot"].dangerous === false);
const desc = cmds["computer.act"].computerUse({});
check("descriptor: contract version 2, provider detm", desc.contractVersion === 2 && desc.provider.id === "detm" && desc.provider.generation);
if (sdk) {
	check("descriptor valid by OpenClaw's schema", validDescriptor(desc), JSON.stringify(desc));
	const v2 = new Set(sdk.COMPUTER_USE_V2_ACTION_NAMES);
	check("descriptor: only V2 action names", desc.actions.every((a) => v2.has(a)));
}
for (const a of ["left_click", "triple_click", "left_mouse_down", "left_mouse_up", "hold_key", "scroll", "type", "key", "wait", "left_click_drag"])
	check(`descriptor lists ${a}`, desc.actions.includes(a));

const snap = (exec, extra = {}, ctx = {}) => cmds["screen.snapshot"].handle(JSON.stringify({ executionId: exec, maxWidth: 1200, quality: 0.85, format: "jpeg", ...extra }), null, ctx).then(JSON.parse);
const act = (exec, p, ctx = {}) => {
	const params = { executionId: exec, ...p };
	if (validParams && !p.action.startsWith("__") && !validParams(params)) throw new Error(`test bug: params not valid by OpenClaw's schema: ${JSON.stringify(params)}`);
	return cmds["computer.act"].handle(JSON.stringify(params), null, ctx).then(JSON.parse);
};

// Session -> task with a display; snapshot shape and frame id.
const A = randomUUID(), B = randomUUID();
const s1 = await snap(A, {}, { sessionKey: "agent:main:unit-1" });
check("snapshot: displayFrameId detm:v1:<uuid>", /^detm:v1:[0-9a-f-]{36}$/.test(s1.displayFrameId || ""), JSON.stringify({ ...s1, base64: undefined }));
check("snapshot: 1200x675 jpeg of the 1280x720 display", s1.width === 1200 && s1.height === 675 && s1.format === "jpeg" && s1.base64.length > 1000);
if (sdk) check("snapshot valid by OpenClaw's schema", validShot(s1));
const tasks = (await api("GET", "/api/tasks?limit=50")).tasks;
const t1 = tasks.find((t) => t.name === "OpenClaw session agent:main:unit-1");
check("session got a detm task with a display", t1 && t1.metadata?.display && t1.metadata.openclaw_session === "agent:main:unit-1");
const taskId = t1?.task_id;

// Scaling: frame pixel (600,337) -> screen (640,359).
const r1 = await act(A, { action: "left_click", x: 600, y: 337, displayFrameId: s1.displayFrameId, refWidth: 1200 }, { sessionKey: "agent:main:unit-1" });
check("click scaled to screen pixels once", r1.ok && r1.details.screenX === 640 && r1.details.screenY === 359, JSON.stringify(r1));
check("effect: detm's verdict or unverifiable, never assumed", ["confirmed", "suspected_noop", "unverifiable"].includes(r1.effect) && (r1.details.evidence !== undefined || r1.effect === "unverifiable"), JSON.stringify(r1));
if (sdk) check("act result valid by OpenClaw's schema", validAct(r1));
let g = await gui(taskId);
check("the click is logged on the session's task", g.some((a) => /click/.test(JSON.stringify(a.input_data ?? a))), JSON.stringify(g).slice(0, 300));

// Modifiers, triple click, down/up, scroll, drag, hold_key.
const f = { displayFrameId: s1.displayFrameId, refWidth: 1200 };
const r2 = await act(A, { action: "triple_click", x: 100, y: 100, modifiers: "shift", ...f });
check("triple_click with shift held", r2.ok && /triple/.test(r2.details.observation || ""), JSON.stringify(r2));
const r3 = await act(A, { action: "scroll", x: 100, y: 100, scrollDirection: "up", scrollAmount: 2, modifiers: "ctrl", ...f });
check("scroll up 2 with ctrl", r3.ok, JSON.stringify(r3));
check("left_mouse_down/up", (await act(A, { action: "left_mouse_down", x: 10, y: 10, ...f })).ok && (await act(A, { action: "left_mouse_up", x: 20, y: 20, ...f })).ok);
const r4 = await act(A, { action: "left_click_drag", fromX: 10, fromY: 10, x: 300, y: 200, ...f });
check("drag scaled both ends", r4.ok && r4.details.fromScreenX === 11 && r4.details.screenX === 320, JSON.stringify(r4));
const r5 = await act(A, { action: "hold_key", keys: "shift", durationMs: 150 });
check("hold_key held 150 ms", r5.ok && /held/.test(r5.details.observation || ""), JSON.stringify(r5));
const r6 = await act(A, { action: "get_cursor_position" });
check("cursor position in screen and frame pixels", r6.ok && r6.details.screenX === 320 && r6.details.x === 300, JSON.stringify(r6));

// Stale frames fail closed: nothing reaches detm.
const before = (await gui(taskId)).length;
const s2 = await snap(A);
await throwsCode("old frame refused", "COMPUTER_STALE_FRAME", () => act(A, { action: "left_click", x: 5, y: 5, displayFrameId: s1.displayFrameId, refWidth: 1200 }));
await throwsCode("guessed frame refused", "COMPUTER_STALE_FRAME", () => act(A, { action: "left_click", x: 5, y: 5, displayFrameId: "detm:v1:" + randomUUID(), refWidth: 1200 }));
await throwsCode("coordinates without a frame refused", "COMPUTER_STALE_FRAME", () => act(A, { action: "mouse_move", x: 5, y: 5 }));
await throwsCode("wrong refWidth refused", "COMPUTER_STALE_FRAME", () => act(A, { action: "left_click", x: 5, y: 5, displayFrameId: s2.displayFrameId, refWidth: 1280 }));
await throwsCode("screenIndex 1 refused", "COMPUTER_STALE_FRAME", () => act(A, { action: "left_click", x: 5, y: 5, displayFrameId: s2.displayFrameId, screenIndex: 1 }));
const after = (await gui(taskId)).length;
check("refused actions sent nothing to detm (screenshot is the only new action)", after - before <= 1, `${before} -> ${after}`);
await throwsCode("a point outside the frame is an invalid request", "COMPUTER_INVALID_REQUEST", () => act(A, { action: "left_click", x: 1300, y: 5, displayFrameId: s2.displayFrameId }));
await throwsCode("window targets are not supported", "COMPUTER_UNSUPPORTED_ACTION", () => act(A, { action: "left_click", x: 5, y: 5, windowRef: "w1", displayFrameId: s2.displayFrameId }));
await throwsCode("unknown action unsupported", "COMPUTER_UNSUPPORTED_ACTION", () => cmds["computer.act"].handle(JSON.stringify({ executionId: A, action: "browser_navigate" })));

// Executions: busy, close releases, idempotent, reopen.
await throwsCode("another execution while A is open: busy", "COMPUTER_HOST_BUSY", () => snap(B));
check("close A", (await act(A, { action: "__close_execution" })).ok);
check("close A again (idempotent)", (await act(A, { action: "__close_execution" })).ok);
const sb = await snap(B, {}, { sessionKey: "agent:main:unit-1" });
check("B opens after A closed", /^detm:v1:/.test(sb.displayFrameId));
await throwsCode("A's old frame is not valid in B", "COMPUTER_STALE_FRAME", () => act(B, { action: "left_click", x: 5, y: 5, displayFrameId: s2.displayFrameId }));
check("close B", (await act(B, { action: "__close_execution" })).ok);
const sa = await snap(A, {}, { sessionKey: "agent:main:unit-1" });
check("A reopens after closing", /^detm:v1:/.test(sa.displayFrameId));
check("the same session keeps its task", (await act(A, { action: "get_cursor_position" }, { sessionKey: "agent:main:unit-1" })).details.taskId === taskId);
// Windows: launch_app, list_windows, bring_to_front, the accessibility tree.
const la = await act(A, { action: "launch_app", app: "xterm" }, { sessionKey: "agent:main:unit-1" });
check("launch_app xterm: its window, as a windowRef", la.ok && /^detm:win:0x/.test(la.details.window?.windowRef || ""), JSON.stringify(la));
const lw = await act(A, { action: "list_windows" });
check("list_windows lists it", lw.ok && lw.details.windows.some((w) => w.windowRef === la.details.window?.windowRef), JSON.stringify(lw).slice(0, 400));
const bf = await act(A, { action: "bring_to_front", windowRef: la.details.window?.windowRef });
check("bring_to_front focuses it", bf.ok, JSON.stringify(bf));
await throwsCode("bring_to_front with a made-up windowRef", "COMPUTER_INVALID_REQUEST", () => act(A, { action: "bring_to_front", windowRef: "w-1" }));
const at = await act(A, { action: "get_accessibility_tree", maxElements: 50 });
check("get_accessibility_tree answers (elements listed, maybe none)", at.ok && Array.isArray(at.details.elements), JSON.stringify(at).slice(0, 300));
if (sdk) check("window replies valid by OpenClaw's schema", [la, lw, bf, at].every((r) => validAct(r)));
// The effect is detm's: the same word as the logged action's output (or
// "unverifiable" when detm gives none), for a type into the focused xterm.
const ty = await act(A, { action: "type", text: "echo effect\n" });
const lastType = (await gui(taskId)).filter((a) => a.input_data?.action === "type").pop();
const detmEffect = lastType?.output_data?.effect;
check(`type's effect is detm's own (${ty.effect}, detm: ${detmEffect ?? "none"})`,
	ty.effect === (["confirmed", "suspected_noop", "unverifiable"].includes(detmEffect) ? detmEffect : "unverifiable"), JSON.stringify(lastType?.output_data));
await act(A, { action: "__close_execution" });

// A second session gets a second task on another display.
const C = randomUUID();
await snap(C, {}, { sessionKey: "agent:main:unit-2" });
const cc = await act(C, { action: "get_cursor_position" }, { sessionKey: "agent:main:unit-2" });
const t2 = await api("GET", `/api/tasks/${cc.details.taskId}`);
check("second session: its own task and display", cc.details.taskId !== taskId && t2.metadata?.display && t2.metadata.display !== t1.metadata.display, `${cc.details.taskId} ${t2.metadata?.display}`);

// Cancellation: a long type stops between chunks.
const ctl = new AbortController();
const long = "x".repeat(2000);
setTimeout(() => ctl.abort(new Error("test cancels")), 30);
try {
	await cmds["computer.act"].handle(JSON.stringify({ executionId: C, action: "type", text: long }), null, { signal: ctl.signal, sessionKey: "agent:main:unit-2" });
	bad("cancelled type stops", "it typed all 2000 characters");
} catch (e) {
	check("cancelled type stops with an error", /^COMPUTER_DRIVER_ERROR: cancelled/.test(e.message), e.message);
}
const typed = (await gui(cc.details.taskId)).filter((a) => /"type"/.test(JSON.stringify(a.input_data ?? a)));
check("cancelled type sent fewer than all chunks", typed.length < Math.ceil(2000 / 48), `${typed.length} chunks`);
await act(C, { action: "__close_execution" });

// A new plugin process (the Gateway's helper is one per turn) finds the
// session's task again in detm.
{
	const fresh = createExecutionHost(createDetmProvider({ url: URL_ }));
	const F = randomUUID();
	await fresh.snapshot(JSON.stringify({ executionId: F, maxWidth: 320 }), { sessionKey: "agent:main:unit-1" });
	const fr = JSON.parse(await fresh.act(JSON.stringify({ executionId: F, action: "get_cursor_position" }), { sessionKey: "agent:main:unit-1" }));
	check("a new plugin process finds the session's task again", fr.details.taskId === taskId, `${fr.details.taskId} vs ${taskId}`);
	await fresh.close();
}

// The lease: an owner idle past it loses the computer; a busy one never.
let clock = 0;
const prov = createDetmProvider({ url: URL_ });
const host = createExecutionHost(prov, { leaseMs: 1000, now: () => clock });
const D = randomUUID(), E = randomUUID();
await host.snapshot(JSON.stringify({ executionId: D, maxWidth: 640 }), { sessionKey: "agent:main:unit-2" });
await throwsCode("lease: busy while fresh", "COMPUTER_HOST_BUSY", () => host.snapshot(JSON.stringify({ executionId: E })));
clock = 5000;
const se = JSON.parse(await host.snapshot(JSON.stringify({ executionId: E, maxWidth: 640 }), { sessionKey: "agent:main:unit-2" }));
check("lease: an idle owner is closed, the newcomer takes over", se.width === 640 && host.owner.id === E);
await host.close();
check("host close releases", host.owner === null);

// Errors: detmd unreachable; detm's own message kept.
const dead = createDetmProvider({ url: "http://127.0.0.1:1" });
const dh = createExecutionHost(dead);
await throwsCode("unreachable detmd: driver unavailable", "COMPUTER_DRIVER_UNAVAILABLE", () => dh.snapshot(JSON.stringify({ executionId: randomUUID() })));
const fixed = createDetmProvider({ url: URL_, taskId: "ffffffff" });
await throwsCode("a configured task that does not exist: detm's message", "COMPUTER_INVALID_REQUEST", () => createExecutionHost(fixed).snapshot(JSON.stringify({ executionId: randomUUID() })));

console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
