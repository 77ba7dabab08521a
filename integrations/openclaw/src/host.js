// host.js - the execution lock and the two node-host commands
// (`screen.snapshot`, `computer.act`) that OpenClaw's Gateway (its private
// computer helper) or a paired node calls.
//
// Invariants:
// - One execution owns the computer at a time. A call with another
//   executionId gets COMPUTER_HOST_BUSY while the owner is live; an owner
//   idle longer than the lease (leaseMs, default 10 min) is closed and the
//   newcomer takes over, so a caller that never closes cannot lock detm out.
// - Closing (`__close_execution`, a disconnect, stop) is idempotent and
//   always releases the lock, even when the provider's close throws.
// - A `screen.snapshot` without an executionId runs in a throw-away execution
//   of its own (closed at once); its frame cannot authorize input.
// Does not: validate action shapes (provider.js) or talk HTTP.

import { randomUUID } from "node:crypto";
import { computerError } from "./detm-http.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

function envelope(paramsJSON) {
	let v;
	try {
		v = JSON.parse(paramsJSON ?? "{}");
	} catch {
		throw computerError("INVALID_REQUEST", "params must be valid JSON");
	}
	if (!v || typeof v !== "object" || Array.isArray(v)) throw computerError("INVALID_REQUEST", "params must be a JSON object");
	if (v.executionId !== undefined && (typeof v.executionId !== "string" || !UUID.test(v.executionId)))
		throw computerError("INVALID_REQUEST", "executionId must be a UUID");
	return v;
}

export function createExecutionHost(provider, opts = {}) {
	const leaseMs = opts.leaseMs ?? provider.config?.leaseMs ?? 600000;
	const now = opts.now ?? (() => Date.now());
	let owner = null;       // {id, sessionKey, promise, lastUsed, busy}

	async function release(cur, reason) {
		if (!cur) return;
		if (owner === cur) owner = null;
		try {
			const ex = await cur.promise;
			await ex.close(reason);
		} catch {
			/* the lock is released whatever close did */
		}
	}

	async function acquire(executionId, sessionKey) {
		if (owner && owner.id !== executionId) {
			if (owner.busy === 0 && now() - owner.lastUsed >= leaseMs) {
				await release(owner, "lease-expired");
			} else {
				throw computerError("HOST_BUSY", `execution ${owner.id} owns the detm computer (idle ${Math.round((now() - owner.lastUsed) / 1000)} s; its lease ends after ${Math.round(leaseMs / 1000)} s idle)`);
			}
		}
		if (!owner) {
			const promise = provider.openExecution(sessionKey ? { executionId, sessionKey } : { executionId });
			const mine = { id: executionId, sessionKey, promise, lastUsed: now(), busy: 0 };
			owner = mine;
			promise.catch(() => { if (owner === mine) owner = null; });
		}
		return owner;
	}

	async function run(cur, fn) {
		cur.busy++;
		cur.lastUsed = now();
		try {
			return await fn(await cur.promise);
		} finally {
			cur.busy--;
			cur.lastUsed = now();
		}
	}

	async function snapshot(paramsJSON, context = {}) {
		const v = envelope(paramsJSON);
		if (!v.executionId) {
			const ex = await provider.openExecution({ executionId: randomUUID(), ...(context.sessionKey ? { sessionKey: context.sessionKey } : {}) });
			try {
				return await ex.snapshot(paramsJSON, context.signal);
			} finally {
				await ex.close("snapshot-complete").catch(() => {});
			}
		}
		const cur = await acquire(v.executionId, context.sessionKey);
		return run(cur, (ex) => ex.snapshot(paramsJSON, context.signal));
	}

	async function act(paramsJSON, context = {}) {
		const v = envelope(paramsJSON);
		if (!v.executionId) throw computerError("INVALID_REQUEST", "executionId is required");
		if (v.action === "__close_execution") {
			if (owner && owner.id === v.executionId)
				await release(owner, typeof v.reason === "string" && v.reason.trim() ? v.reason.slice(0, 64) : "completion");
			return JSON.stringify({ ok: true });
		}
		const cur = await acquire(v.executionId, context.sessionKey);
		return run(cur, (ex) => ex.act(paramsJSON, context.signal));
	}

	return {
		snapshot,
		act,
		close: (reason = "host-stop") => release(owner, reason),
		get owner() { return owner ? { id: owner.id, sessionKey: owner.sessionKey, busy: owner.busy } : null; },
	};
}

// registerDetmComputer(api, provider): the two node-host commands, as
// OpenClaw's node hosts and its Gateway computer helper take them.
export function registerDetmComputer(api, provider, opts = {}) {
	const host = createExecutionHost(provider, opts);
	api.registerNodeHostCommand({
		command: "screen.snapshot",
		cap: "screen",
		dangerous: false,
		prepare: (ctx) => provider.prepare?.(ctx),
		isAvailable: () => provider.isAvailable(),
		hasActiveWork: () => host.owner !== null,
		watchAvailability: () => () => { host.close("node-host-stop"); },
		onDisconnect: () => host.close("gateway-disconnect"),
		handle: (paramsJSON, _io, context) => host.snapshot(paramsJSON, context),
	});
	api.registerNodeHostCommand({
		command: "computer.act",
		cap: "computer",
		dangerous: true,
		computerUse: () => provider.capabilities(),
		isAvailable: () => provider.isAvailable(),
		hasActiveWork: () => host.owner !== null,
		handle: (paramsJSON, _io, context) => host.act(paramsJSON, context),
	});
	return host;
}
