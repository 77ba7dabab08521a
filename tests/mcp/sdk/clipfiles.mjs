// clipfiles.mjs - the official MCP TypeScript SDK client (1.x) drives the
// clipboard and task-file tools through bin/detm-mcp, checked against
// outside oracles: xclip (the X clipboard of the task's display) and the
// files on disk. Run by tests/clip/run.sh (which starts detmd).
//
// Needs DETM_URL, DETM_DATA (the daemon's data dir) and DETM_BIN. Prints
// "N passed, N failed" and exits non-zero on failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const bin = path.resolve(root, process.env.DETM_BIN || "bin", "detm-mcp");
const url = process.env.DETM_URL;
const data = process.env.DETM_DATA;
let passed = 0, failed = 0;

function check(name, cond, detail) {
	if (cond) { passed++; console.log(`ok   mcp: ${name}`); }
	else { failed++; console.log(`FAIL mcp: ${name}${detail ? ": " + String(detail).slice(0, 400) : ""}`); }
}
const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function main() {
	const client = new Client({ name: "detm-clipfiles", version: "1.0.0" });
	await client.connect(new StdioClientTransport({ command: bin, args: ["--url", url], stderr: "pipe" }));
	const { tools } = await client.listTools();
	for (const n of ["clipboard_get", "clipboard_set", "file_upload", "file_download", "file_list"])
		check(`${n} is listed with an outputSchema`, tools.some((t) => t.name === n && t.outputSchema));

	let r = await client.callTool({ name: "task_register", arguments: { name: "MCP clip", display: true } });
	const tid = r.structuredContent.task_id;
	const meta = r.structuredContent.metadata;
	const xenv = { ...process.env, DISPLAY: meta.display, XAUTHORITY: meta.xauthority };
	const xclip = (...args) => execFileSync("xclip", args, { env: xenv, timeout: 10000 });

	const words = "MCP sets the clipboard: grüße, 漢字 🙂";
	r = await client.callTool({ name: "clipboard_set", arguments: { task_id: tid, text: words } });
	check("clipboard_set text", !r.isError && r.structuredContent.owner_is_detmd === true, text(r));
	check("xclip reads what clipboard_set put there",
		xclip("-o", "-selection", "clipboard").toString("utf8") === words);
	r = await client.callTool({ name: "clipboard_get", arguments: { task_id: tid } });
	check("clipboard_get gives the text back (structured and in the text block)", !r.isError &&
		r.structuredContent.text === words && text(r).includes(words), text(r));

	const png = execFileSync("convert", ["-size", "23x17", "xc:#3366cc", "png:-"]);
	r = await client.callTool({ name: "clipboard_set", arguments: { task_id: tid, image_base64: png.toString("base64") } });
	check("clipboard_set image", !r.isError && r.structuredContent.image_size.width === 23, text(r));
	check("xclip reads the same PNG bytes", Buffer.compare(xclip("-o", "-selection", "clipboard", "-t", "image/png"), png) === 0);
	r = await client.callTool({ name: "clipboard_get", arguments: { task_id: tid, format: "image" } });
	const img = (r.content || []).find((c) => c.type === "image");
	check("clipboard_get of an image is an MCP image block with the same PNG", !r.isError && img &&
		img.mimeType === "image/png" && Buffer.compare(Buffer.from(img.data, "base64"), png) === 0, text(r));
	check("and no base64 in its structuredContent or text", !("image_b64" in (r.structuredContent || {})) &&
		!text(r).includes(png.toString("base64").slice(0, 40)));

	r = await client.callTool({ name: "file_upload", arguments: { task_id: tid, path: "notes/today.txt", content: words } });
	const abs = r.structuredContent && r.structuredContent.absolute_path;
	check("file_upload text into a subfolder", !r.isError && r.structuredContent.created === true &&
		abs === path.join(data, "files", tid, "notes/today.txt"), text(r));
	check("the file is on disk with the text", fs.readFileSync(path.join(data, "files", tid, "notes/today.txt"), "utf8") === words);
	const bytes = Buffer.from([0, 1, 2, 255, 254, 0x89, 0x50, 10, 13, 0]);
	r = await client.callTool({ name: "file_upload", arguments: { task_id: tid, path: "bin.dat", content_base64: bytes.toString("base64") } });
	check("file_upload binary", !r.isError && r.structuredContent.bytes === bytes.length, text(r));
	r = await client.callTool({ name: "file_list", arguments: { task_id: tid } });
	const paths = (r.structuredContent.files || []).map((f) => `${f.path}:${f.type}:${f.bytes}`);
	check("file_list shows the folder, the subfolder and both files", !r.isError &&
		r.structuredContent.folder === path.join(data, "files", tid) &&
		paths.includes("notes:folder:0") && paths.includes(`notes/today.txt:file:${Buffer.byteLength(words)}`) &&
		paths.includes("bin.dat:file:10"), JSON.stringify(paths));
	r = await client.callTool({ name: "file_download", arguments: { task_id: tid, path: "notes/today.txt" } });
	check("file_download text", !r.isError && r.structuredContent.encoding === "utf-8" &&
		r.structuredContent.content === words, text(r));
	r = await client.callTool({ name: "file_download", arguments: { task_id: tid, path: "bin.dat" } });
	const blob = (r.content || []).find((c) => c.type === "resource");
	check("file_download binary: base64 in structuredContent and an embedded resource, not in text",
		!r.isError && r.structuredContent.encoding === "base64" &&
		Buffer.compare(Buffer.from(r.structuredContent.content_base64, "base64"), bytes) === 0 &&
		blob && Buffer.compare(Buffer.from(blob.resource.blob, "base64"), bytes) === 0 &&
		!text(r).includes(bytes.toString("base64")), text(r));
	r = await client.callTool({ name: "file_download", arguments: { task_id: tid, path: "../../data.db" } });
	check("file_download of ../ is a tool error saying why", r.isError === true && /'\.\.'/.test(text(r)), text(r));
	r = await client.callTool({ name: "file_upload", arguments: { task_id: tid, path: "x.txt" } });
	check("file_upload without content is a tool error", r.isError === true && /content/.test(text(r)), text(r));
	await client.close();
}

const watchdog = setTimeout(() => {
	console.log("FAIL mcp: timed out after 60 s");
	console.log(`${passed} passed, ${failed + 1} failed`);
	process.exit(1);
}, 60000);
main().catch((e) => { failed++; console.log(`FAIL mcp: ${e && e.stack ? e.stack : e}`); })
	.finally(() => {
		clearTimeout(watchdog);
		console.log(`${passed} passed, ${failed} failed`);
		process.exit(failed ? 1 : 0);
	});
