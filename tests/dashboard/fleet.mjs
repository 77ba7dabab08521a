// fleet.mjs - the dashboard of one pod showing every pod's tasks (issue 39
// item 3), run by tests/fleet/run.sh against its three real detmds: A's
// /dashboard opened with the token (the cookie, as an operator does),
// every task listed with its pod, a task of another pod opened and driven
// (a message posted through A lands on the owner), and its live view
// shown (C's MJPEG streamed through A). Env: A (A's URL), TOKEN,
// TASKS (id=detmd,... as the suite saw them), MSG_ON (the owner's URL of
// the task to open, MSG_TASK). Prints "N passed, N failed".
import { checker, until } from "../lib.mjs";
import { chromium } from "playwright-core";

const A = process.env.A, T = checker(300), check = T.check;
const want = Object.fromEntries(process.env.TASKS.split(",").map((p) => p.split("=")));
const id = process.env.MSG_TASK, owner = process.env.MSG_ON;

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu"] });
  const page = await (await browser.newContext()).newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${A}/dashboard?token=${encodeURIComponent(process.env.TOKEN)}`);
  const rows = page.locator("#tasks li");
  check(`A's dashboard lists every pod's ${Object.keys(want).length} tasks`,
    await until(async () => (await rows.count()) === Object.keys(want).length), await rows.count());
  const seen = {};
  for (let i = 0; i < await rows.count(); i++) {
    const li = rows.nth(i);
    seen[await li.getAttribute("data-id")] = await li.locator(".pod").getAttribute("title");
  }
  check("each row names its pod (the detmd holding it: self for A's own)",
    Object.entries(want).every(([t, d]) => seen[t] === d), JSON.stringify(seen));
  check("the fleet note counts the pods", (await page.locator("#fleet-note").innerText()).startsWith("3 pods"));
  await page.locator(`#tasks li[data-id="${id}"] button.task-btn`).click();
  check("a task of another pod opens through A (its name)",
    await until(async () => (await page.locator("#t-name").innerText()).startsWith("fleet")));
  await page.locator("#msg").fill("from A's dashboard");
  await page.locator("#post button[type=submit], #post button").first().click();
  const onOwner = async () => {
    const r = await fetch(`${owner}/api/tasks/${id}/messages?limit=50`,
      { headers: { Authorization: `Bearer ${process.env.TOKEN}`, "X-Detm-Forwarded": "1" } });
    return JSON.stringify(await r.json()).includes("from A's dashboard");
  };
  check("a message posted on A's dashboard lands on the owner pod", await until(onOwner));
  check("its live view shows through A (C's MJPEG, streamed by A)",
    await until(async () => await page.locator("#live").evaluate((img) => img.complete && img.naturalWidth > 0)),
    await page.locator("#live-note").innerText());
  check("no page errors", errors.length === 0, errors.join("; "));
  await browser.close();
}

main().catch((e) => check("fleet dashboard", false, e.stack)).finally(() => T.finish());
