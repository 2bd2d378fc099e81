import assert from "node:assert/strict";
import { type ConsoleAccess, ConsoleSessions, sha256Hex, SignInLimiter } from "./session.ts";

const OPERATOR: ConsoleAccess = {
  name: "admin",
  subject: "management token",
  role: "admin",
  viewContent: true,
  operate: true,
};

Deno.test("console sessions: idle and age limits, token revalidation, role changes, bound", () => {
  let now = 0;
  const sessions = new ConsoleSessions(
    { idleMs: 1000, maxAgeMs: 5000, maxSessions: 2 },
    () => now,
  );
  const digest = sha256Hex("token-a");
  let valid: ConsoleAccess | null = OPERATOR;
  const revalidate = (d: string) => (d === digest ? valid : null);

  const a = sessions.open(OPERATOR, digest);
  assert.equal(sessions.get(a.id, revalidate)?.csrf, a.session.csrf);
  assert.equal(sessions.get("not-a-cookie", revalidate), null);
  // Idle past the limit: gone.
  now = 1500;
  assert.equal(sessions.get(a.id, revalidate), null);

  // Kept alive by use, but not past its maximum age.
  const b = sessions.open(OPERATOR, digest);
  for (now = 2000; now < 6500; now += 900) assert.ok(sessions.get(b.id, revalidate));
  now = 7000;
  assert.equal(sessions.get(b.id, revalidate), null);

  // The token's role changes: the session takes it; the token goes: the session ends.
  const c = sessions.open(OPERATOR, digest);
  valid = { ...OPERATOR, role: "viewer", operate: false, viewContent: false };
  assert.equal(sessions.get(c.id, revalidate)?.access.role, "viewer");
  valid = null;
  assert.equal(sessions.get(c.id, revalidate), null);

  // At most maxSessions: the oldest goes first.
  valid = OPERATOR;
  const d = sessions.open(OPERATOR, digest);
  const e = sessions.open(OPERATOR, digest);
  const f = sessions.open(OPERATOR, digest);
  assert.equal(sessions.size, 2);
  assert.equal(sessions.get(d.id, revalidate), null);
  assert.ok(sessions.get(e.id, revalidate) && sessions.get(f.id, revalidate));
  sessions.close(f.id);
  assert.equal(sessions.get(f.id, revalidate), null);
});

Deno.test("sign-in limiter: 429 after the failures of a window, free again after it", () => {
  let now = 0;
  const limiter = new SignInLimiter(3, 60_000, () => now);
  for (let i = 0; i < 3; i++) {
    assert.equal(limiter.retryAfterSecs(), 0);
    limiter.failed();
  }
  assert.equal(limiter.retryAfterSecs(), 60);
  now = 30_000;
  assert.equal(limiter.retryAfterSecs(), 30);
  now = 60_001;
  assert.equal(limiter.retryAfterSecs(), 0);
});

Deno.test("cross-site POSTs: another host or a null Origin refused; the scheme is not compared", async () => {
  const { Hono } = await import("hono");
  const { crossSiteReason } = await import("./session.ts");
  const app = new Hono();
  app.post("/x", (c) => c.text(crossSiteReason(c) ?? "ok"));
  const ask = async (headers: Record<string, string>) =>
    await (await app.fetch(
      new Request("http://gw.hospital.internal:9090/x", { method: "POST", headers }),
    )).text();
  const host = { host: "gw.hospital.internal:9090" };
  assert.equal(await ask({ ...host, origin: "http://gw.hospital.internal:9090" }), "ok");
  // A proxy ends TLS: the page's origin is https, the listener sees http, the host is the same.
  assert.equal(await ask({ ...host, origin: "https://gw.hospital.internal:9090" }), "ok");
  assert.equal(await ask(host), "ok");
  assert.match(await ask({ ...host, origin: "https://evil.example" }), /not this console/);
  assert.match(await ask({ ...host, origin: "null" }), /not this console/);
  assert.match(await ask({ ...host, "sec-fetch-site": "cross-site" }), /Sec-Fetch-Site/);
  assert.match(await ask({ ...host, "sec-fetch-site": "same-site" }), /Sec-Fetch-Site/);
});
