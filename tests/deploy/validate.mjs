// validate.mjs - the deploy suite's checks: renders deploy/chart/detm for
// every values file (render.mjs, no helm, no cluster) and validates each
// object:
//   - Kubernetes kinds against the published schemas kubernetes-models
//     bundles (types, required fields, formats, enums);
//   - SandboxTemplate and SandboxWarmPool against agent-sandbox's v1beta1
//     openAPIV3Schema (deploy/crds/, ajv), made strict: an unknown field
//     is an error (kubernetes-models' schemas do not say additionalProperties,
//     so the pod spec of both shapes is also checked strictly against the
//     PodSpec schema the SandboxTemplate CRD embeds);
//   - what the chart promises: probes on /livez and /readyz (routes detmd
//     has, read from daemon/http/routes.c), preStop POSTs /api/drain with
//     a wait shorter than the grace period, the token from a Secret,
//     scrape annotations, ingress from the gateway only, the StatefulSet's
//     headless Service, the warm pool naming the template;
//   - that the checks bite: broken objects are rejected, and the renderer
//     refuses template constructs outside its subset.
// Prints "ok"/"FAIL" lines and "N passed, N failed".
import fs from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import YAML from "yaml";
import { renderChart, TemplateError } from "./render.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const CHART = path.join(ROOT, "deploy/chart/detm");
let pass = 0, fail = 0;
const ok = (name) => { pass++; console.log(`ok   ${name}`); };
const bad = (name, why) => { fail++; console.log(`FAIL ${name}${why ? ": " + why : ""}`); };
const check = (name, cond, why) => (cond ? ok(name) : bad(name, why));

// ---- schemas ----
const K8S = {
	"v1/Secret": "kubernetes-models/v1/Secret",
	"v1/Service": "kubernetes-models/v1/Service",
	"apps/v1/StatefulSet": "kubernetes-models/apps/v1/StatefulSet",
	"networking.k8s.io/v1/NetworkPolicy": "kubernetes-models/networking.k8s.io/v1/NetworkPolicy",
};
const k8sClass = {};
for (const [k, mod] of Object.entries(K8S)) k8sClass[k] = Object.values(await import(mod)).find((v) => typeof v === "function");
const { ObjectMeta } = await import("@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta");

// OpenAPI v3 as Kubernetes reads it: every object that lists its
// properties takes no other (unless it says it preserves unknown fields).
function strict(s) {
	if (Array.isArray(s)) return s.map(strict);
	if (!s || typeof s !== "object") return s;
	const out = {};
	for (const [k, v] of Object.entries(s)) out[k] = strict(v);
	if (out.properties && !("additionalProperties" in out) && !out["x-kubernetes-preserve-unknown-fields"])
		out.additionalProperties = false;
	return out;
}
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat("int64", { type: "number", validate: (n) => Number.isInteger(n) });
for (const f of ["date-time", "byte", "quantity", "duration", "uri", "email"]) ajv.addFormat(f, true);
function crdSchema(file) {
	const crd = YAML.parse(fs.readFileSync(path.join(ROOT, "deploy/crds", file), "utf8"));
	const v = crd.spec.versions.find((x) => x.name === "v1beta1" && x.served && x.storage);
	return { group: crd.spec.group, kind: crd.spec.names.kind, schema: strict(v.schema.openAPIV3Schema) };
}
const CRDS = {};
for (const f of ["extensions.agents.x-k8s.io_sandboxtemplates.yaml", "extensions.agents.x-k8s.io_sandboxwarmpools.yaml"]) {
	const c = crdSchema(f);
	CRDS[`${c.group}/v1beta1/${c.kind}`] = ajv.compile(c.schema);
	if (c.kind === "SandboxTemplate") CRDS.podSpec = ajv.compile(c.schema.properties.spec.properties.podTemplate.properties.spec);
}
const errs = (v) => (v.errors || []).slice(0, 3).map((e) => `${e.instancePath} ${e.message}${e.params?.additionalProperty ? " '" + e.params.additionalProperty + "'" : ""}`).join("; ");

// Returns "" when valid, else why.
function validate(obj) {
	const key = `${obj.apiVersion}/${obj.kind}`;
	try {
		if (k8sClass[key]) {
			new k8sClass[key](obj).validate();
			if (obj.kind === "StatefulSet" && !CRDS.podSpec(obj.spec.template.spec)) return "pod spec: " + errs(CRDS.podSpec);
			return "";
		}
		if (CRDS[key]) {
			new ObjectMeta(obj.metadata).validate();
			if (!obj.metadata?.name) return "metadata.name missing";
			return CRDS[key](obj) ? "" : errs(CRDS[key]);
		}
	} catch (e) {
		return String(e.message).slice(0, 400);
	}
	return `no schema for ${key}`;
}

