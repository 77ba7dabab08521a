// skills.mjs - detm's usage guide as an MCP skill (the skills extension,
// SEP-2640) and tools/list's order, through the official TypeScript SDKs
// over stdio (bin/detm-mcp) and Streamable HTTP (detmd's /mcp):
//  - 2.x (@modelcontextprotocol/client) with its SkillsClient
//    (@modelcontextprotocol/client/ext/skills), in the handshake era and
//    pinned to 2026-07-28: the extension is declared, skills/list has one
//    skill (skill://detm/SKILL.md, frontmatter name "detm"), skills/get
//    returns it, and read() verifies the file against the listed digest,
//    size and frontmatter and gives back integrations/openclaw/SKILL.md
//    byte for byte (one source: the file is compiled into both programs);
//  - 1.x (@modelcontextprotocol/sdk, no skills helper): resources/list
//    lists the file and resources/read returns it;
//  - tools/list is the tool table in its order (GET /api/tools), the same
//    on every call, transport and era.
// Needs DETM_URL, DETM_BIN. Prints "N passed, N failed".
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const bin = path.resolve(root, process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
const headers = process.env.DETM_TOKEN ? { Authorization: `Bearer ${process.env.DETM_TOKEN}` } : {};
const skillFile = fs.readFileSync(path.join(root, "integrations/openclaw/SKILL.md"), "utf8");
const URI = "skill://detm/SKILL.md";
let passed = 0, failed = 0;
const check = (name, cond, detail) => {
	if (cond) { passed++; console.log(`ok   skills: ${name}`); }
	else { failed++; console.log(`FAIL skills: ${name}${detail ? ": " + String(detail).slice(0, 600) : ""}`); }
};

const stdioParams = () => ({ command: bin, args: ["--url", url], stderr: "pipe",
	env: { PATH: process.env.PATH, ...(process.env.DETM_TOKEN ? { ACU_TOKEN: process.env.DETM_TOKEN } : {}) } });

async function connect(sdk, pin, transport) {
	if (sdk === 1) {
		const c = new Client1({ name: "detm-skills", version: "1.0.0" });
		await c.connect(transport === "stdio" ? new Stdio1(stdioParams())
			: new Http1(new URL(`${url}/mcp`), { requestInit: { headers } }));
		return c;
	}
	const c = new Client2({ name: "detm-skills", version: "2.0.0" },
		pin ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
	await c.connect(transport === "stdio" ? new Stdio2(stdioParams())
		: new Http2(new URL(`${url}/mcp`), { requestInit: { headers } }));
	return c;
}

const table = (await fetch(`${url}/api/tools`, { headers }).then((r) => r.json())).tools.map((t) => t.name);

async function order(name, c) {
	const a = (await c.listTools()).tools.map((t) => t.name);
	const b = (await c.listTools()).tools.map((t) => t.name);
	check(`${name}: tools/list is the tool table in its order, twice`,
		JSON.stringify(a) === JSON.stringify(table) && JSON.stringify(b) === JSON.stringify(a),
		`${a.slice(0, 5).join(",")}... vs ${table.slice(0, 5).join(",")}...`);
}

async function skills2(name, c, modern) {
	const sc = new SkillsClient(c);
	check(`${name}: the server declares ${"io.modelcontextprotocol/skills"}`, sc.supported);
	const l = await sc.list();
	check(`${name}: skills/list has one skill, ${URI}, none invalid`,
		l.skills.length === 1 && l.skills[0].uri === URI && l.invalid.length === 0, JSON.stringify(l).slice(0, 300));
	if (modern)
		check(`${name}: skills/list carries ttlMs and cacheScope (2026-07-28)`,
			typeof l.ttlMs === "number" && typeof l.cacheScope === "string", JSON.stringify(l).slice(0, 200));
	const sk = l.skills[0] || {};
	check(`${name}: the skill's frontmatter names detm and says when to use it`,
		sk.frontmatter && sk.frontmatter.name === "detm" && /desktop/.test(sk.frontmatter.description || ""),
		JSON.stringify(sk.frontmatter));
	const g = await sc.get(URI);
	check(`${name}: skills/get returns the listed entry`, JSON.stringify(g.skill) === JSON.stringify(sk),
		JSON.stringify(g).slice(0, 300));
	const f = await sc.read(sk);
	check(`${name}: read() verifies SKILL.md (digest, size, frontmatter) and it is integrations/openclaw/SKILL.md`,
		f.verified === true && f.text === skillFile && f.mimeType === "text/markdown",
		`verified=${f.verified} ${f.text ? f.text.length : "no text"} bytes vs ${skillFile.length}`);
	check(`${name}: the skill holds detm's MCP instructions`,
		typeof c.getInstructions === "function" && !modern ? f.text.includes(c.getInstructions()) : /smart_wait/.test(f.text),
		"");
	const bad = await sc.get("skill://nope/SKILL.md").then(() => null, (e) => e);
	check(`${name}: skills/get of an unknown skill is -32602`, bad && bad.code === -32602, String(bad));
}

async function resources1(name, c) {
	const caps = c.getServerCapabilities() || {};
	check(`${name}: capabilities declare resources and the skills extension`,
		caps.resources && caps.extensions && "io.modelcontextprotocol/skills" in caps.extensions, JSON.stringify(caps));
	const { resources } = await c.listResources();
	check(`${name}: resources/list lists ${URI} as text/markdown`,
		resources.length === 1 && resources[0].uri === URI && resources[0].mimeType === "text/markdown" &&
		resources[0].name === "detm", JSON.stringify(resources));
	const r = await c.readResource({ uri: URI });
	check(`${name}: resources/read returns integrations/openclaw/SKILL.md`,
		r.contents.length === 1 && r.contents[0].text === skillFile, JSON.stringify(r).slice(0, 200));
	const e = await c.readResource({ uri: "file:///etc/passwd" }).then(() => null, (x) => x);
	check(`${name}: resources/read of anything else is -32602 (nothing else is served)`, e && e.code === -32602, String(e));
}

for (const transport of ["stdio", "http"]) {
	let c;
	for (const pin of [false, true]) {
		const name = `2.x ${pin ? "2026-07-28" : "handshake"} ${transport}`;
		try {
			c = await connect(2, pin, transport);
			await skills2(name, c, pin);
			await order(name, c);
		} catch (e) {
			check(`${name}: runs`, false, e && e.stack);
		} finally {
			await c?.close().catch(() => {});
		}
	}
	const name = `1.x ${transport}`;
	try {
		c = await connect(1, false, transport);
		await resources1(name, c);
		await order(name, c);
	} catch (e) {
		check(`${name}: runs`, false, e && e.stack);
	} finally {
		await c?.close().catch(() => {});
	}
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
