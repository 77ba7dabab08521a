// oracle.mjs - judges detmd's reading of UI-TARS answers against ByteDance's
// own parser, @ui-tars/action-parser (pinned in package-lock.json).
//
//   node oracle.mjs CASES.json SCENE.json RESULTS.jsonl
//
// SCENE: {"coords":"image"|"1000","image":[w,h],"screen":[w,h]}: the
// ACU_UITARS_COORDS detmd ran with, the grounding image it should have sent
// and the screen. RESULTS: one line per case, what POST /api/gui/find
// answered: {"i","code","x","y","iw","ih","msg"}.
//
// The official parser is called the way UI-TARS-desktop calls it: the
// screenshot's size as screenContext, the image-to-screen factor as
// scaleFactor, factor 1000; modelVer 1.5 for "image" (absolute pixels of the
// smart-resized image) and 1.0 for "1000" (0..1000 relative). Its
// start_coords of the first action is the screen point detmd must click,
// within 1 px; a point off the screen must be refused by detmd.
//
// Case kinds: read (the official parser reads it), reject (neither does),
// detm (only detmd reads it; its point must be the official reading of the
// case's "as"), detm-rejects (the official parser reads it, detmd refuses).
// Prints ok/FAIL per case and "N passed, N failed".
import { readFileSync } from 'node:fs';
import { actionParser } from '@ui-tars/action-parser';

const [casesFile, sceneFile, resultsFile] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, 'utf8'));
const scene = JSON.parse(readFileSync(sceneFile, 'utf8'));
const results = new Map(readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean)
  .map((l) => JSON.parse(l)).map((r) => [r.i, r]));
const [iw, ih] = scene.image;
const [sw, sh] = scene.screen;
const scale = sw / iw;
let pass = 0;
let fail = 0;
const ok = (n) => { pass++; console.log(`ok   ${n}`); };
const bad = (n, why) => { fail++; console.log(`FAIL ${n}: ${why}`); };

function official(answer) {
  const quiet = console.error;
  console.error = () => {};   // it logs every answer it cannot parse
  try {
    const { parsed } = actionParser({
      prediction: answer, factor: [1000, 1000], screenContext: { width: iw, height: ih },
      scaleFactor: scale, modelVer: scene.coords === 'image' ? '1.5' : '1.0',
    });
    const c = parsed[0]?.action_inputs?.start_coords;
    return Array.isArray(c) && c.length === 2 && c.every(Number.isFinite) ? c : null;
  } finally {
    console.error = quiet;
  }
}

const onScreen = (p) => p[0] >= 0 && p[1] >= 0 && p[0] < sw && p[1] < sh;
const near = (r, p) => r.code === 200 && Math.abs(r.x - p[0]) <= 1 && Math.abs(r.y - p[1]) <= 1;
const refused = (r) => r.code === 503 && /no coordinates|outside|off the/.test(r.msg ?? '');
const show = (r) => (r.code === 200 ? `detmd (${r.x}, ${r.y})` : `detmd ${r.code} ${r.msg}`);

if (Math.abs(sh / ih - scale) > 0.01) {
  bad('scene', `image ${iw}x${ih} on screen ${sw}x${sh} is not one scale`);
}
cases.forEach((c, i) => {
  const name = `${scene.coords} ${iw}x${ih} #${i} ${c.why}: ${JSON.stringify(c.answer)}`;
  const r = results.get(i);
  if (!r) return bad(name, 'detmd gave no result');
  if (r.code === 200 && (r.iw !== iw || r.ih !== ih)) {
    return bad(name, `detmd sent a ${r.iw}x${r.ih} image, not ${iw}x${ih}`);
  }
  const off = official(c.answer);
  const fmt = off && `official (${off[0]}, ${off[1]})`;
  switch (c.kind) {
  case 'read':
    if (!off) return bad(name, 'the official parser does not read it (the table is wrong)');
    if (onScreen(off)) return near(r, off) ? ok(name) : bad(name, `${fmt}, ${show(r)}`);
    return refused(r) ? ok(`${name} (off screen, refused)`) : bad(name, `${fmt} is off screen, ${show(r)}`);
  case 'reject':
    if (off) return bad(name, `${fmt}: the table says it reads nothing`);
    return refused(r) ? ok(name) : bad(name, `the official parser reads nothing, ${show(r)}`);
  case 'detm': {
    const as = official(c.as);
    if (off) return bad(name, `${fmt}: the table says only detmd reads it`);
    if (!as || !onScreen(as)) return bad(name, `the official parser does not read ${c.as} on screen`);
    return near(r, as) ? ok(`${name} (as ${c.as})`) : bad(name, `official ${c.as} (${as}), ${show(r)}`);
  }
  case 'detm-rejects':
    if (!off) return bad(name, 'the official parser reads nothing (the table is wrong)');
    return refused(r) ? ok(name) : bad(name, `detmd should refuse it, ${show(r)}`);
  default:
    return bad(name, `unknown kind ${c.kind}`);
  }
});
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail === 0 ? 0 : 1);