// ---- the routes detmd serves without the token / at all ----
const routes = fs.readFileSync(path.join(ROOT, "daemon/http/routes.c"), "utf8");
const hasRoute = (m, p) => new RegExp(`\\{ "${m}",\\s+"${p.replace(/[/?]/g, "\\$&")}",`).test(routes);
const openRoute = (p) => new RegExp(`"GET",\\s+"${p}",[^\\n]*\\n\\s*ROUTE_OPEN`).test(routes);

function podOf(o) {
	return o.kind === "StatefulSet" ? o.spec.template : o.kind === "SandboxTemplate" ? o.spec.podTemplate : null;
}

function shapeChecks(label, docs, values) {
	const kinds = docs.map((d) => d.obj.kind).sort();
	const want = values.shape === "statefulset" ? ["NetworkPolicy", "Service", "StatefulSet"] : ["SandboxTemplate", "SandboxWarmPool"];
	if (values.shape === "statefulset" && values.fleet?.peers) want.push("Service");      // <release>-detm-peers
	if (!values.token.existingSecret) want.push("Secret");
	check(`${label}: objects are ${want.sort().join(", ")}`, JSON.stringify(kinds) === JSON.stringify(want.sort()), kinds.join(", "));
	for (const d of docs) {
		const why = validate(d.obj);
		check(`${label}: ${d.obj.kind} ${d.obj.metadata?.name} is valid (${d.obj.apiVersion})`, why === "", why);
	}
	const holder = docs.find((d) => podOf(d.obj))?.obj;
	if (!holder) return bad(`${label}: a pod template`);
	const pod = podOf(holder), c = pod.spec.containers[0];
	const probe = (p) => p?.httpGet?.path;
	check(`${label}: liveness and startup probe GET /livez, readiness GET /readyz, open routes of detmd`,
		probe(c.livenessProbe) === "/livez" && probe(c.startupProbe) === "/livez" && probe(c.readinessProbe) === "/readyz" &&
		openRoute("/livez") && openRoute("/readyz"));
	const stop = (c.lifecycle?.preStop?.exec?.command || []).join(" ");
	const wait = Number((/api\/drain\?wait=(\d+)/.exec(stop) || [])[1]);
	check(`${label}: preStop POSTs /api/drain?wait=${wait} with the token, within the grace period (${pod.spec.terminationGracePeriodSeconds} s)`,
		hasRoute("POST", "/api/drain") && /-X POST/.test(stop) && /Bearer \$ACU_TOKEN/.test(stop) &&
		wait > 0 && wait <= 600 && pod.spec.terminationGracePeriodSeconds > wait, stop);
	const tok = c.env.find((e) => e.name === "ACU_TOKEN");
	const secretName = values.token.existingSecret || docs.find((d) => d.obj.kind === "Secret")?.obj.metadata.name;
	check(`${label}: ACU_TOKEN comes from the Secret ${secretName}`, tok?.valueFrom?.secretKeyRef?.name === secretName && !("value" in tok));
	const ann = pod.metadata.annotations || {};
	check(`${label}: Prometheus scrape annotations name /metrics on the port`,
		ann["prometheus.io/scrape"] === "true" && ann["prometheus.io/path"] === "/metrics" &&
		ann["prometheus.io/port"] === String(c.ports[0].containerPort) && hasRoute("GET", "/metrics"));
	check(`${label}: runs as non-root uid 10001 without privilege escalation`,
		pod.spec.securityContext.runAsNonRoot === true && pod.spec.securityContext.runAsUser === 10001 &&
		c.securityContext.allowPrivilegeEscalation === false);
	check(`${label}: the data dir /data is a persistent volume claim`,
		c.volumeMounts.some((m) => m.name === "data" && m.mountPath === "/data") &&
		(holder.spec.volumeClaimTemplates || []).some((v) => v.metadata.name === "data"));
	const ingress = values.shape === "statefulset"
		? docs.find((d) => d.obj.kind === "NetworkPolicy")?.obj.spec.ingress
		: holder.spec.networkPolicyManagement === "Managed" ? holder.spec.networkPolicy.ingress : null;
	// with the fleet's peers (statefulset), a second rule: detm's own pods
	const peers = values.shape === "statefulset" && values.fleet?.peers;
	const from = (ingress || []).flatMap((r) => r.from || []);
	check(`${label}: ingress admits the gateway's pods only${peers ? " and detm's own (peers)" : ""}, on detmd's port`,
		ingress?.length === (peers ? 2 : 1) && from.length === (peers ? 2 : 1) &&
		JSON.stringify(from[0].podSelector?.matchLabels) === JSON.stringify(values.gateway.podLabels) &&
		ingress.every((r) => r.ports[0].port === values.port) &&
		(!peers || JSON.stringify(from[1].podSelector?.matchLabels) === JSON.stringify(holder.spec.selector.matchLabels)));
	if (values.shape === "statefulset") {
		const svc = docs.find((d) => d.obj.kind === "Service" && d.obj.metadata.name === holder.spec.serviceName)?.obj ||
			docs.find((d) => d.obj.kind === "Service").obj, ss = holder;
		if (peers) {
			const ps = docs.find((d) => d.obj.kind === "Service" && d.obj.metadata.name === `${ss.metadata.name}-peers`)?.obj;
			const env = Object.fromEntries(ss.spec.template.spec.containers[0].env.map((e) => [e.name, e.value]));
			check(`${label}: the pods' ACU_PEERS is the headless peers Service (not-ready pods too), every address`,
				ps?.spec.clusterIP === "None" && ps.spec.publishNotReadyAddresses === true &&
				env.ACU_PEERS === `http://${ps.metadata.name}.${ps.metadata.namespace}.svc:${values.port}` &&
				env.ACU_PEERS_RESOLVE_ALL === "1");
		}
		const sel = ss.spec.selector.matchLabels, labels = ss.spec.template.metadata.labels;
		check(`${label}: a headless Service the StatefulSet names, selecting its pods`,
			svc.spec.clusterIP === "None" && ss.spec.serviceName === svc.metadata.name &&
			Object.entries(sel).every(([k, v]) => labels[k] === v && svc.spec.selector[k] === v));
		check(`${label}: one pod per node (required anti-affinity on kubernetes.io/hostname)`,
			ss.spec.template.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey === "kubernetes.io/hostname");
	} else {
		const pool = docs.find((d) => d.obj.kind === "SandboxWarmPool").obj;
		check(`${label}: the SandboxWarmPool (${pool.spec.replicas} warm) names the SandboxTemplate`,
			pool.spec.sandboxTemplateRef.name === holder.metadata.name && pool.spec.replicas === values.sandbox.warmPoolReplicas);
	}
}

