/**
 * A second Chromium session with script disabled, for the console's no-script paths. Imported
 * directly (not through mod.ts), so that tests without a browser do not load playwright-core.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startChromium } from "./chromium.ts";

/**
 * A context with JavaScript off, in `browser` (a running Chromium, left running by `close`) or
 * else in a Chromium of its own (ended by `close`).
 */
export async function launchWithoutScript(browser?: Browser): Promise<
  { context: BrowserContext; page: Page; close(): Promise<void> }
> {
  const own = browser ? undefined : await startChromium();
  const context = await (browser ?? own)!.newContext({
    javaScriptEnabled: false,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    page: await context.newPage(),
    close: async () => {
      await context.close().catch(() => {});
      await own?.close().catch(() => {});
    },
  };
}
