/**
 * JwtAuthMiddleware's memory of verified tokens: a remembered token is reused only until it
 * expires, and its scopes are still checked on every request.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { Logger } from "../../../shared/mod.ts";
import { Body, RequestEnvelope } from "../../envelope.ts";
import { localKeys } from "./jwks.ts";
import { JwtAuthMiddleware } from "./jwt_auth.ts";
import { ManualClock } from "../../../shared/clock.ts";

function request(token: string): RequestEnvelope {
  return new RequestEnvelope({
    id: "t",
    protocol: "http",
    method: "GET",
    path: "/x",
    endpoint: "api",
    headers: new Headers({ authorization: `Bearer ${token}` }),
    body: Body.empty(),
  });
}

Deno.test("jwt_auth: a remembered token expires when the token does; scopes are checked each time", async () => {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const keys = localKeys(
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "k" }] }),
    "k",
  );
  const options = {
    issuer: "https://i",
    audience: ["a"],
    algorithms: ["ES256"],
    clock_skew_secs: 0,
    required_scopes: [] as string[],
    required_claims: [],
    realm: "gateway",
    forward_credentials: false,
  };
  const logger = new Logger({ level: "error", format: "json", sink: () => {} });
  // On a manual clock: the token's expiry comes by advancing it, not by waiting.
  const clock = new ManualClock();
  const mw = new JwtAuthMiddleware("auth", keys, options, logger, undefined, clock);
  const now = Math.floor(clock.now() / 1000);
  const token = await new SignJWT({
    sub: "ada",
    scope: "read",
    iss: "https://i",
    aud: "a",
    exp: now + 60,
  })
    .setProtectedHeader({ alg: "ES256", kid: "k" }).sign(privateKey);
  const req = request(token);
  await mw.onRequest(req);
  assertEquals(req.metadata["auth.subject"], "ada");
  await mw.onRequest(request(token)); // remembered

  const strict = new JwtAuthMiddleware(
    "strict",
    keys,
    { ...options, required_scopes: ["write"] },
    logger,
  );
  await strict.onRequest(request(token)).catch(() => {});
  await assertRejects(() => strict.onRequest(request(token)), /lacks the scope write/);

  await clock.advance((now + 60) * 1000 - clock.now() + 50);
  await assertRejects(() => mw.onRequest(request(token)), /not valid: expired/);
});
