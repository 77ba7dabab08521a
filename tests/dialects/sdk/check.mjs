// check.mjs - detmd's computer dialect answers against the official SDKs.
//
//   node check.mjs ANSWERS_DIR GEN_DIR
//
// ANSWERS_DIR holds what tests/dialects/run.sh saved: NAME.request.json (the
// provider calls sent to /api/computer/{dialect}) and NAME.json (detmd's
// answer), NAME starting with the dialect. For each pair:
//   1. types: a TypeScript file builds the next request with the SDK's own
//      request types, the calls and detmd's answer as object literals
//      (Anthropic MessageCreateParams with the toolset or, for the single
//      tool, the beta params; OpenAI ResponseCreateParams; Gemini
//      GenerateContentParameters), and `tsc --noEmit` must accept it (object
//      literals get excess-property checks: a field the SDK does not know
//      fails). A control file with a made-up field must be refused.
//   2. wire: the request goes through the SDK's client to a local catcher
//      (no network); what the client sends must carry detmd's answer intact.
//   3. Anthropic: the SDK's own toolset driver (BetaAbstractComputerToolset
//      20260801.toolResult), given detmd's line as each member's result,
//      must answer the same tool_result blocks detmd answered.
// Prints "ok ..." / "FAIL ..." lines; exits non-zero on any failure.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import Anthropic from '@anthropic-ai/sdk';
import { BetaAbstractComputerToolset20260801 } from '@anthropic-ai/sdk/helpers/beta/toolsets';
import { GoogleGenAI, Environment } from '@google/genai';
import OpenAI from 'openai';

const here = path.dirname(fileURLToPath(import.meta.url));
const [answersDir, genDir] = process.argv.slice(2);
let failed = 0;
const ok = (name) => console.log(`ok   sdk: ${name}`);
const fail = (name, why) => {
  failed++;
  console.log(`FAIL sdk: ${name}${why ? `: ${why}` : ''}`);
};

const pairs = fs
  .readdirSync(answersDir)
  .filter((f) => f.endsWith('.request.json'))
  .map((f) => f.replace(/\.request\.json$/, ''))
  .sort()
  .map((name) => ({
    name,
    request: JSON.parse(fs.readFileSync(path.join(answersDir, `${name}.request.json`), 'utf8')),
    answer: JSON.parse(fs.readFileSync(path.join(answersDir, `${name}.json`), 'utf8')),
  }));

// Screenshots are long: the type checks see a short stand-in (a PNG header).
const PNG = 'iVBORw0KGgo=';
function shorten(v) {
  if (Array.isArray(v)) return v.map(shorten);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'data' && typeof x === 'string' && x.length > 64) o[k] = PNG;
      else if (k === 'image_url' && typeof x === 'string' && x.startsWith('data:')) o[k] = `data:image/png;base64,${PNG}`;
      else o[k] = shorten(x);
    }
    return o;
  }
  return v;
}
const lit = (v) => JSON.stringify(shorten(v), null, 1);
const asArray = (v) => (Array.isArray(v) ? v : [v]);

// The model's turn (the calls as the provider sent them) and the request
// that answers it, per dialect.
function anthropicParams(p) {
  const blocks = asArray(p.request);
  const single = blocks.some((b) => b.type === 'tool_use' && b.name === 'computer');
  return {
    single,
    params: {
      model: 'claude-opus-5-5',
      max_tokens: 1024,
      tools: single
        ? [{ type: 'computer_20251124', name: 'computer', display_width_px: 1429, display_height_px: 804 }]
        : [{ type: 'computer_toolset_20260801' }],
      messages: [
        { role: 'user', content: 'Drive the application.' },
        { role: 'assistant', content: blocks },
        { role: 'user', content: p.answer },
      ],
    },
  };
}
// A refusal's calls hold what no provider sends (that is what is refused):
// its answer alone is checked, as the next request of a conversation kept
// by the provider (previous_response_id).
const refused = (p) => p.name.endsWith('-refusal');
function openaiParams(p) {
  // acknowledged_safety_checks is the caller's addition, not the model's
  const items = refused(p) ? [] : asArray(structuredClone(p.request)).map((it) => {
    delete it.acknowledged_safety_checks;
    return it;
  });
  const answers = asArray(p.answer);
  return {
    model: 'gpt-5.5',
    tools: [{ type: 'computer' }],
    ...(refused(p) ? { previous_response_id: 'resp_0' } : {}),
    input: [...(refused(p) ? [] : [{ role: 'user', content: 'Drive the application.' }]), ...items, ...answers],
  };
}
function geminiModelContent(req) {
  if (req.role && req.parts) return req;
  const parts = asArray(req).map((x) => (x.functionCall ? x : { functionCall: x }));
  // the caller's own acknowledgement travels beside the call, not to Gemini
  for (const pt of parts) delete pt.functionCall.safety_acknowledgement;
  return { role: 'model', parts };
}
function geminiParams(p) {
  return {
    model: 'gemini-3-flash-preview',
    contents: [
      { role: 'user', parts: [{ text: 'Drive the application.' }] },
      geminiModelContent(structuredClone(p.request)),
      p.answer,
    ],
    config: { tools: [{ computerUse: { environment: 'ENVIRONMENT_BROWSER' } }] },
  };
}

