// lib.mjs - what the Node test programs share (tests/dashboard,
// tests/takeover): counted checks printed as "ok NAME" / "FAIL NAME: why"
// with the closing "N passed, N failed", detmd's JSON API, and waiting for
// a condition with a deadline (never a fixed sleep).

// The counters and check(name, ok, detail); detail is cut at `cut` chars.
export function checker(cut = 400) {
  const t = { passed: 0, failed: 0 };
  t.check = (name, ok, detail = "") => {
    if (ok) { t.passed++; console.log(`ok   ${name}`); }
    else { t.failed++; console.log(`FAIL ${name}${detail ? ": " + String(detail).slice(0, cut) : ""}`); }
  };
  // the closing line, and the exit status that goes with it
  t.finish = () => {
    console.log(`${t.passed} passed, ${t.failed} failed`);
    process.exit(t.failed ? 1 : 0);
  };
  return t;
}

// api(method, path, body?) against detmd at url: {status, json (null when
// the body is not JSON), text}.
export const apiAt = (url) => async (method, path, body) => {
  const r = await fetch(url + path, { method, headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  let json = null; try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, json, text };
};

// true as soon as fn() is truthy (an exception counts as not yet), false
// after ms.
export async function until(fn, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    try { if (await fn()) return true; } catch { /* retry */ }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
