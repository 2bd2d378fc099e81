import assert from "node:assert/strict";
import type { CloudMetadata } from "./discovery.ts";
import {
  DEVICE_GRANT_TYPE,
  type DeviceAuthorization,
  pollForToken,
  requestDeviceCode,
} from "./device_flow.ts";
import { CliError, EXIT } from "./errors.ts";
import { HttpClient } from "./http.ts";
import { Output } from "./output.ts";

const META: CloudMetadata = {
  issuer: "https://c.example",
  jwks_uri: "https://c.example/.well-known/jwks.json",
  device_authorization_endpoint: "https://c.example/oauth/device/code",
  token_endpoint: "https://c.example/oauth/token",
};

/** A client whose token endpoint answers the `answers` in order; records the form of each poll. */
function scripted(answers: { status: number; body: unknown; headers?: Record<string, string> }[]) {
  const forms: Record<string, string>[] = [];
  const fetchFn = async (input: string | URL | Request, init?: RequestInit) => {
    assert.equal(String(input), META.token_endpoint);
    forms.push(Object.fromEntries(new URLSearchParams(String(init?.body))));
    const a = answers.shift();
    if (!a) throw new Error("polled too often");
    return await Promise.resolve(
      new Response(JSON.stringify(a.body), { status: a.status, headers: a.headers }),
    );
  };
  const http = new HttpClient(new Output({ stdout: () => {}, stderr: () => {} }), fetchFn);
  return { http, forms };
}

/** A clock that moves only when the loop sleeps. */
function fakeTime() {
  const sleeps: number[] = [];
  let now = 0;
  return {
    sleeps,
    timing: {
      now: () => now,
      sleep: (ms: number) => {
        sleeps.push(ms);
        now += ms;
        return Promise.resolve();
      },
    },
  };
}

const AUTH: DeviceAuthorization = {
  device_code: "dev-code",
  user_code: "BCDF-GHJK",
  verification_uri: "https://c.example/device",
  expires_in: 600,
  interval: 5,
};

const pending = { status: 400, body: { error: "authorization_pending" } };
const slow = { status: 400, body: { error: "slow_down" } };
const granted = {
  status: 200,
  body: { access_token: "t.o.k", token_type: "Bearer", expires_in: 86400 },
};

Deno.test("device flow: polls every interval, +5 s per slow_down, sends the RFC 8628 form", async () => {
  const { http, forms } = scripted([pending, slow, pending, slow, granted]);
  const t = fakeTime();
  const seen: string[] = [];
  const token = await pollForToken(
    http,
    META,
    AUTH,
    t.timing,
    (s) => seen.push(`${s.error}@${s.intervalSeconds}`),
  );
  assert.equal(token.access_token, "t.o.k");
  assert.deepEqual(t.sleeps, [5000, 5000, 10000, 10000, 15000]);
  assert.deepEqual(seen, [
    "authorization_pending@5",
    "slow_down@10",
    "authorization_pending@10",
    "slow_down@15",
  ]);
  assert.deepEqual(forms[0], {
    grant_type: DEVICE_GRANT_TYPE,
    device_code: "dev-code",
    client_id: "gwcli",
  });
});

Deno.test("device flow: the server's interval is honoured; 429 waits Retry-After", async () => {
  const { http } = scripted([{
    status: 429,
    body: { error: "rate_limited" },
    headers: { "retry-after": "7" },
  }, granted]);
  const t = fakeTime();
  await pollForToken(http, META, { ...AUTH, interval: 1 }, t.timing);
  assert.deepEqual(t.sleeps, [1000, 7000, 1000]);
});

Deno.test("device flow: denied, expired (by the server or the local deadline), unknown errors", async () => {
  const fails = async (answers: Parameters<typeof scripted>[0], pattern: RegExp, auth = AUTH) => {
    const { http } = scripted(answers);
    await assert.rejects(
      () => pollForToken(http, META, auth, fakeTime().timing),
      (e: unknown) => e instanceof CliError && e.exitCode === EXIT.auth && pattern.test(e.message),
    );
  };
  await fails([{ status: 400, body: { error: "access_denied" } }], /denied in the browser/);
  await fails(
    [{ status: 400, body: { error: "expired_token" } }],
    /code expired before it was approved/,
  );
  await fails([pending, pending], /code expired/, { ...AUTH, expires_in: 10 });
  await fails(
    [{ status: 400, body: { error: "invalid_grant", error_description: "used" } }],
    /refused the login \(400\): used \(invalid_grant\)/,
  );
});

Deno.test("device flow: the device code request, with defaults for a terse server", async () => {
  const fetchFn = (input: string | URL | Request, init?: RequestInit) => {
    assert.equal(String(input), META.device_authorization_endpoint);
    assert.equal(String(init?.body), "client_id=gwcli");
    assert.equal(
      new Headers(init?.headers).get("content-type"),
      "application/x-www-form-urlencoded",
    );
    return Promise.resolve(
      Response.json({ device_code: "d", user_code: "U", verification_uri: "https://v" }),
    );
  };
  const http = new HttpClient(new Output({ stdout: () => {}, stderr: () => {} }), fetchFn);
  const auth = await requestDeviceCode(http, META);
  assert.deepEqual(auth, {
    device_code: "d",
    user_code: "U",
    verification_uri: "https://v",
    verification_uri_complete: undefined,
    expires_in: 600,
    interval: 5,
  });
  const refusing = new HttpClient(
    new Output({ stdout: () => {}, stderr: () => {} }),
    () =>
      Promise.resolve(
        Response.json({ error: "invalid_client", error_description: "unknown client_id" }, {
          status: 401,
        }),
      ),
  );
  await assert.rejects(
    () => requestDeviceCode(refusing, META),
    /refused to start a login \(401\): unknown client_id/,
  );
});
