/** Identity and tokens: passwords, user JWTs against the published JWKS, key rotation, API tokens, teams. */
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { assert, assertEquals, assertMatch, assertRejects } from "./assert.ts";
import {
  call,
  makeUser,
  startTestCloud,
  TEST_KEY_ENCRYPTION_KEY,
  withCloud,
} from "./cloud_harness.ts";
import { withEnv } from "./support/mod.ts";
import {
  DEV_KEY_FILE,
  hashPassword,
  needsRehash,
  PUBLISH_LEAD_MS,
  verifyPassword,
} from "../cloud/auth/mod.ts";
import { main } from "../cloud/main.ts";
import { USER_TOKEN_AUDIENCE } from "../shared/tokens.ts";

Deno.test("passwords: PBKDF2-SHA256 with the count in the hash, constant-time verify, rehash check", async () => {
  const hash = await hashPassword("correct horse battery", 1000);
  assertMatch(hash, /^pbkdf2-sha256\$1000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert(await verifyPassword("correct horse battery", hash));
  assert(!(await verifyPassword("correct horse batterY", hash)));
  assert(!(await verifyPassword("x", "garbage")));
  assert(hash !== await hashPassword("correct horse battery", 1000), "salted");
  assert(needsRehash(hash, 600_000));
  assert(!needsRehash(hash, 1000));
});

Deno.test("user tokens: RS256, verified against the published JWKS with the issuer pinned", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com", "Radiology");
    const discovery = (await call(cloud, "GET", "/.well-known/openid-configuration")).json;
    assertEquals(discovery.issuer, cloud.url);
    assertEquals(discovery.jwks_uri, `${cloud.url}/.well-known/jwks.json`);
    assertEquals(discovery.device_authorization_endpoint, `${cloud.url}/oauth/device/code`);
    assertEquals(discovery.token_endpoint, `${cloud.url}/oauth/token`);
    assertEquals(discovery.id_token_signing_alg_values_supported, ["RS256"]);
    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
    const { payload, protectedHeader } = await jwtVerify(u.userToken, jwks, {
      issuer: cloud.url,
      audience: USER_TOKEN_AUDIENCE,
      algorithms: ["RS256"],
    });
    assertEquals(protectedHeader.alg, "RS256");
    assert(typeof protectedHeader.kid === "string" && protectedHeader.kid.length > 0);
    assertEquals(payload.sub, u.user.id);
    assertEquals(payload.user, { id: u.user.id, email: "ada@example.com", name: "ada" });
    assertEquals(payload.team, { id: u.team.id, name: "Radiology" });
    assertEquals(payload.exp! - payload.iat!, 24 * 3600);
    await assertRejects(
      () =>
        jwtVerify(u.userToken, jwks, {
          issuer: "https://evil.example.com",
          audience: USER_TOKEN_AUDIENCE,
        }),
      /unexpected "iss" claim value/,
    );
    const me = await call(cloud, "GET", "/api/me", { token: u.userToken });
    assertEquals(me.status, 200);
    assertEquals(me.json.user.email, "ada@example.com");
    assertEquals(me.json.user.password_hash, undefined);
    assertEquals(me.json.team, { id: u.team.id, name: "Radiology", role: "owner" });
    assertEquals(me.json.credential, { kind: "user_token" });
    // A token signed by someone else's key with our kid is refused.
    const [h, p] = u.userToken.split(".");
    const forged = `${h}.${p}.${"A".repeat(342)}`;
    assertEquals((await call(cloud, "GET", "/api/me", { token: forged })).status, 401);
    cloud.clock.advance(24 * 3600 * 1000 + 1000);
    const expired = await call(cloud, "GET", "/api/me", { token: u.userToken });
    assertEquals([expired.status, expired.json.error.message], [401, "token expired"]);
  });
});

