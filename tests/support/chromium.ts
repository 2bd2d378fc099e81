/**
 * Debian's Chromium driven by playwright-core for the web UI tests: a headless browser with its
 * own profile, signing in through the UI, and axe-core's accessibility check of a page. Imported
 * directly (not through mod.ts), so that tests without a browser do not load playwright-core.
 */
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { createRequire } from "node:module";
import { findBinary } from "./peers.ts";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** A running browser and the page to drive; `close` ends it and removes its profile. */
export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** A second, separate browser session (another signed-in user), closed with the first. */
  another(): Promise<Page>;
  close(): Promise<void>;
}

/** Starts headless Chromium with a temporary profile. */
export async function launchChromium(): Promise<TestBrowser> {
  const profiles: string[] = [];
  const contexts: BrowserContext[] = [];
  const open = async () => {
    const profile = await Deno.makeTempDir({ prefix: "cloud-chromium-" });
    profiles.push(profile);
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: findBinary("chromium")!,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    contexts.push(context);
    return { context, page: context.pages()[0] ?? await context.newPage() };
  };
  const first = await open();
  return {
    ...first,
    another: async () => (await open()).page,
    close: async () => {
      for (const c of contexts) await c.close().catch(() => {});
      for (const p of profiles) await Deno.remove(p, { recursive: true }).catch(() => {});
    },
  };
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
  await page.evaluate(await Deno.readTextFile(AXE));
  const violations = await page.evaluate(`(async () => {
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
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
