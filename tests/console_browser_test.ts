/**
 * The operations console in Debian's Chromium (playwright-core), from an empty gateway to a
 * dead letter replayed after its upstream is mended: sign in by keyboard, watch the live tail
 * stream the request, see the dead letter on the dashboard and its page, retry it with the
 * keyboard once the upstream answers again, and see it delivered. Every page passes axe-core
 * (WCAG 2.1 A/AA, no serious or critical violation) with no CSP violation in the console; the
 * sign-in, retry, edit-and-resend of a dead letter and tail capture work with script disabled too.
 * With UPDATE_DOCS=1 each page's screenshot is written to docs/screenshots/console-*.png.
 */
import type { Page } from "playwright-core";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { axeProblems } from "./support/chromium.ts";
import { launchLeanChromium } from "./support/chromium_lean.ts";
import { startConsoleGateway } from "./support/console.ts";
import { launchWithoutScript } from "./support/console_browser.ts";
import { trackingTable, writeTrackingIdentity } from "./support/tracking.ts";
import { freePort, makeTestCa, requirePeer, waitFor } from "./support/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");
const SHOTS = Deno.env.get("UPDATE_DOCS")
  ? new URL("../docs/screenshots/", import.meta.url).pathname
  : undefined;

/** Presses Tab until `selector` has the focus (at most `max` times); false if it never does. */
async function tabTo(page: Page, selector: string, max = 60): Promise<boolean> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)})`)) {
      return true;
    }
  }
  return false;
}

Deno.test({
  name:
    "console in Chromium: an empty gateway to a dead letter retried after the upstream is mended",
  ignore: !HAS_CHROMIUM,
  sanitizeResources: false,
  fn: async () => {
    // A TLS network, so that the health page has a certificate to show.
    const certDir = await Deno.makeTempDir({ prefix: "console-certs-" });
    const ca = await makeTestCa(certDir);
    const server = await ca.server("edge");
    const identity = await writeTrackingIdentity(certDir);
    const gw = await startConsoleGateway({
      extra: `
