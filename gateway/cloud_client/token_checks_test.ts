import assert from "node:assert/strict";
import { testConfig } from "../../tests/support/management.ts";
import { cloudSettings } from "./settings.ts";
import { checkPayloadLocally } from "./token_checks.ts";
import { testPayload } from "../../tests/support/machine_tokens.ts";

const settings = (extra: Record<string, unknown> = {}) =>
  cloudSettings(
    { ...testConfig(), cloud: { enabled: true, url: "https://cloud.example.com", ...extra } },
    "/etc/gw",
  );

Deno.test("checkPayloadLocally: a well-formed token of the configured cloud passes (object or JSON text)", () => {
  const p = testPayload();
  assert.deepEqual(checkPayloadLocally(p, settings(), Date.now()), { ok: true, payload: p });
  assert.deepEqual(checkPayloadLocally(JSON.stringify(p), settings(), Date.now()), {
    ok: true,
    payload: p,
  });
});

Deno.test("checkPayloadLocally: every field problem is named; expiry against `now`", () => {
  const p = testPayload();
  const expired = checkPayloadLocally(p, settings(), Date.parse(p.expires_at) + 1);
  assert.equal(expired.ok, false);
  assert.match((expired as { problems: string[] }).problems[0], /^expires_at: the token expired/);
  const broken = checkPayloadLocally({ machine_token: "x" }, settings(), Date.now());
  assert.deepEqual(
    (broken as { problems: string[] }).problems.map((m) => m.split(":")[0]),
    ["machine_token", "expires_at", "gateway_id", "gateway_code"],
  );
});

Deno.test("checkPayloadLocally: another issuer is `foreign`; another code is refused only when configured", () => {
  const foreign = checkPayloadLocally(
    testPayload({ issuer: "https://evil.example" }),
    settings(),
    Date.now(),
  );
  assert.equal(foreign.ok, false);
  assert.equal((foreign as { foreign?: boolean }).foreign, true);
  assert.match(
    (foreign as { problems: string[] }).problems[0],
    /issued by "https:\/\/evil.example"/,
  );
  const p = testPayload({ code: "edge-2" });
  assert.equal(checkPayloadLocally(p, settings(), Date.now()).ok, true);
  const pinned = checkPayloadLocally(p, settings({ gateway_code: "edge-1" }), Date.now());
  assert.equal(pinned.ok, false);
  assert.equal((pinned as { foreign?: boolean }).foreign, undefined);
  assert.match(
    (pinned as { problems: string[] }).problems[0],
    /^gateway_code: the token is for gateway `edge-2`/,
  );
});
