// provider.js - detm as an OpenClaw computer-use provider (contract version 2):
// the capability descriptor, one detm task (with its own display) per
// OpenClaw session, and executions that turn `screen.snapshot` and
// `computer.act` into detmd's HTTP calls (docs/api.md).
//
// Invariants:
// - Every snapshot issues a fresh `displayFrameId` ("detm:v1:<uuid>"); an
//   execution keeps only its latest one. A coordinate action must name that
//   frame (and a `refWidth` equal to the requested or delivered width), and
//   the task's display must still be the one and the size it was: anything
//   else is COMPUTER_STALE_FRAME and nothing is sent (fail closed).
// - Coordinates are scaled from the snapshot's pixels to screen pixels here,
//   once; detmd gets screen pixels (no coords=image).
// - `effect` is detm's own verdict when its reply carries one
//   (confirmed|suspected_noop|unverifiable), else "unverifiable"; never
//   "confirmed" without detm saying so.
// - `type` goes out in chunks; the AbortSignal stops it between chunks (and
//   aborts the request in flight).
// - A session's task is found again after a restart of the plugin's process
//   (the Gateway's computer helper may not outlive a turn): detm's active
//   tasks carry metadata.openclaw_session.
// Does not: hold the execution lock (host.js does), talk to OpenClaw, or
// keep anything on disk itself.

import { randomUUID } from "node:crypto";
import { DetmClient, computerError, cancelledError } from "./detm-http.js";

export const PROVIDER_ID = "detm";
export const FRAME_PREFIX = "detm:v1:";

// The V2 actions this provider performs (descriptor order).
export const ACTIONS = [
	"screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
	"mouse_move", "left_click_drag", "left_mouse_down", "left_mouse_up", "scroll", "type", "key",
	"hold_key", "wait", "list_windows", "get_cursor_position", "bring_to_front", "launch_app",
	"get_accessibility_tree",
];

const CLICKS = {
	left_click: { action: "click" },
	right_click: { action: "right_click" },
	middle_click: { action: "middle_click" },
	double_click: { action: "double_click" },
	triple_click: { action: "click", count: 3 },
	mouse_move: { action: "mouse_move" },
	left_mouse_down: { action: "mouse_down", button: 1 },
	left_mouse_up: { action: "mouse_up", button: 1 },
};
const EFFECTS = new Set(["confirmed", "suspected_noop", "unverifiable"]);
// OpenClaw's key words -> detm's (xdotool-style) names.
const KEY_ALIAS = {
	cmd: "super", command: "super", meta: "super", win: "super", windows: "super",
	option: "alt", opt: "alt", control: "ctrl", enter: "Return", return: "Return",
	esc: "Escape", escape: "Escape", backspace: "BackSpace", del: "Delete", delete: "Delete",
	tab: "Tab", space: "space", pageup: "Page_Up", pagedown: "Page_Down", arrowup: "Up",
	arrowdown: "Down", arrowleft: "Left", arrowright: "Right",
};
const TYPE_CHUNK = 48;          // code points per detm `type` call
const MAX_HOLD_MS = 60000;      // detm's press_key hold_ms cap

function sleep(ms, signal) {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(cancelledError(signal));
		const t = setTimeout(() => { signal?.removeEventListener("abort", onAbort); resolve(); }, ms);
		const onAbort = () => { clearTimeout(t); reject(cancelledError(signal)); };
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}

function parseParams(paramsJSON) {
	if (paramsJSON == null || paramsJSON === "") return {};
	let v;
	try {
		v = typeof paramsJSON === "string" ? JSON.parse(paramsJSON) : paramsJSON;
	} catch {
		throw computerError("INVALID_REQUEST", "params must be valid JSON");
	}
	if (!v || typeof v !== "object" || Array.isArray(v)) throw computerError("INVALID_REQUEST", "params must be a JSON object");
	return v;
}

// "cmd+shift+t" / "ctrl shift" -> "super+shift+t" (one chord for detm).
export function mapChord(s) {
	return String(s).trim().split(/[+\s,]+/).filter(Boolean)
		.map((k) => KEY_ALIAS[k.toLowerCase()] ?? k).join("+");
}