[pipelines.orders.tracking]
content = ["received", "after_middleware", "backend_request", "backend_response"]
${trackingTable(certDir, identity)}
[network.secure]
bind = "127.0.0.1"
port = ${freePort()}
tls_cert_path = "${server.certPath}"
tls_key_path = "${server.keyPath}"
`,
    });
    const browser = await launchLeanChromium();
    // Screenshots are for the docs: taken only when they are updated (UPDATE_DOCS=1).
    const shots = SHOTS;
    if (shots) await Deno.mkdir(shots, { recursive: true });
    try {
      const page = browser.page;
      const cspErrors: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
      });
      const base = gw.consoleUrl;
      const visit = async (name: string) => {
        await page.waitForLoadState("load");
        assertEquals(await axeProblems(page), [], `accessibility of ${name} (${page.url()})`);
        if (shots) await page.screenshot({ path: `${shots}/console-${name}.png`, fullPage: true });
      };

      // Signed out: the sign-in page; the answer carries the content security policy.
      const answer = await page.goto(base);
      assertMatch(page.url(), /\/admin\/console\/login\?next=/);
      assertMatch(answer!.headers()["content-security-policy"], /script-src 'self'/);
      await visit("sign-in");
      // By keyboard: the token field has the focus; Enter submits.
      assertEquals(await page.evaluate("document.activeElement?.id"), "token");
      await page.keyboard.type(gw.gateway.mgmtToken);
      await Promise.all([page.waitForURL(base), page.keyboard.press("Enter")]);
      const cookie = (await browser.context.cookies(base)).find((c) => c.name === "gw_console")!;
      assertEquals([cookie.httpOnly, cookie.sameSite], [true, "Strict"]);

      // The empty gateway: no request yet, no dead letter.
      assertEquals(await page.textContent("[data-testid=total-requests]"), "0");
      assertEquals(await page.textContent("[data-testid=dead-orders]"), "0");
      await visit("dashboard-empty");

      // The live tail (script on): the request shows up as it finishes.
      await page.click("nav >> text=Live tail");
      await page.waitForURL(`${base}/tail`);
      // Read through the page's DOM from outside, not with waitForFunction: a string predicate
      // runs with eval, which the console's Content-Security-Policy refuses (no 'unsafe-eval').
      await waitFor(async () => (await page.textContent("#tail-state")) === "Live: connected", {
        timeoutMs: 15_000,
        description: "the live tail connected",
      });
      const sent = await fetch(`${gw.dataUrl}/orders/lab-results`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ order: "ORD-1", test: "HbA1c" }),
      });
      assertEquals(sent.status, 202);
      const { delivery_id } = await sent.json();
      await page.waitForSelector("#tail-rows tr[data-pipeline=orders][data-status='202']");
      // The path as the access log writes it: identifiers below the prefix stay out.
      assertMatch((await page.textContent("#tail-rows"))!, /orders\s*POST\s*\/orders\/\{…\}\s*202/);
      await visit("tail");

      // The upstream answers 503 until mended: the message becomes a dead letter.
      await waitFor(async () => (await gw.labQueue()).dead === 1, {
        timeoutMs: 20_000,
        description: "the message is a dead letter",
      });
      await page.click("nav >> text=Dashboard");
      await page.waitForURL(base);
      assertEquals(await page.textContent("[data-testid=dead-orders]"), "1");
      assertEquals(await page.textContent("[data-testid=total-requests]"), "1");
      await visit("dashboard");

      // Keyboard: from the dashboard to the dead letters and into the letter's page.
      await page.focus("body");
      assert(await tabTo(page, "nav a[href$='/dead-letters']"), "Tab reaches Dead letters");
      await Promise.all([page.waitForURL(`${base}/dead-letters`), page.keyboard.press("Enter")]);
      assertMatch((await page.textContent("[data-testid=dead-letters]"))!, /gave up: HTTP 503/);
      await visit("dead-letters");
      assert(await tabTo(page, "[data-testid=dead-letter-link]"), "Tab reaches the letter");
      await Promise.all([
        page.waitForURL(`${base}/dead-letters/lab/${delivery_id}`),
        page.keyboard.press("Enter"),
      ]);
      assertMatch((await page.textContent("[data-testid=dead-answer]"))!, /upstream down/);
      // The operator looks at what was sent (audited), shown as indented JSON.
      await Promise.all([
        page.waitForURL(/\?content=1$/),
        page.click("[data-testid=show-dead-content]"),
      ]);
      assertMatch(
        (await page.textContent("[data-testid=dead-letter-content] pre[data-kind=json]"))!,
        /"order": "ORD-1"/,
      );
      await visit("dead-letter");

      // Without script: sign in, and capture the next request with the tail's form.
      let deadNow = 0;
      const plainBrowser = await launchWithoutScript(browser.browser);
      try {
        const plain = plainBrowser.page;
        await plain.goto(`${base}/login`);
        await plain.fill("#token", gw.gateway.mgmtToken);
        await Promise.all([plain.waitForURL(base), plain.click("button[type=submit]")]);
        assertEquals(await plain.textContent("[data-testid=total-requests]"), "1");
        await plain.goto(`${base}/tail`);
        await plain.fill("#tail-limit", "1");
        let captured = false;
        const capture = Promise.all([
          plain.waitForURL(/\/tail\/capture\?/),
          plain.click("button:text-is('Apply')"),
        ]).then(() => captured = true);
        // Requests until the capture (subscribed once its page was asked for) has caught one.
        await waitFor(async () => {
          const res = await fetch(`${gw.dataUrl}/orders/again`, { method: "POST", body: "{}" });
          await res.body?.cancel();
          return captured;
        }, { timeoutMs: 30_000, description: "the no-script capture returned" });
        await capture;
        assertMatch((await plain.textContent("#tail-state"))!, /Captured 1 request/);
        assertMatch(
          (await plain.textContent("#tail-rows"))!,
          /orders\s*POST\s*\/orders\/\{…\}\s*202/,
        );
        await waitFor(async () => (await gw.labQueue()).depth === 0, {
          timeoutMs: 20_000,
          description: "the captured requests are dead letters too",
        });
        deadNow = (await gw.labQueue()).dead;
        assert(deadNow >= 2, `dead letters: ${deadNow}`);

        // Mended: the operator retries the first letter with the keyboard; it is delivered.
        gw.upstream.mend();
        assert(await tabTo(page, "[data-testid=retry]"), "Tab reaches Retry delivery");
        await Promise.all([
          page.waitForURL(/\/dead-letters\?backend=lab&requeued=1$/),
          page.keyboard.press("Enter"),
        ]);
        assertMatch((await page.textContent("[role=status]"))!, /1 dead letter\(s\) put back/);
        await waitFor(async () => (await gw.labQueue()).delivered_total === 1, {
          timeoutMs: 20_000,
          description: "the retried message delivered",
        });
        assertEquals(gw.upstream.delivered(), 1);
        assertEquals((await gw.labQueue()).dead, deadNow - 1);

        // Without script, one is fixed in its page's form and sent again as a new delivery.
        await plain.goto(`${base}/dead-letters?backend=lab`);
        const href = await plain.locator("[data-testid=dead-letter-link]").first().getAttribute(
          "href",
        );
        await plain.goto(new URL(`${href}?content=1`, base).href);
        await plain.fill("#dl-resend-body", '{"order":"ORD-FIXED"}');
        await Promise.all([
          plain.waitForURL(/\/dead-letters\?backend=lab&resent_from=.*&resent=\d/),
          plain.click("[data-testid=dead-letter-resend-submit]"),
        ]);
        assertMatch(
          (await plain.textContent("[data-testid=new-delivery-id]"))!,
          /^\d{13}-\d{6}-[0-9a-f]{8}$/,
        );
        await waitFor(
          () =>
            Promise.resolve(
              gw.upstream.received.some((r) =>
                new TextDecoder().decode(r.body) === '{"order":"ORD-FIXED"}'
              ),
            ),
          { timeoutMs: 20_000, description: "the edited dead letter delivered" },
        );

        // Without script, the rest are retried by the list's form.
        await plain.goto(`${base}/dead-letters?backend=lab`);
        await Promise.all([
          plain.waitForURL(/requeued=\d+$/),
          plain.click("[data-testid=retry-all]"),
        ]);
        assertMatch((await plain.textContent("[role=status]"))!, /put back in the queue/);
        await waitFor(async () => (await gw.labQueue()).delivered_total === deadNow, {
          timeoutMs: 20_000,
          description: "every dead letter delivered",
        });
        await Promise.all([
          plain.waitForURL(/\/login$/),
          plain.click("button:text-is('Sign out')"),
        ]);
      } finally {
        await plainBrowser.close();
      }
      await page.goto(`${base}/dead-letters`);
      assertMatch((await page.textContent("main"))!, /No dead letter/);
      await page.click("nav >> text=Dashboard");
      await page.waitForURL(base);
      assertEquals(await page.textContent("[data-testid=dead-orders]"), "0");

      // The message browser: the first order, found by pipeline and status, its stages side by
      // side once asked for (JSON pretty), then edited and resent to the mended upstream.
      await page.click("nav >> text=Messages");
      await page.waitForURL(`${base}/messages`);
      await page.selectOption("#m-pipeline", "orders");
      await page.selectOption("#m-status", "2xx");
      await Promise.all([
        page.waitForURL(/\/messages\?pipeline=orders&status=2xx/),
        page.click("button:text-is('Search')"),
      ]);
      // Newest first: the first order is the last of the three accepted (202).
      await waitFor(
        async () => (await page.locator("[data-testid=message-link]").count()) === deadNow,
        { timeoutMs: 15_000, description: `${deadNow} messages listed` },
      );
      await visit("messages");
      await Promise.all([
        page.waitForURL(/\/messages\/[^/?]+$/),
        page.locator("[data-testid=message-link]").last().click(),
      ]);
      assert(!(await page.content()).includes("HbA1c"), "no content before it is asked for");
      await page.click("[data-testid=show-content]");
      await page.waitForSelector("[data-testid=stages]");
      const stages = (await page.textContent("[data-testid=stages]"))!;
      assertMatch(stages, /As received/);
      assertMatch(stages, /Sent to\s*lab/);
      // Pretty JSON: the compact body as sent is shown indented.
      assertMatch(
        (await page.locator("pre[data-kind=json]").first().textContent())!,
        /\{\n {2}"order": "ORD-1",\n {2}"test": "HbA1c"\n\}/,
      );
      await visit("message");
      await Promise.all([
        page.waitForURL(/\/edit$/),
        page.click("[data-testid=edit]"),
      ]);
      await page.fill(
        "#resend-body",
        JSON.stringify({ order: "ORD-1", test: "HbA1c", fixed: true }),
      );
      await visit("message-edit");
      await Promise.all([page.waitForURL(/\/resend$/), page.click("[data-testid=resend]")]);
      assertMatch(
        (await page.textContent("[data-testid=replay-outcome]"))!,
        /the pipeline answered 202/,
      );
      await waitFor(async () => (await gw.labQueue()).delivered_total === deadNow + 1, {
        timeoutMs: 20_000,
        description: "the edited resend delivered",
      });
      const last = gw.upstream.received.at(-1)!;
      assertEquals(JSON.parse(new TextDecoder().decode(last.body)).fixed, true);

      // Health: workers, listeners and the TLS listener's certificate with its expiry.
      await page.click("nav >> text=Health");
      await page.waitForURL(`${base}/health`);
      assertMatch((await page.textContent("[data-testid=workers]"))!, /0 \(main thread\)/);
      assertMatch((await page.textContent("[data-testid=listeners]"))!, /network secure/);
      const certs = (await page.textContent("[data-testid=certificates]"))!;
      assertMatch(certs, /network\.secure\.tls_cert_path/);
      // The test CA's certificates last a day: the page warns (30 days ahead).
      assertMatch(certs, /expires within a day/);
      await visit("health");
      assertEquals(cspErrors, [], "no content security policy violation");
    } finally {
      await browser.close();
      await gw.stop();
      await Deno.remove(certDir, { recursive: true });
    }
  },
});
