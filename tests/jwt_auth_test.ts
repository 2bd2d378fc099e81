/**
 * `jwt_auth` end to end: access tokens from oidc-provider (an OAuth 2.0 / OpenID Connect server
 * nobody here wrote) verified through its JWKS URL, and tokens signed by jose against a JWKS file;
 * forged, expired, wrong-audience, `alg: none` and HS256-with-the-public-key tokens refused; a JWKS
 * URL that hangs or answers garbage costs bounded time and the gateway keeps serving.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import {
  freePort,
  removeDir,
  REPO_ROOT,
  requirePeer,
  runCommand,
  spawnCaptured,
} from "./support/mod.ts";
// Not through support/mod.ts: only these tests load the provider (and its dependencies).
import { startOidcProvider } from "./support/oidc.ts";
import { makeUser, startTestCloud } from "./cloud_harness.ts";
import { USER_TOKEN_AUDIENCE } from "../shared/mod.ts";

const AUDIENCE = "https://gateway.example/fhir";

function pipeline(options: string): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[endpoints.open]
service = "http"
[endpoints.open.options]
path_prefix = "/open"

[middleware.auth]
type = "jwt_auth"
[middleware.auth.options]
${options}

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["auth"]
backends = ["echo"]

[pipelines.open]
endpoints = ["open"]
backends = ["echo"]
`;
}

async function get(url: string, token?: string, raw?: string) {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (raw !== undefined) headers.authorization = raw;
  const res = await fetch(url, { headers });
  const body = await res.json();
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body };
}

Deno.test("jwt_auth: oidc-provider's access tokens through its JWKS URL; scopes, audience, forgeries", async () => {
  const op = await startOidcProvider({ audience: AUDIENCE, scopes: ["lab.orders", "lab.read"] });
  const gw = await startTestGateway(pipeline(
    `jwks_url = "${op.jwksUrl}"\nissuer = "${op.issuer}"\naudience = ["${AUDIENCE}"]\n` +
      `required_scopes = ["lab.orders"]\nrealm = "fhir"`,
  ));
  try {
    const url = `${gw.url}/api/Observation`;
    const none = await get(url);
    assertEquals([none.status, none.body.error.code], [401, "missing_credentials"]);
    assertEquals(none.challenge, 'Bearer realm="fhir"');

    const token = await op.token("lab.orders lab.read");
    const ok = await get(url, token);
    assertEquals(ok.status, 200, JSON.stringify(ok.body));
    assertEquals(ok.body.metadata["auth.method"], "jwt_auth");
    assertEquals(ok.body.metadata["auth.subject"], "lab");
    assertEquals(ok.body.metadata["auth.client_id"], "lab");
    assertEquals(ok.body.metadata["auth.scopes"], "lab.orders lab.read");
    assertEquals(ok.body.headers.authorization, undefined);

    const narrow = await get(url, await op.token("lab.read"));
    assertEquals([narrow.status, narrow.body.error.code], [403, "insufficient_scope"]);
    assertEquals(
      narrow.challenge,
      'Bearer realm="fhir", error="insufficient_scope", scope="lab.orders"',
    );

    // A changed payload (other scopes) with the original signature.
    const [h, p, s] = token.split(".");
    const payload = JSON.parse(atob(p.replaceAll("-", "+").replaceAll("_", "/")));
    const forgedPayload = btoa(JSON.stringify({ ...payload, sub: "admin" })).replaceAll("=", "")
      .replaceAll("+", "-").replaceAll("/", "_");
    const forged = await get(url, `${h}.${forgedPayload}.${s}`);
    assertEquals([forged.status, forged.body.error.code], [401, "invalid_token"]);
    assertMatch(
      forged.challenge!,
      /error="invalid_token", error_description="the signature does not verify"/,
    );
    // alg none, and HS256 keyed with the issuer's public key.
    const b64 = (v: unknown) =>
      btoa(JSON.stringify(v)).replaceAll("=", "").replaceAll("+", "-").replaceAll("/", "_");
    const unsigned = await get(url, `${b64({ alg: "none", typ: "JWT" })}.${p}.`);
    assertEquals(unsigned.status, 401);
    const jwks = await (await fetch(op.jwksUrl)).json();
    const hs = await new SignJWT(payload).setProtectedHeader({ alg: "HS256", kid: "provider-1" })
      .sign(new TextEncoder().encode(JSON.stringify(jwks.keys[0])));
    const confused = await get(url, hs);
    assertEquals([confused.status, confused.body.error.message], [
      401,
      "the bearer token is not valid: signed with an algorithm not allowed here",
    ]);
    const huge = await get(url, undefined, `Bearer ${"a".repeat(20_000)}`);
    assertEquals([huge.status, huge.body.error.code], [400, "invalid_request"]);
    assert(!gw.logs.join("\n").includes(token), "tokens are never logged");
  } finally {
    await gw.stop();
    await op.stop();
  }

  // The same tokens for another audience are refused.
  const other = await startOidcProvider({
    audience: "https://elsewhere.example",
    scopes: ["lab.orders"],
  });
  const gw2 = await startTestGateway(pipeline(
    `jwks_url = "${other.jwksUrl}"\nissuer = "${other.issuer}"\naudience = ["${AUDIENCE}"]`,
  ));
  try {
    const r = await get(`${gw2.url}/api/x`, await other.token("lab.orders"));
    assertEquals(r.status, 401);
    assertEquals(r.body.error.message, "the bearer token is not valid: claim aud does not match");
  } finally {
    await gw2.stop();
    await other.stop();
  }
});

Deno.test("jwt_auth: a JWKS file; ES256 and EdDSA accepted, expired, early and wrong-issuer tokens refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-jwt-" });
  const es = await generateKeyPair("ES256", { extractable: true });
  const ed = await generateKeyPair("EdDSA", { extractable: true });
  const stranger = await generateKeyPair("ES256");
  const keys = [
    { ...(await exportJWK(es.publicKey)), kid: "es", alg: "ES256" },
    { ...(await exportJWK(ed.publicKey)), kid: "ed", alg: "EdDSA" },
  ];
  await Deno.writeTextFile(`${dir}/keys.json`, JSON.stringify({ keys }));
  const gw = await startTestGateway(
    pipeline(
      `jwks_path = "keys.json"\nissuer = "https://issuer.example"\naudience = ["${AUDIENCE}"]\n` +
        `algorithms = ["ES256", "EdDSA"]\nrequired_claims = ["sub"]\nclock_skew_secs = 5`,
    ),
    { dir },
  );
  const now = Math.floor(Date.now() / 1000);
  const mint = (key: CryptoKey, alg: string, kid: string, claims: Record<string, unknown> = {}) =>
    new SignJWT({
      sub: "ada",
      scp: ["read"],
      iss: "https://issuer.example",
      aud: AUDIENCE,
      iat: now,
      exp: now + 60,
      ...claims,
    }).setProtectedHeader({ alg, kid }).sign(key);
  try {
    const url = `${gw.url}/api/Patient`;
    for (
      const token of [
        await mint(es.privateKey, "ES256", "es"),
        await mint(ed.privateKey, "EdDSA", "ed"),
      ]
    ) {
      const ok = await get(url, token);
      assertEquals([
        ok.status,
        ok.body.metadata?.["auth.subject"],
        ok.body.metadata?.["auth.scopes"],
      ], [200, "ada", "read"]);
    }
    const refusals: [string, string][] = [
      [await mint(es.privateKey, "ES256", "es", { exp: now - 30 }), "expired"],
      [await mint(es.privateKey, "ES256", "es", { nbf: now + 600 }), "claim nbf does not match"],
      [
        await mint(es.privateKey, "ES256", "es", { iss: "https://evil.example" }),
        "claim iss does not match",
      ],
      [await mint(es.privateKey, "ES256", "es", { sub: undefined }), "claim sub is missing"],
      [await mint(stranger.privateKey, "ES256", "es"), "the signature does not verify"],
      [
        await mint(stranger.privateKey, "ES256", "other"),
        "signed by a key the issuer does not publish",
      ],
    ];
    for (const [token, reason] of refusals) {
      const r = await get(url, token);
      assertEquals([r.status, r.body.error.message], [
        401,
        `the bearer token is not valid: ${reason}`,
      ]);
    }
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("jwt_auth: a JWKS URL that hangs or answers garbage costs bounded time; the gateway keeps serving", async () => {
  // One listener that never answers, one that answers nonsense.
  const hangPort = freePort();
  const hanging = Deno.listen({ hostname: "127.0.0.1", port: hangPort });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of hanging) held.push(c);
  })().catch(() => {});
  const garbage = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("<html>not a key set</html>", { headers: { "content-type": "text/html" } }),
  );
  const { privateKey } = await generateKeyPair("ES256");
  const token = await new SignJWT({ sub: "ada" }).setProtectedHeader({ alg: "ES256", kid: "k" })
    .setIssuer("https://issuer.example").setAudience(AUDIENCE).setExpirationTime("1m").sign(
      privateKey,
    );
  try {
    for (
      const jwks of [
        `http://127.0.0.1:${hangPort}/jwks`,
        `http://127.0.0.1:${garbage.addr.port}/jwks`,
      ]
    ) {
      const gw = await startTestGateway(pipeline(
        `jwks_url = "${jwks}"\nissuer = "https://issuer.example"\naudience = ["${AUDIENCE}"]\nalgorithms = ["ES256"]`,
      ));
      try {
        const pending = get(`${gw.url}/api/x`, token);
        // Meanwhile a pipeline without authentication answers at once.
        const open = await fetch(`${gw.url}/open/ping`);
        assertEquals(open.status, 200);
        await open.body?.cancel();
        // The hanging server never answers: an answer at all is the fetch's time bound at work.
        const r = await pending;
        assertEquals([r.status, r.body.error.code], [503, "jwks_unavailable"], jwks);
      } finally {
        await gw.stop();
      }
    }
  } finally {
    hanging.close();
    for (const c of held) c.close();
    await garbage.shutdown();
  }
});

Deno.test("jwt_auth smart: SMART scopes from oidc-provider, the patient compartment on requests and answers", async () => {
  const op = await startOidcProvider({
    audience: AUDIENCE,
    scopes: ["patient/Observation.rs", "patient/Patient.read", "user/Encounter.read"],
    claims: { patient: "123" },
  });
  // The FHIR server behind the gateway: observations of two patients.
  const resources: Record<string, unknown> = {
    "/Observation/mine": {
      resourceType: "Observation",
      id: "mine",
      subject: { reference: "Patient/123" },
    },
    "/Observation/theirs": {
      resourceType: "Observation",
      id: "theirs",
      subject: { reference: "Patient/999" },
    },
    "/Patient/123": { resourceType: "Patient", id: "123" },
  };
  const fhirServer = startUpstream((req) => {
    const path = new URL(req.url).pathname;
    const found = resources[path] ?? { resourceType: "Bundle", type: "searchset", entry: [] };
    return Response.json(found, { headers: { "content-type": "application/fhir+json" } });
  });
  const gw = await startTestGateway(`
[endpoints.fhir]
service = "fhir"
[endpoints.fhir.options]
path_prefix = "/fhir"

[middleware.smart]
type = "jwt_auth"
[middleware.smart.options]
jwks_url = "${op.jwksUrl}"
issuer = "${op.issuer}"
audience = ["${AUDIENCE}"]
smart = true

[backends.server]
service = "fhir"
[backends.server.options]
base_url = "${fhirServer.url}"

[pipelines.fhir]
endpoints = ["fhir"]
middleware = ["smart"]
backends = ["server"]
`);
  try {
    const base = `${gw.url}/fhir`;
    const token = await op.token("patient/Observation.rs patient/Patient.read");
    const status = async (path: string, t = token, method = "GET") => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${t}` },
      });
      const body = await res.json();
      return { status: res.status, body };
    };
    assertEquals((await status("/Patient/123")).status, 200);
    assertEquals((await status("/Observation?patient=123")).status, 200);
    assertEquals((await status("/Observation/mine")).status, 200);
    const theirs = await status("/Observation/theirs");
    assertEquals(theirs.status, 403);
    assertEquals(theirs.body.resourceType, "OperationOutcome");
    assertMatch(theirs.body.issue[0].diagnostics, /refers to a patient other than Patient\/123/);
    for (
      const [path, why] of [
        ["/Patient/999", /not Patient\/999/],
        ["/Observation?code=1234-5", /must name the patient/],
        ["/Encounter/1", /no scope grants read on Encounter/],
      ] as const
    ) {
      const r = await status(path);
      assertEquals(r.status, 403, path);
      assertMatch(r.body.issue[0].diagnostics, why);
    }
    const create = await fetch(`${base}/Observation`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/fhir+json" },
      body: JSON.stringify(resources["/Observation/mine"]),
    });
    assertEquals(create.status, 403);
    assertMatch(
      (await create.json()).issue[0].diagnostics,
      /no scope grants create on Observation/,
    );
    // The server never saw the refused requests.
    const seen = fhirServer.received.map((r) => new URL(r.url).pathname + new URL(r.url).search);
    assert(!seen.some((p) => p.startsWith("/Patient/999") || p.includes("code=")), seen.join(" "));
  } finally {
    await gw.stop();
    await fhirServer.stop();
    await op.stop();
  }
});

Deno.test("jwt_auth: the project's cloud as the issuer; its user tokens pass, its machine tokens do not", async () => {
  const cloud = await startTestCloud();
  try {
    const alice = await makeUser(cloud, "alice@hospital.example");
    const gw = await startTestGateway(pipeline(
      `jwks_url = "${cloud.url}/.well-known/jwks.json"\nissuer = "${cloud.baseUrl}"\n` +
        `audience = ["${USER_TOKEN_AUDIENCE}"]\nrequired_claims = ["team"]`,
    ));
    try {
      const ok = await get(`${gw.url}/api/x`, alice.userToken);
      assertEquals(ok.status, 200, JSON.stringify(ok.body));
      assertEquals(ok.body.metadata["auth.subject"], alice.user.id);
      // A machine token from the same cloud is for gateways, not for this audience.
      const machine = await cloud.server.services.jwt.issueMachineToken({
        jti: crypto.randomUUID(),
        gatewayId: "gw-1",
        gatewayCode: "edge",
        teamId: alice.team.id,
        abilities: [],
        expiresAt: Date.now() + 60_000,
      });
      const refused = await get(`${gw.url}/api/x`, machine);
      assertEquals([refused.status, refused.body.error.code], [401, "invalid_token"]);
      // The cloud's API tokens are opaque, not JWTs.
      const opaque = await get(`${gw.url}/api/x`, alice.apiToken);
      assertEquals([opaque.status, opaque.body.error.code], [401, "invalid_token"]);
    } finally {
      await gw.stop();
    }
  } finally {
    await cloud.stop();
  }
});

/** The fenced blocks of `lang` between the `name` markers of `doc`. */
function docBlocks(doc: string, name: string, lang: string): string[] {
  const region = doc.match(
    new RegExp(`<!-- ${name}:begin[^\\n]*-->([\\s\\S]*?)<!-- ${name}:end -->`),
  );
  assert(region, `markers of ${name} missing`);
  return [...region[1].matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) =>
    m[1]
  );
}

