import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { CliError, EXIT } from "./errors.ts";
import { HttpClient } from "./http.ts";
import { Output } from "./output.ts";
import { describeTeam, describeUser, verifyUserToken } from "./user_token.ts";

const ISSUER = "https://cloud.example";

async function cloudKeys() {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  return { privateKey, jwk };
}

function fakeCloud(jwk: unknown, issuer = ISSUER) {
  const fetchFn = (input: string | URL | Request) => {
    const url = String(input);
    if (url === `${ISSUER}/.well-known/openid-configuration`) {
      return Promise.resolve(Response.json({
        issuer,
        jwks_uri: `${ISSUER}/.well-known/jwks.json`,
        device_authorization_endpoint: `${ISSUER}/oauth/device/code`,
        token_endpoint: `${ISSUER}/oauth/token`,
      }));
    }
    if (url === `${ISSUER}/.well-known/jwks.json`) {
      return Promise.resolve(Response.json({ keys: [jwk] }));
    }
    return Promise.resolve(new Response("no", { status: 404 }));
  };
  return new HttpClient(new Output({ stdout: () => {}, stderr: () => {} }), fetchFn);
}

function userToken(key: CryptoKey, options: { aud?: string; kid?: string } = {}) {
  return new SignJWT({
    token_use: "user",
    user: { id: "u1", email: "ada@example.com", name: "Ada" },
    team: { id: "t1", name: "Radiology" },
  })
    .setProtectedHeader({ alg: "RS256", kid: options.kid ?? "k1" })
    .setIssuer(ISSUER)
    .setAudience(options.aud ?? "gateway-cloud-api")
    .setSubject("u1")
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
}

const authFailure = (pattern: RegExp) => (e: unknown) =>
  e instanceof CliError && e.exitCode === EXIT.auth && pattern.test(e.message);

Deno.test("user token: RS256 with the JWKS, issuer and audience pinned; claims read", async () => {
  const { privateKey, jwk } = await cloudKeys();
  const v = await verifyUserToken(fakeCloud(jwk), ISSUER, await userToken(privateKey));
  assert.equal(v.issuer, ISSUER);
  assert.equal(v.subject, "u1");
  assert.deepEqual(v.audience, ["gateway-cloud-api"]);
  assert.equal(describeUser(v), "Ada <ada@example.com>");
  assert.equal(describeTeam(v), "Radiology");
  assert(v.expiresAt.getTime() > Date.now());
});

Deno.test("user token: expired, foreign audience, unknown key, other signer, HS256 are refused", async () => {
  const { privateKey, jwk } = await cloudKeys();
  const http = fakeCloud(jwk);
  const expired = await userToken(privateKey);
  await assert.rejects(
    () => verifyUserToken(http, ISSUER, expired, new Date(Date.now() + 2 * 3600_000)),
    authFailure(/the token expired at \d{4}-/),
  );
  await assert.rejects(
    async () =>
      verifyUserToken(http, ISSUER, await userToken(privateKey, { aud: "gateway-machine" })),
    authFailure(/aud claim is not accepted/),
  );
  await assert.rejects(
    async () => verifyUserToken(http, ISSUER, await userToken(privateKey, { kid: "k2" })),
    authFailure(/signed by a key that the cloud service does not publish/),
  );
  const stranger = await generateKeyPair("RS256");
  await assert.rejects(
    async () => verifyUserToken(http, ISSUER, await userToken(stranger.privateKey)),
    authFailure(/signature does not verify/),
  );
  const hs = await new SignJWT({}).setProtectedHeader({ alg: "HS256", kid: "k1" }).setIssuer(ISSUER)
    .setAudience("gateway-cloud-api").setSubject("u1").setExpirationTime("1h")
    .sign(new TextEncoder().encode("x".repeat(32)));
  await assert.rejects(
    () => verifyUserToken(http, ISSUER, hs),
    authFailure(/not signed with RS256/),
  );
  await assert.rejects(
    () => verifyUserToken(http, ISSUER, "not-a-jwt"),
    authFailure(/not a valid JWT/),
  );
});

Deno.test("user token: the discovery issuer must be the configured api-url", async () => {
  const { jwk } = await cloudKeys();
  const http = fakeCloud(jwk, "https://other.example");
  await assert.rejects(
    () => verifyUserToken(http, ISSUER, "x.y.z"),
    (e: unknown) =>
      e instanceof CliError && /says its issuer is https:\/\/other\.example/.test(e.message) &&
      /config:set api-url https:\/\/other\.example/.test(e.hint ?? ""),
  );
});