// ---- 1. types ----
fs.rmSync(genDir, { recursive: true, force: true });
fs.mkdirSync(genDir, { recursive: true });
fs.symlinkSync(path.join(here, 'node_modules'), path.join(genDir, 'node_modules'));
fs.writeFileSync(
  path.join(genDir, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      skipLibCheck: true,
      types: [],
    },
    include: ['*.ts'],
  }),
);
const header =
  "import type Anthropic from '@anthropic-ai/sdk';\n" +
  "import type OpenAI from 'openai';\n" +
  "import { Environment, type GenerateContentParameters } from '@google/genai';\n" +
  'void Environment;\n';
const files = [];
for (const p of pairs) {
  let body;
  if (p.name.startsWith('anthropic')) {
    const { single, params } = anthropicParams(p);
    const type = single
      ? 'Anthropic.Beta.Messages.MessageCreateParamsNonStreaming'
      : 'Anthropic.Messages.MessageCreateParamsNonStreaming';
    const results = single ? 'Anthropic.Beta.Messages.BetaToolResultBlockParam[]' : 'Anthropic.Messages.ToolResultBlockParam[]';
    body = `export const answer: ${results} = ${lit(p.answer)};\nexport const params: ${type} = ${lit(params)};\n`;
  } else if (p.name.startsWith('openai')) {
    const one = Array.isArray(p.answer) ? 'OpenAI.Responses.ResponseInputItem[]' : 'OpenAI.Responses.ResponseInputItem';
    body =
      `export const answer: ${one} = ${lit(p.answer)};\n` +
      `export const params: OpenAI.Responses.ResponseCreateParamsNonStreaming = ${lit(openaiParams(p))};\n`;
  } else if (p.name.startsWith('gemini')) {
    const params = lit(geminiParams(p)).replace('"ENVIRONMENT_BROWSER"', 'Environment.ENVIRONMENT_BROWSER');
    body = `export const params: GenerateContentParameters = ${params};\n`;
  } else continue;
  const file = `${p.name.replace(/[^a-z0-9]+/gi, '_')}.ts`;
  fs.writeFileSync(path.join(genDir, file), header + body);
  files.push({ file, name: p.name });
}
// The control: a field no SDK type has must be refused.
fs.writeFileSync(
  path.join(genDir, 'control_bad.ts'),
  header +
    "export const bad: Anthropic.Messages.ToolResultBlockParam = { type: 'tool_result', tool_use_id: 'x', content: [], detm_verdict: 'confirmed' };\n" +
    "export const bad2: OpenAI.Responses.ResponseInputItem = { type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', image_url: 'data:' }, detm: 1 };\n",
);
let tscOut = '';
try {
  execFileSync(path.join(here, 'node_modules', '.bin', 'tsc'), ['-p', genDir, '--pretty', 'false'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
} catch (e) {
  tscOut = `${e.stdout || ''}${e.stderr || ''}`;
}
const errorsOf = (file) => tscOut.split('\n').filter((l) => l.includes(file));
for (const { file, name } of files) {
  const errs = errorsOf(file);
  if (errs.length === 0) ok(`tsc accepts the ${name} answer in the SDK's next request`);
  else fail(`tsc accepts the ${name} answer in the SDK's next request`, errs.slice(0, 3).join(' | '));
}
{
  const errs = errorsOf('control_bad.ts');
  if (errs.length >= 2) ok('tsc refuses a made-up field (the check has teeth)');
  else fail('tsc refuses a made-up field (the check has teeth)', tscOut.slice(0, 300) || 'no error');
}
const other = tscOut.split('\n').filter((l) => l.trim() && !files.some((f) => l.includes(f.file)) && !l.includes('control_bad.ts'));
if (other.length) fail('tsc: errors outside the generated files', other.slice(0, 3).join(' | '));

// ---- 2. wire: through the SDK clients to a local catcher ----
const bodies = [];
const server = http.createServer((req, res) => {
  let data = '';
  req.on('data', (c) => (data += c));
  req.on('end', () => {
    bodies.push({ url: req.url, body: JSON.parse(data || '{}') });
    res.setHeader('content-type', 'application/json');
    if (req.url.includes('/messages'))
      res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }));
    else if (req.url.includes('/responses'))
      res.end(JSON.stringify({ id: 'resp_1', object: 'response', created_at: 0, status: 'completed', model: 'm', output: [], parallel_tool_calls: true, tool_choice: 'auto', tools: [] }));
    else res.end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'done' }] } }] }));
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const anthropic = new Anthropic({ apiKey: 'test', baseURL: base, maxRetries: 0 });
const openai = new OpenAI({ apiKey: 'test', baseURL: `${base}/v1`, maxRetries: 0 });
const genai = new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: base } });
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
for (const p of pairs) {
  try {
    bodies.length = 0;
    let sent;
    if (p.name.startsWith('anthropic')) {
      const { single, params } = anthropicParams(p);
      if (single) await anthropic.beta.messages.create(params);
      else await anthropic.messages.create(params);
      sent = bodies[0].body.messages[2].content;
      if (!same(sent, p.answer)) throw new Error('the tool_result blocks changed on the way');
    } else if (p.name.startsWith('openai')) {
      const params = openaiParams(p);
      await openai.responses.create(params);
      sent = bodies[0].body.input.slice(-asArray(p.answer).length);
      if (!same(sent, asArray(p.answer))) throw new Error('the computer_call_output changed on the way');
    } else if (p.name.startsWith('gemini')) {
      const params = geminiParams(p);
      params.config.tools[0].computerUse.environment = Environment.ENVIRONMENT_BROWSER;
      await genai.models.generateContent(params);
      sent = bodies[0].body.contents[2];
      const fr = (c) => c.parts.map((x) => x.functionResponse);
      const want = fr(p.answer), got = fr(sent);
      if (got.length !== want.length) throw new Error(`${got.length} function responses sent, ${want.length} answered`);
      for (let i = 0; i < want.length; i++) {
        if (!got[i] || got[i].name !== want[i].name || !same(got[i].response, want[i].response))
          throw new Error(`functionResponse ${i} changed: ${JSON.stringify(got[i]).slice(0, 200)}`);
        const wi = want[i].parts?.[0]?.inlineData?.data, gi = got[i].parts?.[0]?.inlineData?.data;
        if (wi !== gi) throw new Error(`functionResponse ${i}: the screenshot part was not sent`);
      }
    } else continue;
    ok(`the ${p.name} answer goes out through the SDK client intact`);
  } catch (e) {
    fail(`the ${p.name} answer goes out through the SDK client intact`, String(e.message || e).slice(0, 300));
  }
}
server.close();

