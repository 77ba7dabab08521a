// browser.mjs - the dashboard's ops buttons in Debian's chromium (headless,
// playwright-core from tests/dashboard's lockfile): selecting a task shows
// an Export button whose click downloads the task's bundle under its
// detm-task-<id>-<stamp>.zip name, and Dump logs downloads a dump. The
// downloads are saved for run.sh to unzip -t. Prints "N passed, N failed".
import { chromium } from "../dashboard/node_modules/playwright-core/index.mjs";

const url = process.env.DETM_URL, task = process.env.TASK, out = process.env.OUT;
let passed = 0, failed = 0;
const check = (name, ok, detail = "") => {
  if (ok) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name}${detail ? ": " + String(detail).slice(0, 300) : ""}`); }
};

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true,
  args: ["--no-sandbox", "--disable-gpu"] });
try {
  const ctx = await browser.newContext({ acceptDownloads: true });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${url}/dashboard`);
  await page.locator(`#tasks li[data-id="${task}"] button`).first().click();
  await page.locator("#task:not([hidden])").waitFor({ timeout: 10000 });
  const exp = page.locator("#b-export");
  check("the task header has an Export button", await exp.isVisible());
  const [dl] = await Promise.all([page.waitForEvent("download", { timeout: 30000 }), exp.click()]);
  const name = dl.suggestedFilename();
  check("Export downloads detm-task-<id>-<stamp>.zip", new RegExp(`^detm-task-${task}-\\d{8}T\\d{6}Z\\.zip$`).test(name), name);
  await dl.saveAs(`${out}/dash-export.zip`);
  check("the top bar has Dump logs", await page.locator("#b-dump").isVisible());
  await page.selectOption("#dump-window", "0");
  const [d2] = await Promise.all([page.waitForEvent("download", { timeout: 30000 }), page.click("#b-dump")]);
  check("Dump logs downloads detm-dump-<stamp>.zip", /^detm-dump-\d{8}T\d{6}Z\.zip$/.test(d2.suggestedFilename()), d2.suggestedFilename());
  await d2.saveAs(`${out}/dash-dump.zip`);
  check("no page errors", errors.length === 0, errors.join("; "));
} catch (e) {
  check("browser run", false, e.stack || e);
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
