// detm-http.js - the plugin's one way to talk to detmd: JSON over HTTP with
// the token as `Authorization: Bearer` (as detm-mcp sends it), a deadline on
// every request, and the caller's AbortSignal honoured.
//
// Invariants: every failure becomes Error("COMPUTER_<CODE>: <detm's message>")
// (the computer.act contract's error form), never a raw fetch error; detm's
// own error message (its {"error":{"code","message","field"}} shape) is kept
// word for word after the code. Replies are capped (32 MiB, like detm-mcp).
// Does not: retry (an input action must not be sent twice), or know any route
// beyond what its callers pass.

const MAX_REPLY = 32 * 1024 * 1024;

// detm's error codes (docs/api.md) -> the contract's COMPUTER_* codes.
const CODE_MAP = {
	invalid_argument: "INVALID_REQUEST",
	not_found: "INVALID_REQUEST",
	payload_too_large: "INVALID_REQUEST",
	launch_denied: "INVALID_REQUEST",
	conflict: "DRIVER_ERROR",
	unauthorized: "DRIVER_UNAVAILABLE",
	forbidden: "DRIVER_UNAVAILABLE",
	human_control: "DRIVER_UNAVAILABLE",
	unavailable: "DRIVER_UNAVAILABLE",
	not_implemented: "UNSUPPORTED_ACTION",
};

export function computerError(code, message) {
	const e = new Error(`COMPUTER_${code}: ${message}`);
	e.computerCode = `COMPUTER_${code}`;
	return e;
}

// cancelled(signal): the error a cancelled call ends with.
export function cancelledError(signal) {
	const why = signal?.reason instanceof Error ? signal.reason.message : String(signal?.reason ?? "aborted");
	return computerError("DRIVER_ERROR", `cancelled by the caller (${why})`);
}

export class DetmClient {
	// opts: url (detmd's base URL), token (or ""), timeoutMs (per request), fetch
	constructor(opts) {
		this.url = String(opts.url || "http://127.0.0.1:18790").replace(/\/+$/, "");
		this.token = opts.token || "";
		this.timeoutMs = opts.timeoutMs || 120000;
		this.fetch = opts.fetch || globalThis.fetch;
	}

	// request(method, path, body?, {signal, timeoutMs}) -> the parsed JSON reply.
	// Throws COMPUTER_* errors (above).
	async request(method, path, body, opts = {}) {
		const signal = opts.signal;
		if (signal?.aborted) throw cancelledError(signal);
		const ctl = new AbortController();
		const onAbort = () => ctl.abort(signal.reason);
		signal?.addEventListener("abort", onAbort, { once: true });
		const timer = setTimeout(() => ctl.abort(new Error("deadline")), opts.timeoutMs || this.timeoutMs);
		const headers = { Accept: "application/json" };
		if (this.token) headers.Authorization = `Bearer ${this.token}`;
		if (body !== undefined) headers["Content-Type"] = "application/json";
		let res, text;
		try {
			res = await this.fetch(this.url + path, {
				method, headers, signal: ctl.signal,
				body: body === undefined ? undefined : JSON.stringify(body),
			});
			text = await res.text();
		} catch (err) {
			if (signal?.aborted) throw cancelledError(signal);
			if (ctl.signal.aborted)
				throw computerError("DRIVER_UNAVAILABLE", `detmd at ${this.url} did not answer ${method} ${path} within ${opts.timeoutMs || this.timeoutMs} ms`);
			throw computerError("DRIVER_UNAVAILABLE", `detmd at ${this.url} cannot be reached (${err?.cause?.code || err?.message || err}); start detmd or set the plugin's url`);
		} finally {
			clearTimeout(timer);
			signal?.removeEventListener("abort", onAbort);
		}
		if (text.length > MAX_REPLY)
			throw computerError("DRIVER_ERROR", `detmd's reply to ${method} ${path} is over ${MAX_REPLY} bytes`);
		let json;
		try {
			json = text ? JSON.parse(text) : {};
		} catch {
			throw computerError("DRIVER_ERROR", `detmd answered ${method} ${path} with status ${res.status} and no JSON`);
		}
		if (!res.ok) {
			const e = json?.error || {};
			const code = CODE_MAP[e.code] || (res.status === 401 ? "DRIVER_UNAVAILABLE" : "DRIVER_ERROR");
			const extra = res.status === 401 ? " (set the plugin's token, or ACU_TOKEN, to detmd's token)" : "";
			const err = computerError(code, `${e.message || `status ${res.status}`}${e.field ? ` (field ${e.field})` : ""}${extra} [detmd: ${e.code || res.status}]`);
			err.status = res.status;
			err.detmCode = e.code;
			throw err;
		}
		return json;
	}
}