Deno.test("signing keys: rotation keeps old tokens valid, publishes both kids, prunes after retention", async () => {
  await withCloud(async (cloud) => {
    const s = cloud.server.services;
    const u = await makeUser(cloud, "ada@example.com");
    const oldKid = decodeProtectedHeader(u.userToken).kid!;
    // `cloud keys:rotate` against the same KV file, as an operator would run it beside the service.
    const rotated = await withEnv(
      { CLOUD_KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY },
      () => main(["keys:rotate", "--data-dir", cloud.dir]),
    );
    assertEquals(rotated, 0);
    cloud.clock.advance(61_000); // past the key cache of the running service
    // Published before it signs: verifiers that cache the key set learn the kid first.
    const published = (await call(cloud, "GET", "/.well-known/jwks.json")).json.keys
      .map((k: { kid: string }) => k.kid);
    assertEquals(published.length, 2);
    const newKid = published.find((k: string) => k !== oldKid);
    const early = await s.jwt.issueUserToken(u.user, u.team, 3600);
    assertEquals(decodeProtectedHeader(early.token).kid, oldKid, "the old key still signs");
    cloud.clock.advance(PUBLISH_LEAD_MS);
    const { token: fresh } = await s.jwt.issueUserToken(u.user, u.team, 3600);
    assertEquals(decodeProtectedHeader(fresh).kid, newKid, "the new key signs after the lead");
    const jwks = (await call(cloud, "GET", "/.well-known/jwks.json")).json;
    assertEquals(jwks.keys.map((k: { kid: string }) => k.kid).sort(), [oldKid, newKid].sort());
    for (const k of jwks.keys) {
      assertEquals([k.kty, k.alg, k.use, k.d], ["RSA", "RS256", "sig", undefined]);
    }
    const remote = createRemoteJWKSet(new URL(`${cloud.url}/.well-known/jwks.json`));
    for (const token of [u.userToken, fresh]) {
      await jwtVerify(token, remote, {
        issuer: cloud.url,
        audience: USER_TOKEN_AUDIENCE,
        currentDate: new Date(cloud.clock.now()),
      });
      assertEquals((await call(cloud, "GET", "/api/me", { token })).status, 200);
    }
    await s.keys.rotate(cloud.clock.now());
    const third = decodeProtectedHeader((await s.jwt.issueUserToken(u.user, u.team, 60)).token)
      .kid!;
    assertEquals((await s.keys.jwks()).keys.length, 3);
    // Retired keys stay published for the longest token lifetime (30 days) plus a day.
    cloud.clock.advance(31 * 24 * 3600 * 1000 + 1000);
    const removed = await s.keys.prune();
    assertEquals(removed.sort(), [oldKid, newKid].sort());
    assertEquals(
      (await call(cloud, "GET", "/.well-known/jwks.json")).json.keys.map((k: { kid: string }) =>
        k.kid
      ),
      [third],
    );
  });
});

Deno.test("API tokens: shown once, stored as a hash, listed with last use, revocable, expiring", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const created = await call(cloud, "POST", "/api/tokens", {
      token: u.userToken,
      body: { name: "ci", expires_in_days: 1 },
    });
    assertEquals(created.status, 201);
    assertMatch(created.json.token, /^gwc_[A-Za-z0-9_-]{43}$/);
    assertEquals(created.json.prefix, created.json.token.slice(0, 10));
    assertEquals(created.json.hash, undefined);
    assertEquals(created.headers.get("cache-control"), "no-store");
    const token = created.json.token as string;
    // Nothing in KV holds the token text.
    for await (const e of cloud.server.services.store.kv.list({ prefix: [] })) {
      assert(
        !JSON.stringify(e.value ?? null).includes(token.slice(4)),
        `token text found under ${String(e.key)}`,
      );
    }
    const me = await call(cloud, "GET", "/api/me", { token });
    assertEquals(me.json.credential.kind, "api_token");
    const listed = await call(cloud, "GET", "/api/tokens", { token: u.userToken });
    const entry = listed.json.items.find((t: { id: string }) => t.id === created.json.id);
    assert(entry.last_used_at !== null, "last use recorded");
    assertEquals(entry.token, undefined);
    const mint = await call(cloud, "POST", "/api/tokens", { token, body: { name: "nested" } });
    assertEquals([mint.status, mint.json.error.code], [403, "forbidden"]);
    const revoked = await call(cloud, "DELETE", `/api/tokens/${created.json.id}`, {
      token: u.userToken,
    });
    assertEquals(revoked.status, 200);
    assert(revoked.json.revoked_at !== null);
    const after = await call(cloud, "GET", "/api/me", { token });
    assertEquals([after.status, after.json.error.message], [401, "unknown or revoked API token"]);
    const audit = await call(cloud, "GET", "/api/audit?action=api_token.", { token: u.userToken });
    assertEquals(audit.json.items.map((e: { action: string }) => e.action), [
      "api_token.revoked",
      "api_token.created",
      "api_token.created",
    ]);
    // Expiry.
    const short = await call(cloud, "POST", "/api/tokens", {
      token: u.userToken,
      body: { name: "short", expires_in_days: 1 },
    });
    assertEquals((await call(cloud, "GET", "/api/me", { token: short.json.token })).status, 200);
    cloud.clock.advance(86_400_000 + 1000);
    const late = await call(cloud, "GET", "/api/me", { token: short.json.token });
    assertEquals([late.status, late.json.error.message], [401, "API token expired"]);
  });
});

