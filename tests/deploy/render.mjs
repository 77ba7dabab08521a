// render.mjs - renders deploy/chart/detm the way `helm template` would,
// without helm (not packaged in Debian 12). It implements only the part of
// Helm's template language the chart uses, and refuses anything else, so
// the chart cannot drift into constructs this renderer would get wrong:
//
//   {{ pipeline }}  {{- ... -}} (whitespace trimming)  {{/* comment */}}
//   {{ if P }} / {{ else }} / {{ end }}   {{ define "name" }} ... {{ end }}
//   operands: .  .Values.a.b  .Release.Name|Namespace|Service
//             .Chart.Name|Version|AppVersion  "strings"  numbers  true false
//   functions: include quote toYaml nindent indent required not eq ne
//
// Values: values.yaml, then each -f file merged over it (maps merged key
// by key, anything else replaced), as Helm does. Output: every template
// (not _*.tpl) rendered, split into YAML documents, empty ones dropped.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

export class TemplateError extends Error {}

function lex(src, file) {
	const out = [];
	let i = 0;
	while (i < src.length) {
		const open = src.indexOf("{{", i);
		if (open < 0) { out.push({ t: "text", s: src.slice(i) }); break; }
		out.push({ t: "text", s: src.slice(i, open) });
		const close = src.indexOf("}}", open);
		if (close < 0) throw new TemplateError(`${file}: unclosed {{`);
		let body = src.slice(open + 2, close);
		const ltrim = /^-\s/.test(body), rtrim = /\s-$/.test(body);
		if (ltrim) body = body.slice(1);
		if (rtrim) body = body.slice(0, -1);
		out.push({ t: "act", s: body.trim(), ltrim, rtrim });
		i = close + 2;
	}
	for (let k = 0; k < out.length; k++) {
		if (out[k].t !== "act") continue;
		if (out[k].ltrim && k > 0) out[k - 1].s = out[k - 1].s.replace(/\s+$/, "");
		if (out[k].rtrim && k + 1 < out.length) out[k + 1].s = out[k + 1].s.replace(/^\s+/, "");
	}
	return out.filter((x) => x.t === "act" ? !x.s.startsWith("/*") : true);
}

// Parses tokens into nodes; defines go into defs.
function parse(toks, file, defs) {
	let k = 0;
	function block(stopAt) {
		const nodes = [];
		while (k < toks.length) {
			const x = toks[k++];
			if (x.t === "text") { if (x.s) nodes.push({ t: "text", s: x.s }); continue; }
			const m = /^(\w+)\b\s*(.*)$/s.exec(x.s);
			const kw = m ? m[1] : "";
			if (kw === "end" || kw === "else") {
				if (!stopAt) throw new TemplateError(`${file}: unexpected {{ ${kw} }}`);
				return { nodes, stop: kw };
			}
			if (kw === "if") {
				const then = block(true);
				let els = [];
				if (then.stop === "else") {
					const e = block(true);
					if (e.stop !== "end") throw new TemplateError(`${file}: else without end`);
					els = e.nodes;
				}
				nodes.push({ t: "if", cond: m[2], then: then.nodes, els });
			} else if (kw === "define") {
				const name = JSON.parse(m[2]);
				const b = block(true);
				if (b.stop !== "end") throw new TemplateError(`${file}: define without end`);
				defs[name] = b.nodes;
			} else if (["range", "with", "template", "block", "tpl"].includes(kw)) {
				throw new TemplateError(`${file}: {{ ${kw} }} is outside the subset render.mjs supports`);
			} else {
				nodes.push({ t: "out", pipe: x.s });
			}
		}
		if (stopAt) throw new TemplateError(`${file}: missing {{ end }}`);
		return { nodes, stop: null };
	}
	return block(false).nodes;
}

function words(s, file) {
	const out = [];
	const re = /\s*("(?:[^"\\]|\\.)*"|[^\s"]+)\s*/y;
	let m;
	while (re.lastIndex < s.length && (m = re.exec(s)) !== null) out.push(m[1]);
	if (m === null || re.lastIndex < s.length) throw new TemplateError(`${file}: cannot read "${s}"`);
	return out;
}

// A pipeline's commands: split on | outside string literals.
function commands(s) {
	const out = [];
	let cur = "", q = false;
	for (let i = 0; i < s.length; i++) {
		const ch = s[i];
		if (q && ch === "\\") { cur += ch + s[++i]; continue; }
		if (ch === '"') q = !q;
		if (ch === "|" && !q) { out.push(cur); cur = ""; continue; }
		cur += ch;
	}
	out.push(cur);
	return out;
}

