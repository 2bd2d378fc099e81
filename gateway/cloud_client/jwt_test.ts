import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { CloudClient } from "./client.ts";
import { fakeCloudFetch } from "../../tests/support/fake_cloud.ts";
import { TokenRejectedError, TokenVerifier } from "./jwt.ts";

const ISSUER = "https://cloud.example.com";

async function setup() {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  const { fetch, calls } = fakeCloudFetch({
    "GET /.well-known/jwks.json": () => Response.json({ keys: [jwk] }),
  });
  const verifier = new TokenVerifier(new CloudClient(ISSUER, fetch), ISSUER, {
    now: () => Date.now(),
  });
  const sign = (
    claims: Record<string, unknown>,
    opts: { iss?: string; aud?: string; exp?: number; kid?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: opts.kid ?? "k1" })
      .setIssuer(opts.iss ?? ISSUER)
      .setAudience(opts.aud ?? "gateway-machine")
      .setSubject("gw-1")
      .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 3600)
      .sign(privateKey);
  return { verifier, sign, calls };
}

async function reason(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e) => e);
  assert.ok(err instanceof TokenRejectedError, String(err));
  return err.message;
}

Deno.test("TokenVerifier.machineToken: signature, pinned issuer, audience, expiry and token_use", async () => {
  const { verifier, sign, calls } = await setup();
  const good = await sign({ token_use: "machine" });
  assert.equal((await verifier.machineToken(good)).sub, "gw-1");
  assert.match(
    await reason(
      verifier.machineToken(await sign({ token_use: "machine" }, { iss: "https://evil.example" })),
    ),
    /not issued by the configured cloud service https:\/\/cloud.example.com/,
  );
  assert.match(
    await reason(verifier.machineToken(await sign({ token_use: "machine" }, { aud: "other" }))),
    /another audience/,
  );
  assert.match(
    await reason(verifier.machineToken(await sign({ token_use: "machine" }, { exp: 1000 }))),
    /expired/,
  );
  assert.match(
    await reason(verifier.machineToken(await sign({ token_use: "user" }))),
    /not a machine token/,
  );
  const [h, p] = good.split(".");
  const other = await sign({ token_use: "machine", x: 1 });
  assert.match(
    await reason(verifier.machineToken(`${h}.${p}.${other.split(".")[2]}`)),
    /signature does not verify/,
  );
  assert.match(
    await reason(verifier.machineToken(await sign({ token_use: "machine" }, { kid: "k2" }))),
    /a key the cloud service does not publish/,
  );
  assert.deepEqual(calls, ["GET /.well-known/jwks.json"], "the key set is fetched once and cached");
});

Deno.test("TokenVerifier.userToken: RS256 with the JWKS; HS256 only with the shared secret", async () => {
  const { verifier, sign } = await setup();
  const rs = await sign({ token_use: "user" }, { aud: "gateway-cloud-api" });
  assert.equal((await verifier.userToken(rs, undefined)).sub, "gw-1");
  const secret = "s".repeat(40);
  const hs = (key: string, claims: Record<string, unknown> = {}, iss = ISSUER) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(iss)
      .setAudience("gateway-cloud-api")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(key));
  assert.match(
    await reason(verifier.userToken(await hs(secret), undefined)),
    /needs GATEWAY_JWT_SECRET/,
  );
  assert.ok(await verifier.userToken(await hs(secret), secret));
  assert.match(await reason(verifier.userToken(await hs("x".repeat(40)), secret)), /signature/);
  assert.match(
    await reason(verifier.userToken(await hs(secret, {}, "https://evil.example"), secret)),
    /not issued by/,
  );
  assert.match(
    await reason(verifier.userToken(await hs(secret, { token_use: "machine" }), secret)),
    /not a user token/,
  );
  const noExp = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setIssuer(ISSUER)
    .setAudience("gateway-cloud-api").sign(new TextEncoder().encode(secret));
  assert.match(await reason(verifier.userToken(noExp, secret)), /exp/);
  assert.match(await reason(verifier.userToken("a.b", secret)), /not a JWT/);
  const none = `${btoa(JSON.stringify({ alg: "none" }))}.${btoa("{}")}.`;
  assert.match(await reason(verifier.userToken(none, secret)), /algorithm none is not accepted/);
  assert.match(
    await reason(verifier.userToken(await sign({ token_use: "user" }), undefined)),
    /another audience/,
    "a machine-audience token is no user token",
  );
});