const valueFiles = fs.readdirSync(CHART).filter((f) => /^values-.*\.yaml$/.test(f)).sort();
check("the chart has values files for both shapes", valueFiles.includes("values-statefulset.yaml") && valueFiles.includes("values-sandbox.yaml"), valueFiles.join(" "));
const base = YAML.parse(fs.readFileSync(path.join(CHART, "values.yaml"), "utf8"));
for (const vf of valueFiles) {
	const over = YAML.parse(fs.readFileSync(path.join(CHART, vf), "utf8"));
	const values = { ...base, ...over, token: { ...base.token, ...over.token }, sandbox: { ...base.sandbox, ...over.sandbox } };
	try {
		shapeChecks(vf, renderChart(CHART, [path.join(CHART, vf)]), values);
	} catch (e) {
		bad(`${vf}: renders`, e.message);
	}
}
// A chart-made Secret (token.value), in another namespace and release.
const tmp = fs.mkdtempSync("/tmp/detm-deploy-");
fs.writeFileSync(`${tmp}/v.yaml`, "token:\n  value: s3cret\n");
try {
	const docs = renderChart(CHART, [`${tmp}/v.yaml`], { Name: "agents", Namespace: "desks" });
	const sec = docs.find((d) => d.obj.kind === "Secret")?.obj;
	check("token.value: the chart makes the Secret (stringData), valid, in the release's namespace",
		sec && sec.stringData.token === "s3cret" && validate(sec) === "" && docs.every((d) => d.obj.metadata.namespace === "desks"));
} catch (e) {
	bad("token.value renders", e.message);
}
// Every optional knob on, both shapes: still valid.
fs.writeFileSync(`${tmp}/all.yaml`, [
	"token: {value: t}", "nodeSelector: {kubernetes.io/arch: amd64}",
	"tolerations: [{key: desktops, operator: Exists, effect: NoSchedule}]",
	"extraEnv: [{name: ACU_RECORD_MAX_MB, value: \"500\"}]", "persistence: {storageClassName: fast, size: 1Gi}",
	"metrics: {scrape: false}", "statefulset: {onePerNode: false}"].join("\n") + "\n");
