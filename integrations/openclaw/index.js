// index.js - the OpenClaw plugin entry of detm-computer: registers detm as
// the computer-use provider (contract version 2) of the host it is loaded
// in, the Gateway's own computer or a node host.
//
// Config (plugins.entries["detm-computer"].config, see openclaw.plugin.json):
// url, token (else ACU_DAEMON_URL / ACU_TOKEN), taskId, leaseMs,
// sessionIdleMs, requestTimeoutMs.
// Does not: import OpenClaw's code; the node-host command shapes are the
// documented contract (docs/plugins/sdk-entrypoints/native-providers.md).

import { createDetmProvider } from "./src/provider.js";
import { registerDetmComputer } from "./src/host.js";

export default {
	id: "detm-computer",
	name: "detm computer",
	description: "OpenClaw's computer tool on detm task displays: one display per session, frames that fail closed, detm's own effect verdicts.",
	register(api) {
		const provider = createDetmProvider(api.pluginConfig ?? {});
		registerDetmComputer(api, provider);
		const timer = setInterval(() => { provider.releaseIdleSessions().catch(() => {}); }, 60000);
		timer.unref?.();
	},
};
