/**
 * Debian's Chromium driven by playwright-core for the web UI tests: a headless browser with its
 * own session, signing in through the UI, and axe-core's accessibility check of a page. Imported
 * directly (not through mod.ts), so that tests without a browser do not load playwright-core.
 */
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { createRequire } from "node:module";
import { findBinary } from "./peers.ts";

const AXE_PATH = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
let axeSource: string | undefined;

/** A running browser and the page to drive; `close` ends it. */
export interface TestBrowser {
  /** The one Chromium process of this browser; its contexts share nothing (cookies, storage). */
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** A second, separate browser session (another signed-in user), closed with the first. */
  another(): Promise<Page>;
  close(): Promise<void>;
}

/** Starts headless Chromium (Debian's binary), with no profile on disk. */
export function startChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: findBinary("chromium")!, headless: true });
}

/**
 * Headless Chromium (started by `start`) with a first session. Further sessions (`another`) are new
 * contexts of the same Chromium process: as separate as separate profiles (own cookies, storage and
 * cache), but without a second browser's start-up (about a second of CPU each, issue 36).
 */
export async function launchChromium(
  start: () => Promise<Browser> = startChromium,
): Promise<TestBrowser> {
  const browser = await start();
  const open = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    return { context, page: await context.newPage() };
  };
  try {
    const first = await open();
    return {
      browser,
      ...first,
      another: async () => (await open()).page,
      close: () => browser.close().catch(() => {}),
    };
  } catch (e) {
    await browser.close().catch(() => {});
    throw e;
  }
}

/** Signs in through the sign-in page and waits for the page it leads to. */
export async function signInUi(
  page: Page,
  base: string,
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.fill("#email", email);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL(/\/gateways$/), page.click("button[type=submit]")]);
}

/** axe-core's serious and critical violations of the page (WCAG 2.1 A and AA rules). */
export async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's script-src policy does not govern.
  axeSource ??= await Deno.readTextFile(AXE_PATH);
  await page.evaluate(axeSource);
  const violations = await page.evaluate(`(async () => {
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
      // Only the violations are read: passes, incomplete and inapplicable are not worked out
      // node by node (the same rules run, and every violating node is still reported).
      resultTypes: ["violations"],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
    }));
  })()`) as { id: string; impact: string; targets: string[] }[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.targets.join(", ")}`);
}
