// dashboard.mjs - the usage panel of /dashboard in Debian's headless
// chromium (playwright-core from tests/dashboard's lockfile), against the
// detmd run.sh started with usage already recorded. Env: DETM_URL, CHROMIUM,
// TASK (a task whose budget was reached). Prints "N passed, N failed".
import { createRequire } from "node:module";

const require = createRequire(new URL("../dashboard/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const url = process.env.DETM_URL, task = process.env.TASK;
let passed = 0, failed = 0;
const check = (name, ok, detail = "") => {
  if (ok) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name}${detail ? ": " + String(detail).slice(0, 300) : ""}`); }
};
const until = async (fn, ms = 10000) => {
  const end = Date.now() + ms;
  for (;;) {
    try { if (await fn()) return true; } catch { /* retry */ }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
};

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true,
  args: ["--no-sandbox", "--disable-gpu"] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error" && !/Failed to load resource/.test(m.text())) errors.push(m.text()); });   // CSP refusals too
  await page.goto(`${url}/dashboard`);
  check("the panel shows every task's usage",
    await until(async () => (await page.textContent("#u-title")) === "Usage, all tasks"));
  const stats = await (await fetch(`${url}/api/usage/stats`)).json();
  check("the cards show the calls the API reports",
    await until(async () => (await page.locator(".u-card b").nth(1).textContent()) === stats.totals.requests.toLocaleString("en-US")),
    await page.locator(".u-card b").nth(1).textContent());
  check("the daily chart: 30 bars, today's drawn", await page.locator("#u-chart rect").count() === 30 &&
    Number(await page.locator("#u-chart rect").nth(29).getAttribute("height")) > 0);
  check("one table row per provider/model", await page.locator("#u-rows tr").count() === stats.rows.length);
  check("the share bars are drawn (widths set through CSSOM, allowed by the CSP)",
    await page.locator("#u-rows .u-share").first().evaluate((e) => e.getBoundingClientRect().width > 0));
  await page.screenshot({ path: `${process.env.SHOTS || "/tmp"}/usage-panel.png`, fullPage: true });
  await page.goto("about:blank");
  await page.goto(`${url}/dashboard#task=${task}`);   // a fresh load: app.js selects the task
  const shown = await until(async () => (await page.textContent("#u-title")).startsWith("Usage of") &&
      /Budget reached: usd/.test(await page.textContent("#u-budget")));
  check("a selected task: its own usage and budget", shown,
    `${await page.textContent("#u-title")} | ${await page.textContent("#u-budget")}`);
  if (!shown) throw new Error("the task's panel did not show");
  await page.fill('#u-budget input[name="usd"]', "1", { timeout: 5000 });
  await page.click('#u-budget button[type="submit"]', { timeout: 5000 });
  check("raising the budget from the panel", await until(async () => {
    const t = await (await fetch(`${url}/api/tasks/${task}`)).json();
    return t.budget.usd === 1 && t.budget.reached === null;
  }));
  await page.click("#u-all");
  check("← All tasks shows every task while one is selected",
    await until(async () => (await page.textContent("#u-title")) === "Usage, all tasks" &&
      (await page.textContent("#u-all")) === "This task →"));
  check("no script errors", errors.length === 0, errors.join("; "));
} catch (e) {
  check("the panel test ran to its end", false, e.message);
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
