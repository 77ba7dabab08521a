// token.mjs - the detm-computer plugin against a detmd started with a token
// (DETM_URL, DETM_TOKEN): the token goes out as Authorization: Bearer, from
// the config or from ACU_TOKEN; without it, or with a wrong one, the error
// is COMPUTER_DRIVER_UNAVAILABLE and says what to set.
import { randomUUID } from "node:crypto";
import { createDetmProvider } from "../../integrations/openclaw/src/provider.js";
import { createExecutionHost } from "../../integrations/openclaw/src/host.js";

let pass = 0, fail = 0;
const check = (n, c, why) => { if (c) { pass++; console.log(`ok   ${n}`); } else { fail++; console.log(`FAIL ${n}${why ? `: ${why}` : ""}`); } };
const shot = (cfg, env = {}) => createExecutionHost(createDetmProvider(cfg, { env }))
	.snapshot(JSON.stringify({ executionId: randomUUID(), maxWidth: 320 }), { sessionKey: "agent:main:token" })
	.then((r) => JSON.parse(r), (e) => e);
const url = process.env.DETM_URL, token = process.env.DETM_TOKEN;

const good = await shot({ url, token });
check("token in the config: the snapshot works", good.width === 320 && /^detm:v1:/.test(good.displayFrameId), good.message);
const fromEnv = await shot({ url }, { ACU_TOKEN: token });
check("token from ACU_TOKEN: the snapshot works", fromEnv.width === 320, fromEnv.message);
const none = await shot({ url });
check("no token: COMPUTER_DRIVER_UNAVAILABLE naming the token", none instanceof Error && /^COMPUTER_DRIVER_UNAVAILABLE: .*token/.test(none.message), none.message);
const wrong = await shot({ url, token: "wrong" });
check("wrong token: COMPUTER_DRIVER_UNAVAILABLE", wrong instanceof Error && /^COMPUTER_DRIVER_UNAVAILABLE:/.test(wrong.message), wrong.message);
const urlEnv = await shot({}, { ACU_DAEMON_URL: url, ACU_TOKEN: token });
check("url from ACU_DAEMON_URL", urlEnv.width === 320, urlEnv.message);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
