/** shared/tokens.ts: the machine-token payload checks the gateway applies to GATEWAY_MACHINE_TOKEN. */
import { assert, assertEquals } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import {
  checkMachineTokenPayload,
  decodeTokenClaims,
  MACHINE_TOKEN_LIFETIME_MS,
} from "../shared/tokens.ts";

Deno.test("machine-token payload: a real payload passes, as an object and as JSON text", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const res = await call(cloud, "POST", "/api/gateway/authorize", {
      token: u.apiToken,
      body: { gateway_code: "gw.1" },
    });
    const now = cloud.clock.now();
    const fromObject = checkMachineTokenPayload(res.json, now);
    assert(fromObject.ok);
    assertEquals(fromObject.payload, res.json);
    assert(checkMachineTokenPayload(res.text, now).ok);

    const expired = checkMachineTokenPayload(res.json, now + MACHINE_TOKEN_LIFETIME_MS + 1000);
    assertEquals(expired, {
      ok: false,
      problems: [`expires_at: the token expired at ${res.json.expires_at}`],
    });
    const otherGateway = checkMachineTokenPayload(
      { ...res.json, gateway_id: crypto.randomUUID() },
      now,
    );
    assertEquals(otherGateway, { ok: false, problems: ["machine_token: sub is not gateway_id"] });
    const otherCode = checkMachineTokenPayload({ ...res.json, gateway_code: "gw-2" }, now);
    assertEquals(otherCode, {
      ok: false,
      problems: ["machine_token: gateway_code claim differs from gateway_code"],
    });
    const later = new Date(Date.parse(res.json.expires_at) + 86_400_000).toISOString();
    assertEquals(checkMachineTokenPayload({ ...res.json, expires_at: later }, now), {
      ok: false,
      problems: ["machine_token: exp claim differs from expires_at"],
    });
    const { abilities: _, ...withoutAbilities } = res.json;
    assert(checkMachineTokenPayload(withoutAbilities, now).ok, "abilities are optional");
    const claims = decodeTokenClaims(res.json.machine_token)!;
    assertEquals([claims.sub, claims.gateway_code, claims.aud], [
      res.json.gateway_id,
      "gw.1",
      "gateway-machine",
    ]);
  });
});

Deno.test("machine-token payload: malformed input lists every problem", () => {
  assertEquals(checkMachineTokenPayload("{nope"), { ok: false, problems: ["not valid JSON"] });
  assertEquals(checkMachineTokenPayload([1]), { ok: false, problems: ["must be a JSON object"] });
  const result = checkMachineTokenPayload({
    machine_token: "not a jwt",
    expires_at: "tomorrow",
    gateway_id: "123",
    gateway_code: "-bad",
    abilities: "all",
  });
  assertEquals(result, {
    ok: false,
    problems: [
      "machine_token: must be a compact JWT (three base64url parts)",
      "expires_at: must be an ISO 8601 timestamp",
      "gateway_id: must be a UUID",
      "gateway_code: must be 1-64 letters, digits, '.', '_' or '-'",
      "abilities: must be an array of strings",
    ],
  });
  assertEquals(decodeTokenClaims("a.b.c"), undefined);
  assertEquals(decodeTokenClaims("only-one-part"), undefined);
});
