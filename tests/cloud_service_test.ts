/** The service skeleton: flags and env, errors, body limits, validation, rate limits, request ids. */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, startTestCloud, withCloud } from "./cloud_harness.ts";
import { parseCommandLine, resolveOptions } from "../cloud/mod.ts";
import { RateLimiter } from "../cloud/rate_limit/mod.ts";
import { ManualClock } from "../cloud/mod.ts";

Deno.test("cloud options: flags win over the environment, the environment over defaults", () => {
  const env: Record<string, string> = {
    CLOUD_PORT: "9001",
    CLOUD_BASE_URL: "https://env.example.com/",
    CLOUD_DATA_DIR: "/var/lib/cloud",
    CLOUD_KV_URL: "https://kv.example.com/db",
  };
  const fromEnv = parseCommandLine([], (n) => env[n]);
  assertEquals(fromEnv.command, "serve");
  const o = resolveOptions(fromEnv.options);
  assertEquals([o.port, o.baseUrl, o.dataDir, o.kvUrl], [
    9001,
    "https://env.example.com",
    "/var/lib/cloud",
    "https://kv.example.com/db",
  ]);
  const fromFlags = resolveOptions(
    parseCommandLine([
      "--port",
      "8123",
      "--base-url",
      "https://flag.example.com",
      "--data-dir",
      "d",
      "--kv",
      "https://kv2",
    ], (n) => env[n]).options,
  );
  assertEquals([fromFlags.port, fromFlags.baseUrl, fromFlags.dataDir, fromFlags.kvUrl], [
    8123,
    "https://flag.example.com",
    "d",
    "https://kv2",
  ]);
  const defaults = resolveOptions(parseCommandLine([], () => undefined).options);
  assertEquals([
    defaults.port,
    defaults.baseUrl,
    defaults.dataDir,
    defaults.kvUrl,
    defaults.passwordIterations,
  ], [8000, "http://localhost:8000", "./data", undefined, 600_000]);
  const rate = resolveOptions(parseCommandLine(["--token-rate", "5"], () => undefined).options);
  assertEquals(rate.rateLimits.perToken, { limit: 5, windowSeconds: 60 });
  assertEquals(rate.rateLimits.signInPerIp, { limit: 10, windowSeconds: 60 });
  const cmd = parseCommandLine(
    ["user:create", "--email", "a@b.c", "--password-stdin"],
    () => undefined,
  );
  assertEquals([cmd.command, cmd.user.email, cmd.user.passwordStdin], [
    "user:create",
    "a@b.c",
    true,
  ]);
  let message = "";
  try {
    parseCommandLine(["--port", "70000"], () => undefined);
  } catch (err) {
    message = (err as Error).message;
  }
  assertMatch(message, /--port must be an integer 0-65535/);
  assertEquals(
    resolveOptions(
      parseCommandLine([], (n) => n === "CLOUD_TEST_PBKDF2_ITERATIONS" ? "1000" : undefined)
        .options,
    ).passwordIterations,
    1000,
  );
});

Deno.test("cloud options: without --base-url a loopback or wildcard bind issues tokens as http://localhost:PORT", async () => {
  // docs/cloud-api.md documents `http://localhost:PORT`; a 127.0.0.1 bind used to say 127.0.0.1.
  for (const hostname of ["127.0.0.1", "0.0.0.0"]) {
    const cloud = await startTestCloud({ hostname, port: 0, baseUrl: undefined });
    try {
      assertEquals(cloud.baseUrl, `http://localhost:${cloud.server.port}`);
      const res = await fetch(
        `http://127.0.0.1:${cloud.server.port}/.well-known/openid-configuration`,
      );
      const body = await res.json();
      assertEquals(body.issuer, `http://localhost:${cloud.server.port}`);
    } finally {
      await cloud.stop();
    }
  }
  const docs = await Deno.readTextFile(new URL("../docs/cloud-api.md", import.meta.url));
  assertMatch(docs, /`--base-url URL` *\| `CLOUD_BASE_URL` *\| `http:\/\/localhost:PORT`/);
});

Deno.test("cloud service: health, JSON 404 with request id, unknown route", async () => {
  await withCloud(async (cloud) => {
    const health = await call(cloud, "GET", "/healthz");
    assertEquals([health.status, health.json], [200, { status: "ok" }]);
    const ready = await call(cloud, "GET", "/readyz");
    assertEquals(ready.json, { status: "ready" });
    const missing = await call(cloud, "GET", "/api/nothing-here", {
      headers: { "x-request-id": "req-42" },
    });
    assertEquals(missing.status, 404);
    assertEquals(missing.json.error.code, "not_found");
    assertEquals(missing.json.error.request_id, "req-42");
    assertEquals(missing.headers.get("x-request-id"), "req-42");
  });
});