for (const shape of ["statefulset", "sandbox"]) {
	fs.writeFileSync(`${tmp}/shape.yaml`, `shape: ${shape}\n`);
	try {
		const docs = renderChart(CHART, [`${tmp}/all.yaml`, `${tmp}/shape.yaml`]);
		const why = docs.map((d) => validate(d.obj)).filter((w) => w).join("; ");
		const pod = podOf(docs.find((d) => podOf(d.obj)).obj);
		check(`${shape} with every optional value set (node selector, tolerations, extra env, storage class, no scrape): all valid`,
			why === "" && pod.spec.nodeSelector["kubernetes.io/arch"] === "amd64" && pod.spec.tolerations.length === 1 &&
			pod.spec.containers[0].env.some((e) => e.name === "ACU_RECORD_MAX_MB") && !pod.metadata.annotations?.["prometheus.io/scrape"], why);
	} catch (e) {
		bad(`${shape} with every optional value set renders`, e.message);
	}
}
// Neither a token nor a Secret: refused at render time.
try {
	renderChart(CHART, []);
	bad("no token at all is refused when rendering");
} catch (e) {
	check("no token at all is refused when rendering (required)", e instanceof TemplateError && /token.value or token.existingSecret is required/.test(e.message), e.message);
}

// ---- the checks bite ----
const sts = renderChart(CHART, [path.join(CHART, "values-statefulset.yaml")]).find((d) => d.obj.kind === "StatefulSet").obj;
const sb = renderChart(CHART, [path.join(CHART, "values-sandbox.yaml")]);
const tpl = sb.find((d) => d.obj.kind === "SandboxTemplate").obj, pool = sb.find((d) => d.obj.kind === "SandboxWarmPool").obj;
const broken = [
	["a StatefulSet with replicas \"three\"", () => { const o = structuredClone(sts); o.spec.replicas = "three"; return o; }],
	["a StatefulSet without a selector", () => { const o = structuredClone(sts); delete o.spec.selector; return o; }],
	["a StatefulSet container with a misspelt field (readinesProbe)", () => { const o = structuredClone(sts); o.spec.template.spec.containers[0].readinesProbe = {}; return o; }],
	["a SandboxTemplate with an unknown spec field", () => { const o = structuredClone(tpl); o.spec.warmPool = 3; return o; }],
	["a SandboxTemplate without a podTemplate", () => { const o = structuredClone(tpl); delete o.spec.podTemplate; return o; }],
	["a SandboxTemplate with networkPolicyManagement \"Sometimes\"", () => { const o = structuredClone(tpl); o.spec.networkPolicyManagement = "Sometimes"; return o; }],
	["a SandboxWarmPool with replicas -1", () => { const o = structuredClone(pool); o.spec.replicas = -1; return o; }],
	["a SandboxWarmPool without sandboxTemplateRef", () => { const o = structuredClone(pool); delete o.spec.sandboxTemplateRef; return o; }],
	["a SandboxWarmPool of a kind it does not know (v1alpha2)", () => { const o = structuredClone(pool); o.apiVersion = "extensions.agents.x-k8s.io/v1alpha2"; return o; }],
];
for (const [name, make] of broken) check(`rejected: ${name}`, validate(make()) !== "");
// The renderer refuses what it does not implement, rather than guess.
fs.mkdirSync(`${tmp}/c/templates`, { recursive: true });
fs.copyFileSync(path.join(CHART, "Chart.yaml"), `${tmp}/c/Chart.yaml`);
fs.writeFileSync(`${tmp}/c/values.yaml`, "xs: [1]\n");
fs.writeFileSync(`${tmp}/c/templates/a.yaml`, "{{ range .Values.xs }}x{{ end }}\n");
try { renderChart(`${tmp}/c`); bad("render.mjs refuses {{ range }}"); } catch (e) { check("render.mjs refuses {{ range }} (outside its subset)", e instanceof TemplateError); }
fs.writeFileSync(`${tmp}/c/templates/a.yaml`, "a: {{ .Values.xs | b64enc }}\n");
try { renderChart(`${tmp}/c`); bad("render.mjs refuses unknown functions"); } catch (e) { check("render.mjs refuses a function outside its subset (b64enc)", e instanceof TemplateError); }
fs.rmSync(tmp, { recursive: true, force: true });

console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
