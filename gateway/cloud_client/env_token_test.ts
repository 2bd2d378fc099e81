import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { checkMachineTokenPayload, MACHINE_TOKEN_AUDIENCE } from "../../shared/mod.ts";
import { EXPECTED_ENV_TOKEN, readEnvToken } from "./env_token.ts";

const GATEWAY_ID = "01a20204-f245-7f12-973d-74e536af7f94";
const EXP = Math.floor(Date.parse("2099-01-02T03:04:05Z") / 1000);

/** A JWT with `claims` (the signature is not checked here: the cloud checks it later). */
function jwt(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256" })
    .sign(new TextEncoder().encode("x".repeat(32)));
}

const MACHINE_CLAIMS = {
  iss: "https://cloud.example.org",
  aud: MACHINE_TOKEN_AUDIENCE,
  sub: GATEWAY_ID,
  exp: EXP,
  gateway_code: "edge-berlin-1",
  abilities: ["config:read", "status:write"],
};

Deno.test("readEnvToken: the JSON payload is passed on as it is", async () => {
  const payload = {
    machine_token: await jwt(MACHINE_CLAIMS),
    expires_at: new Date(EXP * 1000).toISOString(),
    gateway_id: GATEWAY_ID,
    gateway_code: "edge-berlin-1",
  };
  assert.deepEqual(readEnvToken(` ${JSON.stringify(payload)}\n`), { ok: true, value: payload });
});

Deno.test("readEnvToken: a bare machine token (token:get --raw) becomes its payload", async () => {
  const token = await jwt(MACHINE_CLAIMS);
  const expected = {
    machine_token: token,
    expires_at: "2099-01-02T03:04:05.000Z",
    gateway_id: GATEWAY_ID,
    gateway_code: "edge-berlin-1",
    abilities: ["config:read", "status:write"],
  };
  for (const text of [token, `${token}\n`, JSON.stringify(token)]) {
    const read = readEnvToken(text);
    assert.deepEqual(read, { ok: true, value: expected });
    // The payload it became passes the shared checks (exp, sub and gateway_code agree).
    assert.equal(checkMachineTokenPayload(read.ok && read.value).ok, true);
  }
});

Deno.test("readEnvToken: anything else says what is expected, never quoting the value", async () => {
  const userToken = await jwt({ iss: "https://login.example.org", sub: "ada", exp: EXP });
  const cases: [string, string][] = [
    [userToken, "a JWT without gateway_code in its claims, so not a machine token"],
    [await jwt({ aud: "x" }), "a JWT without exp, sub (the gateway id), gateway_code"],
    ["{machine_token: eyJhbGciOi", "not valid JSON"],
    ["gwc_0123456789abcdef", "neither JSON nor a JWT"],
    ['["a"]', "not a JSON object"],
  ];
  for (const [text, start] of cases) {
    const read = readEnvToken(text);
    assert.equal(read.ok, false, text);
    const problem = read.ok ? "" : read.problems.join("; ");
    assert.ok(problem.startsWith(start), problem);
    assert.ok(problem.endsWith(EXPECTED_ENV_TOKEN), problem);
    assert.ok(!problem.includes(text.slice(0, 12)), `${problem} quotes the value`);
  }
  assert.match(EXPECTED_ENV_TOKEN, /"machine_token".*"expires_at".*"gateway_id".*"gateway_code"/);
});
