/**
 * The operations console's front door against a real gateway process, as a browser without script
 * meets it (plain requests with cookies): security headers on every answer, the sign-in form and
 * its session cookie, CSRF and cross-site refusals, a viewer who may look but not retry, a wrong
 * Host refused, sign-out, the console kept out of the API's bearer guard (and the API out of the
 * console's cookie), the live tail's no-script capture and its event stream, and the dead-letter
 * pages from a 503 upstream to a delivered retry.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ConsoleClient, rawRequest, startConsoleGateway } from "./support/console.ts";
import { freePort, waitFor } from "./support/mod.ts";

const VIEWER_TOKEN = `viewer-${crypto.randomUUID()}-${crypto.randomUUID()}`;

Deno.test("console: sign-in, security headers, CSRF, roles, tail and dead letters over HTTP", async () => {
  const gw = await startConsoleGateway({
    extra: `
[management.tokens.watcher]
role = "viewer"
token = "\${VIEWER_TOKEN}"

# A pipeline whose upstream is gone: its failures are the dashboard's last error.
[endpoints.direct_in]
service = "http"
[endpoints.direct_in.options]
path_prefix = "/direct"
[backends.gone]
service = "http"
[backends.gone.options]
base_url = "http://127.0.0.1:${freePort()}"
[pipelines.direct]
endpoints = ["direct_in"]
backends = ["gone"]
`,
    env: { VIEWER_TOKEN },
  });
  try {
    const operator = new ConsoleClient(gw.consoleUrl);

    // Signed out: every page leads to the sign-in form, with the policy on the answer.
    const first = await operator.get("/health");
    assertEquals(first.status, 303);
    assertEquals(
      first.headers.get("location"),
      `/admin/console/login?next=${encodeURIComponent("/admin/console/health")}`,
    );
    const csp = first.headers.get("content-security-policy") ?? "";
    for (const part of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"]) {
      assert(csp.includes(part), `CSP has ${part}: ${csp}`);
    }
    assert(!csp.includes("unsafe-inline"), "no inline script or style");
    assertEquals(first.headers.get("x-frame-options"), "SAMEORIGIN");
    assertEquals(first.headers.get("x-content-type-options"), "nosniff");
    await first.body?.cancel();

    // A wrong token is refused with the form again; the right one opens a session.
    const login = await operator.page("/login");
    assertEquals(login.status, 200);
    assertMatch(login.html, /type="password"/);
    const csrfCookie = login.res.headers.getSetCookie().join("\n");
    assertMatch(csrfCookie, /HttpOnly/);
    assertMatch(csrfCookie, /SameSite=Strict/);
    const wrong = await operator.post("/login", {
      _csrf: ConsoleClient.csrfOf(login.html),
      token: "not-the-token-not-the-token-not-the-token",
    });
    assertEquals(wrong.status, 401);
    assertMatch(await wrong.text(), /not a valid management token/);
    const signedIn = await operator.signIn(gw.gateway.mgmtToken);
    assertEquals([signedIn.status, signedIn.headers.get("location")], [303, "/admin/console"]);
    const session = signedIn.headers.getSetCookie().find((c) => c.startsWith("gw_console="))!;
    assertMatch(session, /HttpOnly/);
    assertMatch(session, /SameSite=Strict/);
    assert(!/Secure/.test(session), "plain HTTP: no Secure flag");
    assert(!session.includes(gw.gateway.mgmtToken), "the cookie is not the token");

    const dashboard = await operator.page("");
    assertEquals(dashboard.status, 200);
    assertMatch(dashboard.html, /data-testid="pipeline-orders"/);
    assertMatch(dashboard.html, /management token \(admin\)/);

    // The console's cookie does not open the API, and the API's bearer does not open the console.
    const api = await fetch(`${gw.gateway.mgmtUrl}/admin/info`, {
      headers: { cookie: `gw_console=${operator.cookies.get("gw_console")}` },
    });
    assertEquals(api.status, 401);
    await api.body?.cancel();
    const bearer = await fetch(`${gw.consoleUrl}/health`, {
      redirect: "manual",
      headers: { authorization: `Bearer ${gw.gateway.mgmtToken}` },
    });
    assertEquals(bearer.status, 303);
    await bearer.body?.cancel();

    // A foreign Host (DNS rebinding) is refused before anything else.
    const port = Number(new URL(gw.consoleUrl).port);
    const rebound = await rawRequest(
      port,
      `GET /admin/console/login HTTP/1.1\r\nHost: evil.example:${port}\r\nConnection: close\r\n\r\n`,
    );
    assertMatch(rebound, /^HTTP\/1\.1 403/);
    assertMatch(rebound, /is not this gateway/);

    // The live tail: the no-script capture catches the next request; the event stream too.
    const capture = operator.page("/tail/capture?pipeline=orders&status=2xx&limit=1&seconds=30");
    const stream = await operator.get("/tail/events?pipeline=orders");
    assertEquals(stream.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let captured: Awaited<typeof capture> | undefined;
    void capture.then((c) => captured = c);
    // Requests until the capture (subscribed when its page started) has caught one.
    await waitFor(async () => {
      const res = await fetch(`${gw.dataUrl}/orders/lab-results`, { method: "POST", body: "{}" });
      await res.body?.cancel();
      return captured !== undefined;
    }, { timeoutMs: 20_000, description: "the tail capture caught a request" });
    assertEquals(captured!.status, 200);
    assertMatch(captured!.html, /Captured 1 request/);
    assertMatch(captured!.html, /<td>orders<\/td><td>POST<\/td>/);
    let events = "";
    while (!/event: request\ndata: /.test(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      events += value;
    }
    const event = JSON.parse(/event: request\ndata: (.*)\n/.exec(events)![1]);
    assertEquals([event.pipeline, event.status, event.fields.method], ["orders", 202, "POST"]);
    // Requests served by a data-plane worker reach the stream too (a new connection each, so
    // the kernel spreads them over the isolates).
    let fromWorker = false;
    const reading = (async () => {
      while (!fromWorker) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const m of value.matchAll(/event: request\ndata: (.*)\n/g)) {
          if (JSON.parse(m[1]).worker > 0) fromWorker = true;
        }
      }
    })();
    await waitFor(async () => {
      const res = await fetch(`${gw.dataUrl}/orders/lab-results`, {
        method: "POST",
        body: "{}",
        headers: { connection: "close" },
      });
      await res.body?.cancel();
      return fromWorker;
    }, { timeoutMs: 20_000, description: "a tail event from a data-plane worker" });
    await reader.cancel();
    await reading;

    // Each request was accepted (202) and will die: the upstream answers 503 twice.
    await waitFor(async () => (await gw.labQueue()).depth === 0 && (await gw.labQueue()).dead > 0, {
      timeoutMs: 20_000,
      description: "the queued requests are dead letters",
    });
    const dead = (await gw.labQueue()).dead;
    const list = await operator.page("/dead-letters?backend=lab");
    assertMatch(list.html, /gave up: HTTP 503/);
    const ids = [...list.html.matchAll(/dead-letters\/lab\/([0-9a-f-]+)"/g)].map((m) => m[1]);
    assertEquals(new Set(ids).size, dead);
    const detail = await operator.page(`/dead-letters/lab/${ids[0]}`);
    assertMatch(detail.html, /upstream down for maintenance/);

    // A viewer sees the dead letters but has no retry button, and a forged retry is refused.
    const viewer = new ConsoleClient(gw.consoleUrl);
    assertEquals((await viewer.signIn(VIEWER_TOKEN)).status, 303);
    const viewed = await viewer.page("/dead-letters?backend=lab");
    assertMatch(viewed.html, /token watcher \(viewer\)/);
    assert(!/>Retry</.test(viewed.html), "no retry button for a viewer");
    const forged = await viewer.post(`/dead-letters/lab/${ids[0]}/retry`, {
      _csrf: ConsoleClient.csrfOf(viewed.html),
    });
    assertEquals(forged.status, 403);
    assertMatch(await forged.text(), /viewer role may look but not act/);

    // An operator's retry without the CSRF token, or from another site, is refused.
    const noCsrf = await operator.post(`/dead-letters/lab/${ids[0]}/retry`, {});
    assertEquals(noCsrf.status, 403);
    await noCsrf.body?.cancel();
    const csrf = ConsoleClient.csrfOf(list.html);
    const crossSite = await operator.post(`/dead-letters/lab/${ids[0]}/retry`, { _csrf: csrf }, {
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
    });
    assertEquals(crossSite.status, 403);
    await crossSite.body?.cancel();
    assertEquals((await gw.labQueue()).dead, dead, "nothing was retried");

    // Mended: the operator fixes one dead letter's body in its page's form and sends it again
    // (a viewer may not), then retries every other dead letter of lab; they are delivered.
    gw.upstream.mend();
    const shown = await operator.page(`/dead-letters/lab/${ids[0]}?content=1`);
    assertMatch(shown.html, /data-testid="dead-letter-resend"/);
    assertMatch(shown.html, /<textarea id="dl-resend-body" name="body"[^>]*>\{\}<\/textarea>/);
    const viewerResend = await viewer.post(`/dead-letters/lab/${ids[0]}/resend`, {
      _csrf: ConsoleClient.csrfOf(viewed.html),
      body: "{}",
    });
    assertEquals(viewerResend.status, 403);
    await viewerResend.body?.cancel();
    const edited = await operator.post(`/dead-letters/lab/${ids[0]}/resend`, {
      _csrf: ConsoleClient.csrfOf(shown.html),
      body: '{"fixed":true}',
      content_type: "application/json",
      eol: "lf",
    });
    assertEquals(edited.status, 303);
    const location = edited.headers.get("location")!;
    const newId = new URL(location, gw.consoleUrl).searchParams.get("resent")!;
    assertMatch(newId, /^\d{13}-\d{6}-[0-9a-f]{8}$/);
    const resentPage = await operator.page(location.replace(/^\/admin\/console/, ""));
    assertMatch(resentPage.html, new RegExp(`data-testid="new-delivery-id">${newId}<`));
    await waitFor(
      () =>
        Promise.resolve(
          gw.upstream.received.some((r) => new TextDecoder().decode(r.body) === '{"fixed":true}'),
        ),
      { timeoutMs: 20_000, description: "the edited dead letter at the upstream" },
    );
    const retried = await operator.post("/dead-letters/lab/retry", { _csrf: csrf });
    assertEquals(retried.status, 303);
    assertEquals(
      retried.headers.get("location"),
      `/admin/console/dead-letters?backend=lab&requeued=${dead - 1}`,
    );
    await waitFor(async () => (await gw.labQueue()).delivered_total === dead, {
      timeoutMs: 20_000,
      description: "every retried letter delivered",
    });
    assertEquals(gw.upstream.delivered(), dead);
    const after = await operator.page("/dead-letters?backend=lab&requeued=2");
    assertMatch(after.html, /2 dead letter\(s\) put back in the queue/);
    assertMatch(after.html, /No dead letter/);

    // A failing pipeline: its last error on the dashboard (from whichever isolate served it).
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.dataUrl}/direct/x`, { headers: { connection: "close" } });
      assertEquals(res.status, 502);
      await res.body?.cancel();
    }
    const board = await operator.page("");
    assertMatch(board.html, /data-testid="last-error-direct"/);
    assertMatch(board.html, /<code>backend_unavailable<\/code>/);
    // Message tracking is off in this gateway: the browser says how to turn it on.
    assertMatch((await operator.page("/messages")).html, /Message tracking is off/);

    // The health page names the listeners and workers.
    const health = await operator.page("/health");
    assertMatch(health.html, /0 \(main thread\)/);
    assertMatch(health.html, /network main/);

    // Sign-out ends the session (the old cookie no longer opens a page).
    const oldCookie = operator.cookies.get("gw_console")!;
    const out = await operator.post("/logout", { _csrf: csrf });
    assertEquals(out.status, 303);
    await out.body?.cancel();
    const replayed = await fetch(`${gw.consoleUrl}/health`, {
      redirect: "manual",
      headers: { cookie: `gw_console=${oldCookie}` },
    });
    assertEquals(replayed.status, 303);
    await replayed.body?.cancel();
  } finally {
    await gw.stop();
  }
});
