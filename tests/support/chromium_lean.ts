/**
 * Debian's Chromium as {@link launchChromium} starts it, without the browser window's own web UI.
 *
 * Chromium 156's headless browser still builds its window's omnibox popup as a web page
 * (chrome://omnibox-popup.top-chrome/) in a renderer of its own, and updates it on every
 * navigation: about 0.45 s of CPU per 20 page loads, nothing of which the pages under test see
 * or depend on. The features that make it are switched off here; the pages, their scripts, their
 * rendering and axe-core's checks are the same.
 *
 * Chromium reads only the last `--disable-features` switch, so the one given here repeats the
 * features Playwright switches off ({@link PLAYWRIGHT_DISABLED_FEATURES}, playwright-core 1.65.1)
 * and adds the web UI's. A launch checks, from the browser's command line, that the list still
 * covers Playwright's own (a Playwright upgrade that adds one fails here, not silently).
 *
 * Imported directly (not through mod.ts), so that tests without a browser do not load
 * playwright-core.
 */
import { type Browser, chromium } from "playwright-core";
import { launchChromium, type TestBrowser } from "./chromium.ts";
import { findBinary } from "./peers.ts";

/** The features playwright-core 1.65.1 switches off (its chromiumSwitches.ts). */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];

/** The browser window's omnibox popup as a web page (no page under test shows it). */
export const WINDOW_WEB_UI_FEATURES = [
  "WebUIOmniboxPopup",
  "WebUIOmniboxAimPopup",
  "WebUIOmniboxFullPopup",
];

const DISABLE = "--disable-features=";

/** The `--disable-features` values of the Chromium browser processes this process started. */
function launchedFeatureSwitches(): string[][] {
  const found: string[][] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== Deno.pid) continue;
      const args = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (!args.includes("--remote-debugging-pipe")) continue;
      found.push(args.filter((a) => a.startsWith(DISABLE)).map((a) => a.slice(DISABLE.length)));
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

/**
 * Starts headless Chromium (Debian's binary, no profile on disk) as {@link startChromium} does,
 * with the window's web UI switched off.
 */
export async function startLeanChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: findBinary("chromium")!,
    headless: true,
    args: [DISABLE + [...PLAYWRIGHT_DISABLED_FEATURES, ...WINDOW_WEB_UI_FEATURES].join(",")],
  });
  // Every browser process of ours: the last switch (the one Chromium reads) covers the first.
  for (const switches of launchedFeatureSwitches()) {
    const mine = new Set(switches.at(-1)?.split(","));
    const missing = (switches[0]?.split(",") ?? []).filter((f) => f && !mine.has(f));
    if (missing.length > 0) {
      await browser.close().catch(() => {});
      throw new Error(
        `Playwright switches off ${missing.join(", ")} too: add it to ` +
          "PLAYWRIGHT_DISABLED_FEATURES in tests/support/chromium_lean.ts",
      );
    }
  }
  return browser;
}

/**
 * {@link launchChromium} on {@link startLeanChromium}: a first session, and `another` for further
 * sessions (new contexts of the same Chromium process, as separate as separate profiles).
 */
export function launchLeanChromium(): Promise<TestBrowser> {
  return launchChromium(startLeanChromium);
}