function truthy(v) {
	if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
	if (Array.isArray(v)) return v.length > 0;
	if (typeof v === "object") return Object.keys(v).length > 0;
	return true;
}

function show(v) {
	if (v === null || v === undefined) return "";
	if (typeof v === "object") return JSON.stringify(v);
	return String(v);
}

function toYaml(v) {
	if (v === null || v === undefined) return "null";
	return YAML.stringify(v, { lineWidth: 0 }).replace(/\n$/, "");
}

export function renderChart(chartDir, valueFiles = [], release = { Name: "detm", Namespace: "default" }) {
	const chart = YAML.parse(fs.readFileSync(path.join(chartDir, "Chart.yaml"), "utf8"));
	let values = YAML.parse(fs.readFileSync(path.join(chartDir, "values.yaml"), "utf8")) || {};
	for (const f of valueFiles) values = merge(values, YAML.parse(fs.readFileSync(f, "utf8")) || {});
	const root = {
		Values: values,
		Release: { Service: "Helm", ...release },
		Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
	};
	const tdir = path.join(chartDir, "templates");
	const files = fs.readdirSync(tdir).sort();
	const defs = {}, bodies = {};
	for (const f of files) bodies[f] = parse(lex(fs.readFileSync(path.join(tdir, f), "utf8"), f), f, defs);

	function operand(w, dot, file) {
		if (w.startsWith('"')) return JSON.parse(w);
		if (/^-?\d+$/.test(w)) return Number(w);
		if (w === "true" || w === "false") return w === "true";
		if (w === ".") return dot;
		if (w.startsWith(".")) {
			let v = dot;
			for (const p of w.slice(1).split(".")) v = v == null ? undefined : v[p];
			return v;
		}
		throw new TemplateError(`${file}: unknown operand ${w}`);
	}
	const fns = {
		include: (name, ctx) => {
			if (!(name in defs)) throw new TemplateError(`no template "${name}"`);
			return run(defs[name], ctx, name);
		},
		quote: (v) => JSON.stringify(show(v)),
		toYaml,
		nindent: (n, s) => "\n" + fns.indent(n, s),
		indent: (n, s) => show(s).split("\n").map((l) => " ".repeat(n) + l).join("\n"),
		required: (msg, v) => { if (!truthy(v)) throw new TemplateError(msg); return v; },
		not: (v) => !truthy(v),
		eq: (a, b) => a === b,
		ne: (a, b) => a !== b,
	};
	function command(ws, dot, file, piped) {
		const args = [];
		if (ws.length === 0) throw new TemplateError(`${file}: empty command`);
		if (!(ws[0] in fns)) {
			if (ws.length !== 1 || piped.length) throw new TemplateError(`${file}: ${ws[0]} is not a function of the subset`);
			return operand(ws[0], dot, file);
		}
		for (const w of ws.slice(1)) args.push(operand(w, dot, file));
		return fns[ws[0]](...args, ...piped);
	}
	function pipeline(s, dot, file) {
		let v, first = true;
		for (const part of commands(s)) {
			v = command(words(part.trim(), file), dot, file, first ? [] : [v]);
			first = false;
		}
		return v;
	}
	function run(nodes, dot, file) {
		let out = "";
		for (const n of nodes) {
			if (n.t === "text") out += n.s;
			else if (n.t === "out") out += show(pipeline(n.pipe, dot, file));
			else if (n.t === "if") out += run(truthy(pipeline(n.cond, dot, file)) ? n.then : n.els, dot, file);
		}
		return out;
	}

	const docs = [];
	for (const f of files) {
		if (f.startsWith("_")) continue;
		const text = run(bodies[f], root, f);
		for (const d of YAML.parseAllDocuments(text)) {
			if (d.errors.length) throw new TemplateError(`${f}: rendered YAML: ${d.errors[0].message}\n${text}`);
			const obj = d.toJS();
			if (obj !== null && obj !== undefined) docs.push({ file: f, obj, text });
		}
	}
	return docs;
}

function merge(a, b) {
	if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
		const out = { ...a };
		for (const [k, v] of Object.entries(b)) out[k] = k in a ? merge(a[k], v) : v;
		return out;
	}
	return b;
}

// node render.mjs CHART [VALUES...]: prints the manifests (a helm template stand-in).
if (import.meta.url === `file://${process.argv[1]}`) {
	const [chartDir, ...vals] = process.argv.slice(2);
	for (const d of renderChart(chartDir, vals)) process.stdout.write(`---\n# Source: ${d.file}\n${YAML.stringify(d.obj)}`);
}