Deno.test("teams: create, members, switching with a user token, API tokens bound to their team", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const grace = await makeUser(cloud, "grace@example.com", "Cardiology");
    const created = await call(cloud, "POST", "/api/teams", {
      token: ada.userToken,
      body: { name: "Research" },
    });
    assertEquals([created.status, created.json.name, created.json.role], [
      201,
      "Research",
      "owner",
    ]);
    const teams = await call(cloud, "GET", "/api/teams", { token: ada.userToken });
    assertEquals(teams.json.items.map((t: { name: string }) => t.name), ["Radiology", "Research"]);
    const add = await call(cloud, "POST", "/api/team/members", {
      token: ada.apiToken,
      body: { email: "grace@example.com" },
    });
    assertEquals([add.status, add.json.role], [200, "member"]);
    const members = await call(cloud, "GET", "/api/team/members", { token: grace.apiToken });
    assertEquals(members.json.items.length, 1, "grace's API token still acts in Cardiology");
    // Grace switches to Radiology with her user token and gets a token for it.
    const sw = await call(cloud, "PUT", "/api/me/current-team", {
      token: grace.userToken,
      body: { team_id: ada.team.id },
    });
    assertEquals([sw.status, sw.json.team.name, sw.json.team.role], [200, "Radiology", "member"]);
    const me = await call(cloud, "GET", "/api/me", { token: sw.json.access_token });
    assertEquals(me.json.team.name, "Radiology");
    assertEquals(me.json.user.current_team_id, ada.team.id);
    const viaApiToken = await call(cloud, "PUT", "/api/me/current-team", {
      token: grace.apiToken,
      body: { team_id: ada.team.id },
    });
    assertEquals(viaApiToken.status, 403);
    // A member may not manage members; a non-member team cannot be switched to.
    const notOwner = await call(cloud, "POST", "/api/team/members", {
      token: sw.json.access_token,
      body: { email: "ada@example.com" },
    });
    assertEquals(notOwner.status, 403);
    const stranger = await makeUser(cloud, "eve@example.com");
    const foreign = await call(cloud, "PUT", "/api/me/current-team", {
      token: stranger.userToken,
      body: { team_id: ada.team.id },
    });
    assertEquals(foreign.status, 404);
    // Removing grace ends her access to Radiology at once.
    const removed = await call(cloud, "DELETE", `/api/team/members/${grace.user.id}`, {
      token: ada.userToken,
    });
    assertEquals(removed.status, 204);
    assertEquals(
      (await call(cloud, "GET", "/api/me", { token: sw.json.access_token })).status,
      401,
    );
    const lastOwner = await call(cloud, "DELETE", `/api/team/members/${ada.user.id}`, {
      token: ada.userToken,
    });
    assertEquals([lastOwner.status, lastOwner.json.error.code], [409, "conflict"]);
  });
});

Deno.test("cloud user:create: makes a user and a team from the environment", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cloud-cli-" });
  try {
    Deno.env.set("CLOUD_USER_PASSWORD", "a long enough password");
    assertEquals(
      await main([
        "user:create",
        "--data-dir",
        dir,
        "--email",
        "Root@Example.com",
        "--team",
        "Ops",
      ]),
      0,
    );
    assertEquals(await main(["user:create", "--data-dir", dir, "--email", "root@example.com"]), 1);
    Deno.env.set("CLOUD_USER_PASSWORD", "short");
    assertEquals(await main(["user:create", "--data-dir", dir, "--email", "x@example.com"]), 2);
    const kv = await Deno.openKv(`${dir}/cloud.sqlite`);
    try {
      const id = (await kv.get<string>(["users_by_email", "root@example.com"])).value;
      const user = (await kv.get<{ password_hash: string; email: string }>(["users", id!])).value!;
      assertEquals(user.email, "root@example.com");
      assertMatch(user.password_hash, /^pbkdf2-sha256\$600000\$/);
    } finally {
      kv.close();
    }
  } finally {
    Deno.env.delete("CLOUD_USER_PASSWORD");
    await Deno.remove(dir, { recursive: true });
  }
});