// The chord sequence of `key`: chords separated by spaces stay separate.
function mapKeys(s) {
	return String(s).trim().split(/\s+/).filter(Boolean)
		.map((c) => c.split("+").map((k) => KEY_ALIAS[k.toLowerCase()] ?? k).join("+")).join(" ");
}

function effectOf(reply) {
	const e = reply?.effect ?? reply?.result?.effect ?? reply?.verification?.effect;
	return EFFECTS.has(e) ? e : "unverifiable";
}

// The combined verdict of several detm calls (chunked typing): confirmed only
// if every one was, suspected_noop if any was, else unverifiable.
function combineEffects(list) {
	if (list.length && list.every((e) => e === "confirmed")) return "confirmed";
	return list.includes("suspected_noop") ? "suspected_noop" : "unverifiable";
}

function num(v, name, { min = 0, int = false } = {}) {
	if (v === undefined) return undefined;
	if (typeof v !== "number" || !Number.isFinite(v) || v < min || (int && !Number.isInteger(v)))
		throw computerError("INVALID_REQUEST", `${name} must be a ${int ? "integer" : "number"} >= ${min}`);
	return v;
}

export function resolveConfig(raw = {}, env = process.env) {
	const cfg = raw && typeof raw === "object" ? raw : {};
	return {
		url: cfg.url || env.ACU_DAEMON_URL || "http://127.0.0.1:18790",
		token: cfg.token || env.ACU_TOKEN || "",
		taskId: cfg.taskId || "",
		leaseMs: num(cfg.leaseMs, "leaseMs", { min: 1000, int: true }) ?? 600000,
		sessionIdleMs: num(cfg.sessionIdleMs, "sessionIdleMs", { min: 1000, int: true }) ?? 3600000,
		requestTimeoutMs: num(cfg.requestTimeoutMs, "requestTimeoutMs", { min: 1000, int: true }) ?? 120000,
	};
}

