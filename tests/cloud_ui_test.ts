/** The web UI over HTTP: cookies, CSRF on every form, same-origin posts, sign-up switch, limits. */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { type TestCloud, withCloud } from "./cloud_harness.ts";
import { hashPassword, verifyPassword } from "../cloud/auth/mod.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

async function signUp(cloud: TestCloud, email = "ada@example.com", base = cloud.url) {
  const page = await fetch(`${cloud.url}/sign-up`);
  const pre = page.headers.getSetCookie()[0].split(";")[0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
  const res = await fetch(`${cloud.url}/sign-up`, {
    method: "POST",
    redirect: "manual",
    headers: { ...FORM, cookie: pre, origin: new URL(base).origin },
    body: new URLSearchParams({
      _csrf: csrf,
      name: "Ada",
      email,
      password: "long enough pw",
      team: "Rad",
    }),
  });
  return { res, cookies: res.headers.getSetCookie() };
}

async function sessionCsrf(cloud: TestCloud, cookie: string): Promise<string> {
  const html = await (await fetch(`${cloud.url}/tokens`, { headers: { cookie } })).text();
  return /name="_csrf" value="([^"]+)"/.exec(html)![1];
}

Deno.test("web UI: session cookie flags, CSRF required on every form, cross-site posts refused", async () => {
  await withCloud(async (cloud) => {
    const { res, cookies } = await signUp(cloud);
    assertEquals([res.status, res.headers.get("location")], [303, "/gateways"]);
    const session = cookies.find((c) => c.startsWith("gw_session="))!;
    assertMatch(session, /HttpOnly/);
    assertMatch(session, /SameSite=Lax/);
    const cookie = session.split(";")[0];
    const csrf = await sessionCsrf(cloud, cookie);
    const forms = [
      "/tokens",
      "/teams",
      "/teams/switch",
      "/teams/members",
      "/device",
      "/device/approve",
      "/sign-out",
    ];
    for (const path of forms) {
      const noToken = await fetch(`${cloud.url}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { ...FORM, cookie },
        body: "name=x",
      });
      await noToken.body?.cancel();
      if (path === "/sign-out") assertEquals(noToken.status, 303);
      else assertEquals(noToken.status, 403, `${path} without CSRF token`);
    }
    const stillIn = await fetch(`${cloud.url}/tokens`, { headers: { cookie }, redirect: "manual" });
    assertEquals(stillIn.status, 200, "sign-out without a CSRF token did nothing");
    await stillIn.body?.cancel();
    const cross = await fetch(`${cloud.url}/tokens`, {
      method: "POST",
      headers: { ...FORM, cookie, origin: "https://evil.example" },
      body: new URLSearchParams({ _csrf: csrf, name: "x" }),
    });
    assertEquals(cross.status, 403);
    await cross.body?.cancel();
    // A sandboxed iframe or a data: page sends `Origin: null`: refused even with a valid CSRF
    // token, on device approval as on every form.
    for (const path of ["/device/approve", "/tokens"]) {
      const opaque = await fetch(`${cloud.url}${path}`, {
        method: "POST",
        headers: { ...FORM, cookie, origin: "null" },
        body: new URLSearchParams({ _csrf: csrf, name: "x", user_code: "BCDF-GHJK" }),
      });
      assertEquals(opaque.status, 403, `${path} with Origin: null`);
      assertMatch(await opaque.text(), /cross-origin form posts are refused/);
    }
    const sameSite = await fetch(`${cloud.url}/tokens`, {
      method: "POST",
      headers: { ...FORM, cookie, "sec-fetch-site": "cross-site" },
      body: new URLSearchParams({ _csrf: csrf, name: "x" }),
    });
    assertEquals(sameSite.status, 403);
    await sameSite.body?.cancel();
    const ok = await fetch(`${cloud.url}/tokens`, {
      method: "POST",
      headers: { ...FORM, cookie, origin: cloud.url },
      body: new URLSearchParams({ _csrf: csrf, name: "x" }),
    });
    const html = await ok.text();
    assertEquals(ok.status, 200);
    assertEquals(ok.headers.get("cache-control"), "no-store");
    assertMatch(html, /data-testid="new-token">gwc_/);
    assertEquals(ok.headers.get("x-frame-options"), "SAMEORIGIN");
    assertMatch(
      ok.headers.get("content-security-policy")!,
      /default-src 'none'.*form-action 'self'.*frame-ancestors 'none'/,
    );
    // Signed out: pages redirect to sign-in, keeping where to come back to.
    const out = await fetch(`${cloud.url}/gateways/x?y=1`, { redirect: "manual" });
    assertEquals(
      out.headers.get("location"),
      `/sign-in?next=${encodeURIComponent("/gateways/x?y=1")}`,
    );
    await out.body?.cancel();
    const unknown = await fetch(`${cloud.url}/device?user_code=BCDF-GHJK`, { headers: { cookie } });
    assertEquals(unknown.status, 400);
    assertMatch(await unknown.text(), /unknown, expired or already used/);
  });
});

Deno.test("web UI: https base URL gives __Host- Secure cookies; sign-up can be turned off", async () => {
  await withCloud(async (cloud) => {
    const { cookies } = await signUp(cloud, "ada@example.com", "https://cloud.example.com");
    const session = cookies.find((c) => c.startsWith("__Host-gw_session="))!;
    assert(session !== undefined, cookies.join(" | "));
    assertMatch(session, /; Secure/);
    assertMatch(session, /; Path=\//);
  }, { baseUrl: "https://cloud.example.com" });
  await withCloud(async (cloud) => {
    const page = await fetch(`${cloud.url}/sign-up`);
    assertEquals(page.status, 404);
    assertMatch(await page.text(), /Sign-up is turned off/);
    const post = await fetch(`${cloud.url}/sign-up`, {
      method: "POST",
      headers: FORM,
      body: "email=a@b.c",
    });
    assertEquals(post.status, 404);
    await post.body?.cancel();
    assert(
      !(await (await fetch(`${cloud.url}/sign-in`)).text()).includes("/sign-up"),
      "no sign-up link",
    );
  }, { signup: false });
});

Deno.test("web UI: sign-in attempts are limited per IP (429 with Retry-After)", async () => {
  await withCloud(async (cloud) => {
    const attempt = async () => {
      const res = await fetch(`${cloud.url}/sign-in`, {
        method: "POST",
        headers: FORM,
        body: "email=a@b.c&password=x",
      });
      await res.body?.cancel();
      return res;
    };
    assertEquals((await attempt()).status, 400);
    assertEquals((await attempt()).status, 400);
    const limited = await attempt();
    assertEquals(limited.status, 429);
    assert(Number(limited.headers.get("retry-after")) >= 1);
  }, { rateLimits: { signInPerIp: { limit: 2, windowSeconds: 60 } } as never });
});

Deno.test("web UI: signing in upgrades a password hash made with fewer iterations", async () => {
  await withCloud(async (cloud) => {
    const s = cloud.server.services;
    const { user } = await s.store.identity.createUser({
      email: "old@example.com",
      name: "Old",
      passwordHash: await hashPassword("an old password", 500),
      teamName: "Legacy",
    });
    const form = await fetch(`${cloud.url}/sign-in`);
    const pre = form.headers.getSetCookie()[0].split(";")[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
    const res = await fetch(`${cloud.url}/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: pre },
      body: new URLSearchParams({
        _csrf: csrf,
        email: "OLD@example.com",
        password: "an old password",
        next: "//evil.example",
      }),
    });
    await res.body?.cancel();
    assertEquals(
      [res.status, res.headers.get("location")],
      [303, "/gateways"],
      "never redirects off-site",
    );
    const hash = (await s.store.identity.user(user.id))!.password_hash;
    assertMatch(hash, /^pbkdf2-sha256\$1000\$/);
    assert(await verifyPassword("an old password", hash));
  });
});