Deno.test("cloud service: bearer errors, body limits, media type, zod field messages", async () => {
  await withCloud(async (cloud) => {
    const none = await call(cloud, "GET", "/api/me");
    assertEquals([none.status, none.json.error.code], [401, "unauthorized"]);
    assertMatch(none.headers.get("www-authenticate") ?? "", /^Bearer/);
    const bad = await call(cloud, "GET", "/api/me", { token: "gwc_" + "x".repeat(43) });
    assertEquals([bad.status, bad.json.error.message], [401, "unknown or revoked API token"]);
    const u = await makeUser(cloud, "ada@example.com");
    const big = await call(cloud, "POST", "/api/services", {
      token: u.apiToken,
      body: JSON.stringify({ name: "x".repeat(70_000) }),
    });
    assertEquals([big.status, big.json.error.code], [413, "payload_too_large"]);
    const text = await call(cloud, "POST", "/api/services", {
      token: u.apiToken,
      body: "name=x",
      headers: { "content-type": "text/plain" },
    });
    assertEquals([text.status, text.json.error.code], [415, "unsupported_media_type"]);
    const broken = await call(cloud, "POST", "/api/services", { token: u.apiToken, body: "{nope" });
    assertEquals([broken.status, broken.json.error.code], [400, "invalid_json"]);
    const invalid = await call(cloud, "POST", "/api/services", {
      token: u.apiToken,
      body: { name: "bad name", endpoint_types: ["fhir", "smtp"], extra: 1 },
    });
    assertEquals(invalid.status, 422);
    assertEquals(invalid.json.error.code, "validation_failed");
    const fields = invalid.json.error.fields.map((f: { field: string }) => f.field).sort();
    assertEquals(fields, ["", "endpoint_types.1", "name"]);
    assertMatch(invalid.json.error.message, /^invalid body: /);
  });
});

Deno.test("cloud service: per-token budget answers 429 with Retry-After", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    for (let i = 0; i < 3; i++) {
      assertEquals((await call(cloud, "GET", "/api/me", { token: u.apiToken })).status, 200);
    }
    const limited = await call(cloud, "GET", "/api/me", { token: u.apiToken });
    assertEquals([limited.status, limited.json.error.code], [429, "rate_limited"]);
    const retry = Number(limited.headers.get("retry-after"));
    assert(retry >= 1 && retry <= 20, `Retry-After ${retry}`);
    // Another token has its own budget.
    assertEquals((await call(cloud, "GET", "/api/me", { token: u.userToken })).status, 200);
    cloud.clock.advance(retry * 1000);
    assertEquals((await call(cloud, "GET", "/api/me", { token: u.apiToken })).status, 200);
  }, { rateLimits: { perToken: { limit: 3, windowSeconds: 60 } } as never });
});

Deno.test("cloud service: bad bearer tokens are throttled per IP", async () => {
  await withCloud(async (cloud) => {
    for (let i = 0; i < 2; i++) {
      assertEquals(
        (await call(cloud, "GET", "/api/me", { token: "gwc_" + "y".repeat(43) })).status,
        401,
      );
    }
    const blocked = await call(cloud, "GET", "/api/me", { token: "gwc_" + "y".repeat(43) });
    assertEquals(blocked.status, 429);
    assert(Number(blocked.headers.get("retry-after")) >= 1);
  }, { rateLimits: { authFailuresPerIp: { limit: 2, windowSeconds: 60 } } as never });
});

Deno.test("cloud service: a failing credential is locked out, not the valid tokens of the same address", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const bad = "gwc_" + "y".repeat(43);
    for (let i = 0; i < 2; i++) {
      assertEquals((await call(cloud, "GET", "/api/me", { token: bad })).status, 401);
    }
    // The same bad credential again: locked out.
    assertEquals((await call(cloud, "GET", "/api/me", { token: bad })).status, 429);
    // Spraying other bad tokens from the address: past its budget they get 429 too. One after
    // the other: sent at once, which of them the budget stops first is up to the scheduler.
    const spray: number[] = [];
    for (let i = 0; i < 6; i++) {
      const token = "gwc_" + String(i).repeat(43);
      spray.push((await call(cloud, "GET", "/api/me", { token })).status);
    }
    assertEquals(spray.at(-1), 429);
    assertEquals(spray.every((s) => s === 401 || s === 429), true);
    // A colleague behind the same address with a valid token is not locked out.
    assertEquals((await call(cloud, "GET", "/api/me", { token: u.apiToken })).status, 200);
    assertEquals((await call(cloud, "GET", "/api/me", { token: u.userToken })).status, 200);
  }, {
    rateLimits: {
      authFailuresPerIp: { limit: 5, windowSeconds: 60 },
      authFailuresPerCredential: { limit: 2, windowSeconds: 60 },
    } as never,
  });
});

Deno.test("rate limiter: GCRA allows the burst, then one request per interval", () => {
  const clock = new ManualClock();
  const limiter = new RateLimiter(clock);
  const budget = { limit: 4, windowSeconds: 60 };
  for (let i = 0; i < 4; i++) assert(limiter.take("k", budget).allowed);
  const denied = limiter.take("k", budget);
  assertEquals([denied.allowed, denied.retryAfterSeconds], [false, 15]);
  clock.advance(15_000);
  assert(limiter.take("k", budget).allowed);
  assert(!limiter.take("k", budget).allowed);
  assert(limiter.take("other", budget).allowed);
});