/** Every string in the cloud's KV database file, as a backup would hold them. */
async function kvText(dir: string): Promise<string> {
  let text = "";
  for (const f of ["cloud.sqlite", "cloud.sqlite-wal"]) {
    text += await Deno.readFile(`${dir}/${f}`).then(
      (b) => new TextDecoder("latin1").decode(b),
      () => "",
    );
  }
  return text;
}

Deno.test("signing keys at rest: encrypted in KV, files 0600 and directory 0700; the wrong key or none refuses to start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cloud-keys-" });
  try {
    const cloud = await startTestCloud({ dataDir: dir, baseUrl: "https://cloud.example.com" });
    let privateD: string;
    try {
      // The private exponent, as the running service holds it in memory.
      const records = await cloud.server.services.store.signingKeys.all();
      assertEquals(records.length, 1);
      assertEquals(records[0].private_jwk, undefined, "no plain private JWK is stored");
      assertEquals(records[0].private_sealed?.alg, "A256GCM");
      const jwk = await cloud.server.services.keys.jwks();
      assertEquals((jwk.keys[0] as unknown as Record<string, unknown>).d, undefined);
      privateD = JSON.stringify(records[0]);
      const u = await makeUser(cloud, "ada@example.com");
      assertEquals((await call(cloud, "GET", "/api/me", { token: u.userToken })).status, 200);
    } finally {
      await cloud.stop();
    }
    const text = await kvText(dir);
    assert(!/"d"\s*:\s*"/.test(text), "no JWK private exponent in the database file");
    assert(text.includes("private_sealed") || text.length > 0);
    assert(privateD.length > 0);
    assertEquals((await Deno.stat(dir)).mode! & 0o777, 0o700);
    for (const f of ["cloud.sqlite", "cloud.sqlite-wal", "cloud.sqlite-shm"]) {
      const st = await Deno.stat(`${dir}/${f}`).catch(() => null);
      if (st) assertEquals(st.mode! & 0o777, 0o600, f);
    }

    // Outside development mode there is no start without the key, and none with another key.
    await assertRejects(
      () =>
        startTestCloud({
          dataDir: dir,
          baseUrl: "https://cloud.example.com",
          keyEncryptionKey: "",
        }),
      /CLOUD_KEY_ENCRYPTION_KEY is not set/,
    );
    const other = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    await assertRejects(
      () =>
        startTestCloud({
          dataDir: dir,
          baseUrl: "https://cloud.example.com",
          keyEncryptionKey: other,
        }),
      /is not the key it was stored with/,
    );
    await assertRejects(
      () =>
        startTestCloud({
          dataDir: dir,
          baseUrl: "https://cloud.example.com",
          keyEncryptionKey: "c2hvcnQ=",
        }),
      /must be the base64 of 32 bytes/,
    );
    // The same key starts it again.
    const again = await startTestCloud({ dataDir: dir, baseUrl: "https://cloud.example.com" });
    await again.stop();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("signing keys at rest: development mode (loopback base URL) generates a key file 0600; an old plain key is encrypted at start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cloud-dev-" });
  try {
    const dev = await startTestCloud({ dataDir: dir, keyEncryptionKey: "" });
    await dev.stop();
    assertEquals((await Deno.stat(`${dir}/${DEV_KEY_FILE}`)).mode! & 0o777, 0o600);

    // A record as an older release stored it: the private JWK in plain text.
    const kv = await Deno.openKv(`${dir}/cloud.sqlite`);
    const { generateKeyPair, exportJWK } = await import("jose");
    const pair = await generateKeyPair("RS256", { extractable: true });
    await kv.set(["signing_keys", "legacy-kid"], {
      kid: "legacy-kid",
      alg: "RS256",
      public_jwk: await exportJWK(pair.publicKey),
      private_jwk: await exportJWK(pair.privateKey),
      created_at: new Date().toISOString(),
      retired_at: new Date().toISOString(),
      remove_after: new Date(Date.now() + 86_400_000).toISOString(),
    });
    kv.close();
    const again = await startTestCloud({ dataDir: dir, keyEncryptionKey: "" });
    try {
      const legacy = (await again.server.services.store.signingKeys.all())
        .find((k) => k.kid === "legacy-kid");
      assertEquals(legacy?.private_jwk, undefined, "migrated: the plain JWK is gone");
      assertEquals(legacy?.private_sealed?.alg, "A256GCM");
    } finally {
      await again.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
