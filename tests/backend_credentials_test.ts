/**
 * Outbound credentials of the HTTP-family backends against servers nobody here wrote:
 * oidc-provider issues client-credentials tokens to the gateway (client_secret_basic,
 * client_secret_post, and private_key_jwt as SMART Backend Services do), the upstream verifies them
 * against the provider's JWKS; tokens are shared by concurrent requests, renewed past their short
 * lifetime, and dropped on a 401; a token endpoint that is down, slow or answers garbage gives a
 * 502 `backend_auth_failed` in bounded time while other pipelines keep serving. Static bearer
 * (from a file that changes), Basic and header credentials; literal secrets are refused by the
 * cloud's check.
 */
import { createRemoteJWKSet, exportJWK, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { startOidcProvider } from "./support/oidc.ts";
import { withEnv } from "./support/mod.ts";
import {
  literalSecretPaths,
  validateConfigText,
  writeConfigToml,
} from "../shared/gateway_config/mod.ts";

const RESOURCE = "https://fhir.hospital.example";

function pipeline(name: string, backendOptions: string, service = "http"): string {
  return `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[backends.${name}]
service = "${service}"
retries = 0
timeout_secs = 5
[backends.${name}.options]
${backendOptions}
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["${name}"]
`;
}

/** An upstream that accepts only the provider's tokens for RESOURCE, and says whose they are. */
function resourceServer(jwksUrl: string, issuer: string, refuseFirst = false) {
  const jwks = createRemoteJWKSet(new URL(jwksUrl));
  const seen: string[] = [];
  let refused = !refuseFirst;
  const server = startUpstream(async (req) => {
    const token = req.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
    seen.push(token);
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer, audience: RESOURCE });
      if (!refused) {
        refused = true;
        return Response.json({ error: "revoked" }, { status: 401 });
      }
      return Response.json({
        client_id: payload.client_id,
        scope: payload.scope,
        jti: payload.jti,
      });
    } catch (err) {
      return Response.json({ error: (err as Error).message }, { status: 401 });
    }
  });
  return { ...server, seen };
}