Deno.test({
  name:
    "docs/security.md: oidc-provider configured as written issues JWT access tokens jwt_auth accepts",
  ignore: !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const doc = await Deno.readTextFile(`${REPO_ROOT}/docs/security.md`);
    const [program] = docBlocks(doc, "oidc-jwt", "ts");
    const [request] = docBlocks(doc, "oidc-jwt", "sh");
    const [toml] = docBlocks(doc, "oidc-jwt", "toml");
    // The documented port, moved to a free one everywhere it appears.
    const port = String(freePort());
    const moved = (text: string) => {
      assert(text.includes("3000"), text);
      return text.replaceAll("3000", port);
    };
    const dir = await Deno.makeTempDir({ prefix: "gw-oidc-doc-" });
    await Deno.writeTextFile(`${dir}/issuer.ts`, moved(program));
    const { promise: listening, resolve } = Promise.withResolvers<void>();
    let out = "";
    const issuer = spawnCaptured(Deno.execPath(), [
      "run",
      "-A",
      `--config=${REPO_ROOT}/deno.json`,
      `${dir}/issuer.ts`,
    ], {
      onStdout: (chunk) => {
        out += new TextDecoder().decode(chunk);
        if (out.includes("listening")) resolve();
      },
    });
    const options = moved(toml).split("[middleware.oauth.options]\n")[1];
    const gw = await startTestGateway(pipeline(options));
    try {
      const exited = issuer.child.status.then((st) => {
        throw new Error(`the issuer exited (${st.code})\n${issuer.output()}`);
      });
      await Promise.race([listening, exited]);
      const r = await runCommand("sh", ["-c", moved(request)], { timeoutMs: 30_000 });
      assertEquals(r.code, 0, r.stderr);
      const token = JSON.parse(r.stdout).access_token as string;
      // A JWT for the gateway, not an opaque token.
      const claims = JSON.parse(
        atob(token.split(".")[1].replaceAll("-", "+").replaceAll("_", "/")),
      );
      assertEquals([claims.aud, claims.client_id, claims.scope], [
        "https://gateway.example.org/fhir",
        "lab-system",
        "lab.orders lab.read",
      ]);
      const ok = await get(`${gw.url}/api/Observation`, token);
      assertEquals(ok.status, 200, JSON.stringify(ok.body));
      assertEquals(ok.body.metadata["auth.subject"], "lab-system");
      assertEquals(ok.body.metadata["auth.scopes"], "lab.orders lab.read");
      // What oidc-provider issues without the resource settings: refused.
      const opaque = await get(`${gw.url}/api/Observation`, "Y2hhbmdlLW1lLWNoYW5nZS1tZQ");
      assertEquals([opaque.status, opaque.body.error.code], [401, "invalid_token"]);
    } finally {
      await gw.stop();
      await issuer.stop();
      await removeDir(dir);
    }
  },
});