// ---- 3. the SDK's own toolset driver answers the same blocks ----
// Each member returns detmd's own line (the content's second text block),
// so the SDK renders its acknowledgment and that line; screenshot and zoom
// return detmd's image (the SDK renders the image alone: detmd adds a line
// stating the scale, so only the image is compared).
class Replay extends BetaAbstractComputerToolset20260801 {
  constructor() {
    super({ confirm: () => true });
    this.next = null;
  }
  line() {
    return this.next.content[1]?.text;
  }
  image() {
    return { data: this.next.content[0].source.data, mediaType: this.next.content[0].source.media_type };
  }
  key() { return this.line(); }
  hold_key() { return this.line(); }
  type_() { return this.line(); }
  mouse_move() { return this.line(); }
  left_mouse_down() { return this.line(); }
  left_mouse_up() { return this.line(); }
  left_click() { return this.line(); }
  left_click_drag() { return this.line(); }
  right_click() { return this.line(); }
  middle_click() { return this.line(); }
  double_click() { return this.line(); }
  triple_click() { return this.line(); }
  scroll() { return this.line(); }
  wait() { return this.line(); }
  cursor_position() {
    const m = /X=(-?\d+),Y=(-?\d+)/.exec(this.next.content[0].text);
    return { x: Number(m[1]), y: Number(m[2]) };
  }
  screenshot() { return this.image(); }
  zoom() { return this.image(); }
}
const driver = new Replay();
let compared = 0;
for (const p of pairs.filter((x) => x.name.startsWith('anthropic'))) {
  const blocks = asArray(p.request).filter((b) => b.type === 'tool_use' && b.toolset_name === 'computer');
  for (const b of blocks) {
    const mine = asArray(p.answer).find((r) => r.tool_use_id === b.id);
    if (!mine || mine.is_error) continue;   // errors: detmd's own words
    driver.next = mine;
    const theirs = await driver.toolResult(b);
    const look = b.name === 'screenshot' || b.name === 'zoom';
    const mineCmp = look ? { ...mine, content: mine.content.slice(0, 1) } : mine;
    if (same(theirs, mineCmp)) compared++;
    else fail(`the SDK's driver answers ${p.name} ${b.id} (${b.name}) as detmd did`, `SDK ${JSON.stringify(shorten(theirs)).slice(0, 240)} detm ${JSON.stringify(shorten(mineCmp)).slice(0, 240)}`);
  }
}
if (compared > 0) ok(`the SDK's toolset driver answers ${compared} member calls exactly as detmd did`);
else fail("the SDK's toolset driver comparison", 'nothing compared');
await driver.close();
process.exit(failed ? 1 : 0);