Deno.test("backend auth oauth2_client_credentials: secret (basic and post) and private_key_jwt against oidc-provider", async () => {
  const { privateKey, publicKey } = await generateKeyPair("RS384", { extractable: true });
  const dir = await Deno.makeTempDir({ prefix: "gw-creds-" });
  await Deno.writeTextFile(`${dir}/backend-services.pem`, await exportPKCS8(privateKey));
  const op = await startOidcProvider({
    audience: RESOURCE,
    scopes: ["system/Observation.rs", "system/Patient.r"],
    tokenTtlSeconds: 3,
    clients: [
      {
        client_id: "poster",
        client_secret: "poster-secret",
        token_endpoint_auth_method: "client_secret_post",
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
      },
      {
        client_id: "smart-backend",
        token_endpoint_auth_method: "private_key_jwt",
        token_endpoint_auth_signing_alg: "RS384",
        jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "RS384", use: "sig" }] },
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
      },
    ],
  });
  const upstream = resourceServer(op.jwksUrl, op.issuer);
  const auth = (rest: string) =>
    `base_url = "${upstream.url}"\n[backends.NAME.options.auth]\ntype = "oauth2_client_credentials"\n` +
    `token_url = "${op.tokenUrl}"\nscopes = ["system/Observation.rs"]\n${rest}`;
  const gw = await withEnv({ LAB_SECRET: "lab-secret" }, () =>
    startTestGateway(
      [
        ["basic", 'client_id = "lab"\nclient_secret = "${LAB_SECRET}"'],
        [
          "post",
          'client_id = "poster"\nclient_auth = "client_secret_post"\nclient_secret = "poster-secret"',
        ],
        [
          "jwt",
          `client_id = "smart-backend"\nclient_auth = "private_key_jwt"\n` +
          `private_key_path = "${dir}/backend-services.pem"\nkey_id = "k1"`,
        ],
      ].map(([name, rest]) => pipeline(name, auth(rest).replaceAll("NAME", name))).join("\n"),
      // One isolate: the token cache and its reuse are per worker (docs/data-plane.md).
      { workers: 1 },
    ));
  try {
    for (const [name, client] of [["basic", "lab"], ["post", "poster"], ["jwt", "smart-backend"]]) {
      const res = await fetch(`${gw.url}/${name}/Observation`, {
        headers: { authorization: "Bearer the-clients-own-token" },
      });
      const body = await res.json();
      assertEquals(res.status, 200, `${name}: ${JSON.stringify(body)}`);
      assertEquals([body.client_id, body.scope], [client, "system/Observation.rs"]);
    }
    assert(
      !upstream.seen.includes("the-clients-own-token"),
      "the client's Authorization is replaced",
    );

    // Twenty requests at once, with no token held: one token fetched, shared by all.
    const before = op.issued;
    await new Promise((r) => setTimeout(r, 3100)); // the 3 s tokens are now past renewal
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${gw.url}/post/x`).then((r) => r.json())),
    );
    assertEquals(new Set(answers.map((a) => a.jti)).size, 1, JSON.stringify(answers));
    assertEquals(op.issued - before, 1);
    // Within its lifetime the token is reused; past it, renewed.
    const again = await (await fetch(`${gw.url}/post/x`)).json();
    assertEquals(again.jti, answers[0].jti);
    await new Promise((r) => setTimeout(r, 3100));
    const renewed = await (await fetch(`${gw.url}/post/x`)).json();
    assert(renewed.jti && renewed.jti !== answers[0].jti, "a new token after expiry");
    assert(!gw.logs.join("\n").includes("lab-secret"), "secrets are never logged");
    assert(!gw.logs.join("\n").includes(answers[0].jti), "tokens are never logged");
  } finally {
    await gw.stop();
    await upstream.stop();
    await op.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("backend auth: a 401 drops the token; an idempotent request is sent once more, a POST is not", async () => {
  const op = await startOidcProvider({ audience: RESOURCE, scopes: ["system/*.rs"] });
  const upstream = resourceServer(op.jwksUrl, op.issuer, true);
  const gw = await startTestGateway(pipeline(
    "api",
    `base_url = "${upstream.url}"\n[backends.api.options.auth]\ntype = "oauth2_client_credentials"\n` +
      `token_url = "${op.tokenUrl}"\nclient_id = "lab"\nclient_secret = "lab-secret"`,
  ));
  try {
    const res = await fetch(`${gw.url}/api/Patient/1`);
    assertEquals(res.status, 200, await res.clone().text());
    await res.body?.cancel();
    assertEquals(upstream.seen.length, 2);
    assert(upstream.seen[0] !== upstream.seen[1], "the retry carries a new token");
    assertEquals(op.issued, 2);
  } finally {
    await gw.stop();
    await upstream.stop();
  }
  // A POST answered 401 goes back to the client as it is (it may have had effects).
  const strict = resourceServer(op.jwksUrl, op.issuer, true);
  const gw2 = await startTestGateway(pipeline(
    "api",
    `base_url = "${strict.url}"\n[backends.api.options.auth]\ntype = "oauth2_client_credentials"\n` +
      `token_url = "${op.tokenUrl}"\nclient_id = "lab"\nclient_secret = "lab-secret"`,
  ));
  try {
    const res = await fetch(`${gw2.url}/api/Observation`, { method: "POST", body: "{}" });
    assertEquals(res.status, 401);
    await res.body?.cancel();
    assertEquals(strict.seen.length, 1);
    // The token was dropped: the next request fetches another.
    const next = await fetch(`${gw2.url}/api/Observation/1`);
    assertEquals(next.status, 200);
    await next.body?.cancel();
    assert(strict.seen[1] !== strict.seen[0]);
  } finally {
    await gw2.stop();
    await strict.stop();
    await op.stop();
  }
});

Deno.test("backend auth: a token endpoint down, slow, 400, 500 or not JSON is a 502 in bounded time; others keep serving", async () => {
  let mode = "400";
  const tokens = startUpstream(async () => {
    switch (mode) {
      case "400":
        return Response.json({ error: "invalid_client", error_description: "unknown client" }, {
          status: 400,
        });
      case "500":
        return new Response("oops", { status: 500 });
      case "html":
        return new Response("<html>login</html>", { headers: { "content-type": "text/html" } });
      case "no-token":
        return Response.json({ token_type: "Bearer" });
      default:
        await new Promise((r) => setTimeout(r, 5000));
        return Response.json({ access_token: "late", expires_in: 60 });
    }
  });
  const upstream = startUpstream();
  const gw = await startTestGateway(
    pipeline(
      "api",
      `base_url = "${upstream.url}"\n[backends.api.options.auth]\ntype = "oauth2_client_credentials"\n` +
        `token_url = "${tokens.url}/token"\nclient_id = "gw"\nclient_secret = "s"\ntimeout_secs = 1`,
    ) + pipeline(
      "down",
      `base_url = "${upstream.url}"\n[backends.down.options.auth]\n` +
        `type = "oauth2_client_credentials"\ntoken_url = "http://127.0.0.1:1/token"\n` +
        `client_id = "gw"\nclient_secret = "s"`,
    ) + pipeline("open", `base_url = "${upstream.url}"`),
    // One isolate: the hold after a token failure is per worker (docs/data-plane.md).
    { workers: 1 },
  );
  try {
    const expect = async (path: string, message: RegExp) => {
      await new Promise((r) => setTimeout(r, 1100)); // past the hold of the last failure
      const started = performance.now();
      const res = await fetch(`${gw.url}${path}`);
      const body = await res.json();
      assertEquals(
        [res.status, body.error.code],
        [502, "backend_auth_failed"],
        JSON.stringify(body),
      );
      assertMatch(body.error.message, message);
      assert(performance.now() - started < 3000, "bounded by the token endpoint's timeout");
      const open = await fetch(`${gw.url}/open/x`);
      assertEquals(open.status, 200);
      await open.body?.cancel();
    };
    await expect("/api/x", /answered 400: invalid_client \(unknown client\)/);
    mode = "500";
    await expect("/api/x", /answered 500/);
    mode = "html";
    await expect("/api/x", /not a JSON object/);
    mode = "no-token";
    await expect("/api/x", /no access_token/);
    mode = "slow";
    await expect("/api/x", /did not answer within 1 s/);
    await expect("/down/x", /cannot be reached/);
    assertEquals(upstream.received.filter((r) => r.url.includes("/api/")).length, 0);
    assertMatch(gw.logs.join("\n"), /backend_auth_failed/);
  } finally {
    await gw.stop();
    await tokens.stop();
    await upstream.stop();
  }
});

Deno.test("backend auth: bearer from a file that changes, Basic, static headers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-creds-" });
  await Deno.writeTextFile(`${dir}/token`, "first-token\n");
  const upstream = startUpstream();
  const gw = await withEnv(
    { ARCHIVE_PASSWORD: "pässword", VENDOR_KEY: "vk-1" },
    () =>
      startTestGateway(
        pipeline(
          "file",
          `base_url = "${upstream.url}"\n[backends.file.options.auth]\ntype = "bearer"\ntoken_file = "${dir}/token"`,
        ) +
          pipeline(
            "basic",
            `base_url = "${upstream.url}"\nupstream_protocol = "auto"\n[backends.basic.options.auth]\ntype = "basic"\nusername = "gateway"\npassword = "\${ARCHIVE_PASSWORD}"`,
          ) +
          pipeline(
            "vendor",
            `base_url = "${upstream.url}"\n[backends.vendor.options.auth]\ntype = "headers"\n[backends.vendor.options.auth.headers]\nX-Api-Key = "\${VENDOR_KEY}"\nX-Tenant = "north"`,
          ),
        // Each isolate re-reads the token file on its own schedule: one isolate, so that the
        // request that notices the change and the next one meet the same cache.
        { workers: 1 },
      ),
  );
  try {
    const headersAt = async (path: string, init?: RequestInit) =>
      (await (await fetch(`${gw.url}${path}`, init)).json()).headers as Record<string, string>;
    assertEquals((await headersAt("/file/x")).authorization, "Bearer first-token");
    await new Promise((r) => setTimeout(r, 20));
    await Deno.writeTextFile(`${dir}/token`, "second-token\n");
    await new Promise((r) => setTimeout(r, 1100));
    await headersAt("/file/x"); // notices the change
    await new Promise((r) => setTimeout(r, 50));
    assertEquals((await headersAt("/file/x")).authorization, "Bearer second-token");
    const basic = await headersAt("/basic/x", { headers: { authorization: "Basic bm9wZTpub3Bl" } });
    const decoded = new TextDecoder().decode(
      Uint8Array.from(atob(basic.authorization.slice(6)), (c) => c.charCodeAt(0)),
    );
    assertEquals(decoded, "gateway:pässword");
    const vendor = await headersAt("/vendor/x", { headers: { "x-api-key": "client-supplied" } });
    assertEquals([vendor["x-api-key"], vendor["x-tenant"]], ["vk-1", "north"]);
  } finally {
    await gw.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("backend auth config: each type's keys, files named when unreadable, literal secrets found", async () => {
  const problems = (text: string) =>
    validateConfigText(text, "gw.toml").problems.map((p) => `${p.path}: ${p.message}`).join("\n");
  const base = '[backends.a]\nservice = "fhir"\n[backends.a.options]\nbase_url = "https://x"\n';
  assertMatch(
    problems(
      base + '[backends.a.options.auth]\ntype = "oauth2_client_credentials"\nclient_id = "c"\n',
    ),
    /backends\.a\.options\.auth\.token_url: missing `token_url`[\s\S]*auth\.client_secret: missing `client_secret`/,
  );
  assertMatch(
    problems(
      base +
        '[backends.a.options.auth]\ntype = "oauth2_client_credentials"\ntoken_url = "https://t"\n' +
        'client_id = "c"\nclient_auth = "private_key_jwt"\nclient_secret = "x"\n',
    ),
    /auth\.private_key_path: missing[\s\S]*auth\.client_secret: not used with client_auth = private_key_jwt/,
  );
  assertMatch(
    problems(base + '[backends.a.options.auth]\ntype = "bearer"\ntoken = "${T}"\nusername = "u"\n'),
    /auth\.username: does not apply to type = "bearer"/,
  );
  assertMatch(
    problems(base + '[backends.a.options.auth]\ntype = "basic"\nusername = "u"\n'),
    /auth\.password: missing `password`/,
  );
  assertMatch(
    problems(base + 'client_cert_path = "c.pem"\n'),
    /options\.client_key_path: missing `client_key_path`/,
  );
  assertMatch(
    problems(
      base +
        'server_name = "fhir.internal"\nclient_cert_path = "c.pem"\nclient_key_path = "k.pem"\n',
    ),
    /options\.server_name: cannot be combined with client_cert_path/,
  );
  assertMatch(
    problems(base + 'server_name = "fhir.internal"\nupstream_protocol = "auto"\n'),
    /options\.server_name: applies only to the pooled client/,
  );
  assertMatch(problems(base + 'server_name = "not a name"\n'), /server_name: .*a DNS host name/);
  // The TOML writer (the cloud's generator) keeps the auth table as it was.
  const text = base +
    '[backends.a.options.auth]\ntype = "oauth2_client_credentials"\ntoken_url = "https://t"\n' +
    'client_id = "c"\nclient_secret = "${S}"\nscopes = ["system/*.rs"]\n';
  const written = writeConfigToml(validateConfigText(text, "gw.toml").config!);
  assertEquals(
    validateConfigText(written, "out.toml").config!.backends.a.options.auth,
    validateConfigText(text, "gw.toml").config!.backends.a.options.auth,
  );
  assertMatch(written, /client_secret = "\$\{S\}"/);
  const secrets = literalSecretPaths({
    backends: {
      a: {
        service: "http",
        options: {
          auth: { type: "headers", headers: { "X-Api-Key": "literal", "X-Ok": "${REF}" } },
        },
      },
      b: { service: "fhir", options: { auth: { type: "basic", username: "u", password: "pw" } } },
      c: { service: "http", options: { auth: { type: "bearer", token: "${TOKEN}" } } },
    },
  });
  assertEquals(secrets.sort(), [
    "backends.a.options.auth.headers.X-Api-Key",
    "backends.b.options.auth.password",
  ]);

  const upstream = startUpstream();
  try {
    let failed = "";
    try {
      await startTestGateway(pipeline(
        "api",
        `base_url = "${upstream.url}"\n[backends.api.options.auth]\ntype = "oauth2_client_credentials"\n` +
          `token_url = "${upstream.url}/token"\nclient_id = "c"\nclient_auth = "private_key_jwt"\n` +
          `private_key_path = "/nonexistent/key.pem"`,
      ));
    } catch (err) {
      failed = (err as Error).message;
    }
    assertMatch(
      failed,
      /backends\.api: options\.auth\.private_key_path: cannot read \/nonexistent\/key\.pem/,
    );
  } finally {
    await upstream.stop();
  }
});
