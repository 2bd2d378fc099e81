/**
 * Headless Chromium (Debian package chromium), forced onto QUIC for our listener's origin, loads
 * a page and a JSON document through the HTTP/3 endpoint; the Navigation and Resource Timing
 * entries prove the protocol was h3. Chromium also cancels requests (RESET_STREAM), after which
 * the connection keeps serving.
 */
import { equal } from "node:assert/strict";
import { chromium } from "playwright-core";
import { startTestGateway, startUpstream } from "./harness.ts";
import { freeUdpPort, makeH3Cert } from "./http3_support.ts";
import { requirePeer } from "./support/mod.ts";

const hasChromium = requirePeer("HTTP/3 listener against Chromium", "chromium", "chromium");

const PAGE = `<!doctype html>
<html><head><title>h3 page</title></head>
<body><h1 id="title">served over HTTP/3</h1></body></html>`;

Deno.test({
  name: "h3 listener: Chromium loads a page and JSON over HTTP/3 and cancels requests",
  ignore: !hasChromium,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "h3-chromium-" });
    const cert = await makeH3Cert(dir);
    const upstream = startUpstream(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/slow") await new Promise((r) => setTimeout(r, 2000));
      if (path === "/index.html") {
        return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
      }
      return Response.json({ path });
    });
    const h3Port = freeUdpPort();
    const gw = await startTestGateway(
      `
[network.main.http3]
bind = "127.0.0.1"
port = ${h3Port}
cert_path = "${cert.certPath}"
key_path = "${cert.keyPath}"

[endpoints.site]
service = "http"
options = { path_prefix = "/site" }

[endpoints.echo]
service = "http"
options = { path_prefix = "/echo" }

[backends.web]
service = "http"
options = { base_url = "http://127.0.0.1:${upstream.port}" }

[backends.mirror]
service = "echo"

[pipelines.site]
endpoints = ["site"]
backends = ["web"]

[pipelines.echo]
endpoints = ["echo"]
backends = ["mirror"]
`,
      { dir },
    );
    const profile = await Deno.makeTempDir({ prefix: "h3-chromium-profile-" });
    // A new temporary profile (user data dir) for this run.
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--enable-quic",
        `--origin-to-force-quic-on=127.0.0.1:${h3Port}`,
        `--ignore-certificate-errors-spki-list=${cert.spkiHash}`,
      ],
    });
    try {
      const page = await browser.newPage();
      const origin = `https://127.0.0.1:${h3Port}`;
      const res = await page.goto(`${origin}/site/index.html`);
      equal(res?.status(), 200);
      equal(await page.textContent("#title"), "served over HTTP/3");
      const nav = await page.evaluate(() =>
        (performance.getEntriesByType("navigation")[0] as unknown as { nextHopProtocol: string })
          .nextHopProtocol
      );
      equal(nav, "h3");

      const json = await page.evaluate(async () => {
        const r = await fetch("/echo/data?x=1", { headers: { "x-test": "chromium" } });
        const body = await r.json();
        const entry = performance.getEntriesByType("resource").find((e) =>
          e.name.includes("/echo/data")
        ) as unknown as { nextHopProtocol: string };
        return {
          status: r.status,
          type: r.headers.get("content-type"),
          protocol: body.protocol,
          path: body.path,
          header: body.headers["x-test"],
          nextHop: entry.nextHopProtocol,
        };
      });
      equal(json.status, 200);
      equal(json.type, "application/json");
      equal(json.protocol, "h3");
      equal(json.path, "/data");
      equal(json.header, "chromium");
      equal(json.nextHop, "h3");

      // Chromium resets the streams of cancelled fetches; the connection goes on serving.
      const after = await page.evaluate(async () => {
        const aborted = await Promise.all(Array.from({ length: 10 }, async () => {
          const c = new AbortController();
          const p = fetch("/site/slow", { signal: c.signal });
          setTimeout(() => c.abort(), 50);
          return await p.then(() => "done", (e) => (e as Error).name);
        }));
        const r = await fetch("/echo/after");
        return { aborted, body: await r.json() };
      });
      equal(after.aborted.every((a: string) => a === "AbortError"), true);
      equal(after.body.path, "/after");
      equal(after.body.protocol, "h3");
    } finally {
      await browser.close();
      await gw.stop();
      await upstream.stop();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    }
  },
});
