/**
 * A second Chromium profile with script disabled, for the console's no-script paths. Imported
 * directly (not through mod.ts), so that tests without a browser do not load playwright-core.
 */
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { findBinary } from "./peers.ts";

/** Headless Chromium with JavaScript off; `close` ends it and removes its profile. */
export async function launchWithoutScript(): Promise<
  { context: BrowserContext; page: Page; close(): Promise<void> }
> {
  const profile = await Deno.makeTempDir({ prefix: "console-noscript-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: findBinary("chromium")!,
    headless: true,
    javaScriptEnabled: false,
    viewport: { width: 1280, height: 900 },
    args: ["--no-sandbox", "--disable-background-networking", "--no-first-run"],
  });
  return {
    context,
    page: context.pages()[0] ?? await context.newPage(),
    close: async () => {
      await context.close().catch(() => {});
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
