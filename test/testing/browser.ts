// A real headless Chromium for the viewer's browser tests: Debian's /usr/bin/chromium (apt package
// `chromium`) driven by playwright-core, which ships no browser of its own. On a machine without
// it the tests skip with a reason that says how to get it; in CI (CI=true, where .ci/run installs
// it) its absence fails, so a broken install never passes as a skip.
import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { REPO } from "./bench.js";

// BENCHFLOW_CHROMIUM: another build of Chromium to test with (the default is Debian's).
export const CHROMIUM = process.env.BENCHFLOW_CHROMIUM ?? "/usr/bin/chromium";

// No sandbox: the tests run as root, where Chromium's own sandbox refuses to start. The rest keep a
// headless run from reaching the network (updates, sync, field trials) or needing a GPU.
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * `false` when the browser tests can run; else the reason to skip them. Throws in CI, where a
 * missing browser is a broken machine, not a reason to skip.
 */
export function browserSkip(): false | string {
  if (existsSync(CHROMIUM)) return false;
  const reason = `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the viewer's browser tests`;
  if (process.env.CI === "true") throw new Error(`CI=true but ${reason}`);
  return reason;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/** Where the screenshots go: $BENCHFLOW_SCREENSHOTS, else test-output/screenshots/ in the repo. */
export const SCREENSHOTS = process.env.BENCHFLOW_SCREENSHOTS ?? path.join(REPO, "test-output/screenshots");

/** A full-page screenshot of what the page shows now, saved as SCREENSHOTS/<name>.png for a person. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fs.mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