// createDetmProvider(config, {fetch}) -> a ComputerUseProvider (OpenClaw's
// type) with two extras for host.js and tests: `sessions` (sessionKey ->
// {taskId, lastUsed}) and `releaseIdleSessions()`.
export function createDetmProvider(rawConfig, deps = {}) {
	const cfg = resolveConfig(rawConfig, deps.env);
	const client = new DetmClient({ url: cfg.url, token: cfg.token, timeoutMs: cfg.requestTimeoutMs, fetch: deps.fetch });
	const generation = randomUUID();
	const sessions = new Map();     // sessionKey -> {taskId, lastUsed}
	const creating = new Map();     // sessionKey -> Promise<taskId>
	let available = true;

	async function taskAlive(taskId, signal) {
		try {
			const t = await client.request("GET", `/api/tasks/${encodeURIComponent(taskId)}`, undefined, { signal });
			return t.status === "active" || t.status === "paused";
		} catch (err) {
			if (err.detmCode === "not_found") return false;
			throw err;
		}
	}

	// The detm task of a session: the configured one, the one made earlier
	// (if it is still open), or a new one with its own display.
	async function taskFor(sessionKey, signal) {
		if (cfg.taskId) return cfg.taskId;
		const key = sessionKey || "default";
		const known = sessions.get(key);
		if (known && (await taskAlive(known.taskId, signal))) {
			known.lastUsed = Date.now();
			return known.taskId;
		}
		if (creating.has(key)) return creating.get(key);
		const p = (async () => {
			// The Gateway runs its computer helper in a process that may not
			// outlive a turn: detm itself remembers which task a session has.
			const open = await client.request("GET", "/api/tasks?status=active&limit=500", undefined, { signal });
			const mine = (open.tasks || []).find((t) => t.metadata?.openclaw_session === key &&
				t.metadata?.source === "openclaw-computer-use" && t.metadata?.display);
			if (mine) {
				sessions.set(key, { taskId: mine.task_id, lastUsed: Date.now() });
				return mine.task_id;
			}
			const t = await client.request("POST", "/api/tasks", {
				name: `OpenClaw session ${key}`.slice(0, 200),
				display: true,
				// A real session key also routes the task's wake-ups (smart waits,
				// loops) to that session (detm's wake.h: openclaw_session_key).
				metadata: { openclaw_session: key, source: "openclaw-computer-use",
					...(sessionKey ? { openclaw_session_key: sessionKey } : {}) },
			}, { signal });
			if (!t.metadata?.display)      // never drive the shared desktop instead
				throw computerError("DRIVER_UNAVAILABLE", `detmd made task ${t.task_id} without a display of its own; free a display (task_displays_max) and try again`);
			sessions.set(key, { taskId: t.task_id, lastUsed: Date.now() });
			return t.task_id;
		})();
		creating.set(key, p);
		try {
			return await p;
		} finally {
			creating.delete(key);
		}
	}

	// Sessions idle longer than sessionIdleMs give their display back (the
	// task stays, with its log; a later call makes a new task).
	async function releaseIdleSessions(now = Date.now()) {
		const released = [];
		for (const [key, s] of sessions) {
			if (now - s.lastUsed < cfg.sessionIdleMs) continue;
			sessions.delete(key);
			released.push(s.taskId);
			await client.request("DELETE", `/api/tasks/${s.taskId}/display`).catch(() => {});
		}
		return released;
	}

	async function displayOf(taskId, signal) {
		const d = await client.request("GET", `/api/tasks/${taskId}/display`, undefined, { signal });
		return { name: d.name, width: d.width, height: d.height };
	}

	function openExecution(ctx = {}) {
		const executionId = ctx.executionId;
		const sessionKey = ctx.sessionKey;
		let frame = null;       // the latest snapshot of this execution
		let closed = false;
		let taskId = null;

		const ensureOpen = () => {
			if (closed) throw computerError("INVALID_REQUEST", `execution ${executionId} is closed`);
		};
		const task = async (signal) => {
			if (!taskId) taskId = await taskFor(sessionKey, signal);
			const s = sessions.get(sessionKey || "default");
			if (s) s.lastUsed = Date.now();
			return taskId;
		};
		const act1 = (body, signal) => client.request("POST", "/api/desktop/action", body, { signal });

		async function snapshot(paramsJSON, signal) {
			ensureOpen();
			const p = parseParams(paramsJSON);
			if (p.screenIndex !== undefined && p.screenIndex !== 0)
				throw computerError("INVALID_REQUEST", `screenIndex ${p.screenIndex}: a detm task display has one screen (0)`);
			const maxWidth = num(p.maxWidth, "maxWidth", { min: 1, int: true });
			const quality = num(p.quality, "quality", { min: 0 });
			if (quality !== undefined && quality > 1) throw computerError("INVALID_REQUEST", "quality must be within 0..1");
			if (p.format !== undefined && p.format !== "jpeg" && p.format !== "png")
				throw computerError("INVALID_REQUEST", "format must be jpeg or png");
			const id = await task(signal);
			const q = new URLSearchParams({ task_id: id, format: "json" });
			if (maxWidth) q.set("max_width", String(Math.min(maxWidth, 4096)));
			if (quality !== undefined) q.set("quality", String(Math.max(1, Math.min(100, Math.round(quality * 100)))));
			const shot = await client.request("GET", `/api/desktop/screenshot?${q}`, undefined, { signal });
			ensureOpen();
			const format = /png/.test(shot.mime_type || "") ? "png" : "jpeg";
			const displayFrameId = FRAME_PREFIX + randomUUID();
			frame = {
				id: displayFrameId, taskId: id, display: shot.display,
				imageW: shot.image_size.width, imageH: shot.image_size.height,
				screenW: shot.screen_size.width, screenH: shot.screen_size.height,
				originX: shot.region?.x ?? 0, originY: shot.region?.y ?? 0,
				regionW: shot.region?.width ?? shot.screen_size.width,
				regionH: shot.region?.height ?? shot.screen_size.height,
				maxWidth: maxWidth ?? null,
			};
			return JSON.stringify({
				format, base64: shot.image_b64, displayFrameId, screenIndex: 0,
				width: frame.imageW, height: frame.imageH, capturedAtMs: Date.now(),
			});
		}

		// The frame a coordinate action names, checked; throws STALE_FRAME.
		async function checkedFrame(p, signal) {
			const stale = (why) => computerError("STALE_FRAME", `${why}; take a new screenshot and use its frame`);
			if (typeof p.displayFrameId !== "string" || !p.displayFrameId)
				throw stale("no displayFrameId with the coordinates");
			if (!frame) throw stale(`frame ${p.displayFrameId} was not issued by this execution`);
			if (p.displayFrameId !== frame.id) throw stale(`frame ${p.displayFrameId} is not the latest frame of this execution`);
			if (p.screenIndex !== undefined && p.screenIndex !== 0) throw stale(`screenIndex ${p.screenIndex} is not the frame's screen (0)`);
			if (p.refWidth !== undefined && p.refWidth !== frame.imageW && p.refWidth !== frame.maxWidth)
				throw stale(`refWidth ${p.refWidth} matches neither the frame's width (${frame.imageW}) nor its requested maxWidth (${frame.maxWidth})`);
			const d = await displayOf(frame.taskId, signal).catch((err) => {
				if (err.detmCode === "not_found") throw stale("the frame's display is gone");
				throw err;
			});
			if (d.name !== frame.display || d.width !== frame.screenW || d.height !== frame.screenH)
				throw stale(`the display changed since the frame (${frame.display} ${frame.screenW}x${frame.screenH}, now ${d.name} ${d.width}x${d.height})`);
			return frame;
		}

		// Image pixel -> screen pixel, once, clamped to the screen.
		function toScreen(f, x, y) {
			const sx = f.originX + Math.round((x * f.regionW) / f.imageW);
			const sy = f.originY + Math.round((y * f.regionH) / f.imageH);
			if (x > f.imageW || y > f.imageH)
				throw computerError("INVALID_REQUEST", `(${x},${y}) is outside the ${f.imageW}x${f.imageH} frame`);
			return [Math.min(sx, f.screenW - 1), Math.min(sy, f.screenH - 1)];
		}

		function result(reply, p, extra = {}) {
			const details = {
				scope: "desktop", provider: PROVIDER_ID, taskId, display: reply?.display,
				detmAction: reply?.action, observation: reply?.observation,
				durationMs: reply?.duration_ms, ...extra,
			};
			if (reply?.evidence !== undefined) details.evidence = reply.evidence;
			if (reply?.focus_window !== undefined) details.focusWindow = reply.focus_window;
			for (const k of Object.keys(details)) if (details[k] === undefined) delete details[k];
			return JSON.stringify({ ok: true, effect: extra.effect ?? effectOf(reply), details: { ...details, effect: undefined } });
		}

		async function pointer(p, spec, signal) {
			const body = { task_id: await task(signal), action: spec.action };
			if (spec.count) body.count = spec.count;
			if (spec.button) body.button = spec.button;
			const extra = {};
			const hasXY = p.x !== undefined || p.y !== undefined;
			if (hasXY) {
				if (p.x === undefined || p.y === undefined) throw computerError("INVALID_REQUEST", "give both x and y");
				num(p.x, "x"); num(p.y, "y");
				const f = await checkedFrame(p, signal);
				[body.x, body.y] = toScreen(f, p.x, p.y);
				Object.assign(extra, { frameX: p.x, frameY: p.y, screenX: body.x, screenY: body.y, displayFrameId: f.id });
			} else if (spec.action === "mouse_move") {
				throw computerError("INVALID_REQUEST", "mouse_move needs x and y");
			}
			if (p.modifiers) body.hold = mapChord(p.modifiers);
			if (p.action === "scroll") {
				body.action = "scroll";
				body.direction = p.scrollDirection || "down";
				body.amount = Math.min(100, num(p.scrollAmount, "scrollAmount", { min: 1, int: true }) ?? 3);
			}
			return result(await act1(body, signal), p, extra);
		}

		async function drag(p, signal) {
			if (p.x === undefined || p.y === undefined) throw computerError("INVALID_REQUEST", "left_click_drag needs x and y");
			const f = await checkedFrame(p, signal);
			const body = { task_id: await task(signal), action: "drag", button: 1 };
			[body.x2, body.y2] = toScreen(f, num(p.x, "x"), num(p.y, "y"));
			if (p.fromX !== undefined || p.fromY !== undefined) {
				[body.x, body.y] = toScreen(f, num(p.fromX, "fromX"), num(p.fromY, "fromY"));
			} else {
				const pos = await act1({ task_id: body.task_id, action: "get_mouse_position" }, signal);
				[body.x, body.y] = [pos.x, pos.y];
			}
			return result(await act1(body, signal), p, { screenX: body.x2, screenY: body.y2, fromScreenX: body.x, fromScreenY: body.y, displayFrameId: f.id });
		}

		async function typeText(p, signal) {
			if (typeof p.text !== "string" || !p.text) throw computerError("INVALID_REQUEST", "type needs text");
			const id = await task(signal);
			const cps = Array.from(p.text);
			const effects = [];
			let last, typed = 0;
			for (let i = 0; i < cps.length; i += TYPE_CHUNK) {
				if (signal?.aborted) {
					const e = cancelledError(signal);
					e.message += ` after ${typed} of ${cps.length} characters`;
					throw e;
				}
				const chunk = cps.slice(i, i + TYPE_CHUNK).join("");
				last = await act1({ task_id: id, action: "type", text: chunk }, signal);
				typed += Array.from(chunk).length;
				effects.push(effectOf(last));
			}
			return result(last, p, { chars: typed, chunks: effects.length, effect: combineEffects(effects) });
		}

		async function key(p, signal, hold) {
			const keys = p.keys ?? p.text;
			if (typeof keys !== "string" || !keys.trim()) throw computerError("INVALID_REQUEST", `${p.action} needs keys`);
			const body = { task_id: await task(signal), action: "press_key", keys: hold ? mapChord(keys) : mapKeys(keys) };
			if (hold) body.hold_ms = Math.min(MAX_HOLD_MS, Math.max(1, num(p.durationMs, "durationMs", { min: 1, int: true }) ?? 1000));
			return result(await act1(body, signal), p);
		}

		async function windows(p, signal) {
			const r = await act1({ task_id: await task(signal), action: "list_windows" }, signal);
			const list = (r.windows || []).slice(0, 200).map((w) => ({
				windowRef: `detm:win:${w.id}`, title: w.title, app: w.class, pid: w.pid,
				bounds: { x: w.x, y: w.y, width: w.width, height: w.height }, focused: w.focused, visible: w.visible,
			}));
			return JSON.stringify({ ok: true, effect: "unverifiable", details: { scope: "desktop", taskId, display: r.display, coordinateSpace: "screen-pixels", windows: list, count: r.count } });
		}

		async function cursor(p, signal) {
			const r = await act1({ task_id: await task(signal), action: "get_mouse_position" }, signal);
			const details = { scope: "desktop", taskId, display: r.display, screenX: r.x, screenY: r.y };
			if (frame && frame.taskId === taskId) {
				details.x = Math.round(((r.x - frame.originX) * frame.imageW) / frame.regionW);
				details.y = Math.round(((r.y - frame.originY) * frame.imageH) / frame.regionH);
				details.displayFrameId = frame.id;
			}
			return JSON.stringify({ ok: true, effect: "unverifiable", details });
		}

		async function front(p, signal) {
			const m = /^detm:win:(0x[0-9a-fA-F]+)$/.exec(p.windowRef || "");
			if (!m) throw computerError("INVALID_REQUEST", "windowRef must come from list_windows (detm:win:0x...)");
			return result(await act1({ task_id: await task(signal), action: "focus_window", window_id: m[1] }, signal), p);
		}

		async function launch(p, signal) {
			if (typeof p.app !== "string" || !p.app.trim()) throw computerError("INVALID_REQUEST", "launch_app needs app");
			const id = await task(signal);
			const app = p.app.trim();
			// A URL, a file or a desktop id opens (xdg-open/browser/Exec line); a name runs.
			const body = /:\/\/|\.desktop$|^\//.test(app) ? { open: app } : { command: app };
			const r = await client.request("POST", `/api/tasks/${id}/launch`, body, { signal });
			return JSON.stringify({ ok: true, effect: r.window ? "confirmed" : "unverifiable", details: {
				scope: "desktop", taskId: id, display: r.display, pid: r.pid, program: r.program, status: r.status,
				window: r.window ? { windowRef: `detm:win:${r.window.id}`, title: r.window.title } : null,
				observation: r.observation, waitedMs: r.waited_ms } });
		}

		async function tree(p, signal) {
			const q = new URLSearchParams({ task_id: await task(signal), max: String(Math.min(1000, num(p.maxElements, "maxElements", { min: 1, int: true }) ?? 200)) });
			if (p.query) q.set("name", p.query);
			const r = await client.request("GET", `/api/desktop/elements?${q}`, undefined, { signal });
			const elements = (r.elements || []).map((e) => ({ role: e.role, label: e.name, value: e.value ?? e.text, states: e.states, bounds: e.bounds, window: e.window }));
			return JSON.stringify({ ok: true, effect: "unverifiable", details: { scope: "desktop", taskId, coordinateSpace: "screen-pixels", elements, count: r.count, truncated: r.truncated } });
		}

		async function act(paramsJSON, signal) {
			ensureOpen();
			const p = parseParams(paramsJSON);
			const a = p.action;
			if (signal?.aborted) throw cancelledError(signal);
			if (p.windowRef !== undefined && a !== "bring_to_front" && a !== "get_accessibility_tree")
				throw computerError("UNSUPPORTED_ACTION", `${a} with windowRef: detm drives the whole task display (target "screen")`);
			if (p.elementRef !== undefined || p.observationId !== undefined)
				throw computerError("UNSUPPORTED_ACTION", `${a} with element or observation references is not supported by detm`);
			if (CLICKS[a]) return pointer(p, CLICKS[a], signal);
			switch (a) {
			case "scroll": return pointer(p, { action: "scroll" }, signal);
			case "left_click_drag": return drag(p, signal);
			case "type": return typeText(p, signal);
			case "key": return key(p, signal, false);
			case "hold_key": return key(p, signal, true);
			case "wait":
				await sleep(Math.min(100000, num(p.durationMs, "durationMs", { min: 0, int: true }) ?? 1000), signal);
				return JSON.stringify({ ok: true, effect: "unverifiable", details: { scope: "desktop" } });
			case "list_windows": return windows(p, signal);
			case "get_cursor_position": return cursor(p, signal);
			case "bring_to_front": return front(p, signal);
			case "launch_app": return launch(p, signal);
			case "get_accessibility_tree": return tree(p, signal);
			case "screenshot":
				throw computerError("INVALID_REQUEST", "screenshot is screen.snapshot, not computer.act");
			default:
				throw computerError("UNSUPPORTED_ACTION", `${a}: detm's provider performs ${ACTIONS.join(", ")}`);
			}
		}

		async function close() {
			closed = true;     // idempotent; the session's task and display stay for its next execution
			frame = null;
		}

		return Promise.resolve({ executionId, snapshot, act, close, get taskId() { return taskId; }, get frameId() { return frame?.id; } });
	}

	return {
		id: PROVIDER_ID,
		label: "detm task displays",
		config: cfg,
		client,
		sessions,
		releaseIdleSessions,
		capabilities() {
			return {
				contractVersion: 2,
				provider: { id: PROVIDER_ID, label: "detm task displays", generation },
				actions: [...ACTIONS],
				targets: ["screen"],
				deliveryModes: ["foreground"],
				observations: ["image"],
				features: { recording: false, agentCursor: false, multiDisplay: false },
			};
		},
		isAvailable() { return available; },
		async prepare() {
			try {
				await client.request("GET", "/api/health", undefined, { timeoutMs: 5000 });
				available = true;
			} catch {
				available = false;
			}
		},
		openExecution,
	};
}
