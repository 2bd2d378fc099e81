import assert from "node:assert/strict";
import { createManagementApp } from "../mod.ts";
import {
  authed,
  fakeControl,
  memoryLogger,
  TEST_GUARD,
  TEST_TOKEN,
} from "../../../tests/support/management.ts";

const BASE = "http://127.0.0.1:9090";

function setup() {
  const { control, state } = fakeControl();
  const { logger, lines } = memoryLogger();
  const app = createManagementApp(control, logger, TEST_GUARD);
  return { app, state, lines };
}

Deno.test("console in the management app: its own front door; the API's guard unchanged", async () => {
  const { app, lines } = setup();
  // A page without a session: the sign-in page, as HTML with the policy.
  const page = await app.fetch(new Request(`${BASE}/admin/console/health`));
  assert.equal(page.status, 303);
  assert.match(page.headers.get("content-security-policy")!, /default-src 'none'/);
  assert.ok(page.headers.get("x-request-id"), "the API's request id is stamped too");
  // A browser's Origin is fine on the console's pages, still refused on the API.
  const login = await app.fetch(
    new Request(`${BASE}/admin/console/login`, { headers: { origin: BASE } }),
  );
  assert.equal(login.status, 200);
  assert.match(await login.text(), /Sign in to the console/);
  const api = await app.fetch(authed(`${BASE}/admin/info`, { headers: { origin: BASE } }));
  assert.equal(api.status, 403);
  assert.equal((await api.json()).error.code, "origin_not_allowed");
  // An unknown console page is the console's HTML 404, not the API's JSON.
  const missing = await app.fetch(new Request(`${BASE}/admin/console/nope`));
  assert.equal(missing.status, 404);
  assert.match(missing.headers.get("content-type")!, /text\/html/);
  // The token never appears in the log.
  assert.ok(!JSON.stringify(lines).includes(TEST_TOKEN));
});

Deno.test("console off ([management] console = false): the paths are the API's again", async () => {
  const { app, state } = setup();
  state.config = {
    ...state.config,
    management: { ...state.config.management, console: false },
  };
  const res = await app.fetch(new Request(`${BASE}/admin/console/login`));
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error.code, "unauthorized");
  const authedRes = await app.fetch(authed(`${BASE}/admin/console`));
  assert.equal(authedRes.status, 404);
  assert.equal((await authedRes.json()).error.code, "not_found");
});

Deno.test("console follows the prefix of the configuration serving", async () => {
  const { app, state } = setup();
  state.config = { ...state.config, management: { ...state.config.management, prefix: "ops" } };
  const res = await app.fetch(new Request(`${BASE}/ops/console/login`));
  assert.equal(res.status, 200);
  assert.match(await res.text(), /action="\/ops\/console\/login"/);
  const old = await app.fetch(new Request(`${BASE}/admin/console/login`));
  assert.equal(old.status, 401, "the old prefix is not the console's any more");
});

Deno.test("console over TLS: __Host- cookies with Secure; sign-in by the form", async () => {
  const { app } = setup();
  const base = "https://127.0.0.1:9090/admin/console";
  const form = await app.fetch(new Request(`${base}/login`));
  const csrfCookie = form.headers.getSetCookie()[0];
  assert.match(csrfCookie, /^__Host-gw_console_csrf=[A-Za-z0-9_-]{43}; .*Secure/);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
  const signedIn = await app.fetch(
    new Request(`${base}/login`, {
      method: "POST",
      headers: {
        cookie: csrfCookie.split(";")[0],
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://127.0.0.1:9090",
      },
      body: new URLSearchParams({ _csrf: csrf, token: TEST_TOKEN, next: "/admin/console" }),
    }),
  );
  assert.equal(signedIn.status, 303);
  const session = signedIn.headers.getSetCookie().find((c) => c.startsWith("__Host-gw_console="))!;
  assert.match(session, /HttpOnly/);
  assert.match(session, /Secure/);
  assert.match(session, /SameSite=Strict/);
  assert.match(session, /Path=\//);
  const page = await app.fetch(
    new Request(base, { headers: { cookie: session.split(";")[0] } }),
  );
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<h1>Dashboard<\/h1>/);
  // The same form from another origin is refused before the handler.
  const crossSite = await app.fetch(
    new Request(`${base}/login`, {
      method: "POST",
      headers: {
        cookie: csrfCookie.split(";")[0],
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://evil.example",
      },
      body: new URLSearchParams({ _csrf: csrf, token: TEST_TOKEN }),
    }),
  );
  assert.equal(crossSite.status, 403);
  await crossSite.body?.cancel();
});
