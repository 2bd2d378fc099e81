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
import { assert, assertEquals, assertMatch, assertRejects } from "./assert.ts";
import { ClientCredentials, TokenFileCredentials } from "../gateway/backends/credentials/mod.ts";
import { ManualClock } from "../shared/clock.ts";
import { decodeTokenClaims } from "../shared/tokens.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { startOidcProvider } from "./support/oidc.ts";
import { withEnv } from "./support/mod.ts";
import { waitFor } from "./support/wait.ts";
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
        // No request before the twenty concurrent ones: no token held yet.
        [
          "shared",
          'client_id = "poster"\nclient_auth = "client_secret_post"\nclient_secret = "poster-secret"',
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
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${gw.url}/shared/x`).then((r) => r.json())),
    );
    assertEquals(new Set(answers.map((a) => a.jti)).size, 1, JSON.stringify(answers));
    assertEquals(op.issued - before, 1);
    // Within its lifetime the token is reused (renewal past it: the clock test below).
    const again = await (await fetch(`${gw.url}/shared/x`)).json();
    assertEquals(again.jti, answers[0].jti);
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

Deno.test("backend auth: a token endpoint down, slow, 400, 500 or not JSON is a 502; others keep serving", async () => {
  // Each failure has its own pipeline, so no request waits out the hold of another's failure.
  const slowRequests = new Set<PromiseWithResolvers<void>>();
  const tokens = startUpstream(async (req) => {
    switch (new URL(req.url).pathname) {
      case "/token/400":
        return Response.json({ error: "invalid_client", error_description: "unknown client" }, {
          status: 400,
        });
      case "/token/500":
        return new Response("oops", { status: 500 });
      case "/token/html":
        return new Response("<html>login</html>", { headers: { "content-type": "text/html" } });
      case "/token/no-token":
        return Response.json({ token_type: "Bearer" });
      default: {
        // Answers only once the test ends (well after the gateway's 1 s timeout).
        const released = Promise.withResolvers<void>();
        slowRequests.add(released);
        await released.promise;
        return Response.json({ access_token: "late", expires_in: 60 });
      }
    }
  });
  const upstream = startUpstream();
  const failing = ["400", "500", "html", "no-token", "slow"];
  const gw = await startTestGateway(
    failing.map((mode) =>
      pipeline(
        `api-${mode}`,
        `base_url = "${upstream.url}"\n[backends.api-${mode}.options.auth]\n` +
          `type = "oauth2_client_credentials"\ntoken_url = "${tokens.url}/token/${mode}"\n` +
          `client_id = "gw"\nclient_secret = "s"\ntimeout_secs = 1`,
      )
    ).join("") + pipeline(
      "down",
      `base_url = "${upstream.url}"\n[backends.down.options.auth]\n` +
        `type = "oauth2_client_credentials"\ntoken_url = "http://127.0.0.1:1/token"\n` +
        `client_id = "gw"\nclient_secret = "s"`,
    ) + pipeline("open", `base_url = "${upstream.url}"`),
    { workers: 1 },
  );
  try {
    const expect = async (path: string, message: RegExp) => {
      const res = await fetch(`${gw.url}${path}`);
      const body = await res.json();
      assertEquals(
        [res.status, body.error.code],
        [502, "backend_auth_failed"],
        JSON.stringify(body),
      );
      assertMatch(body.error.message, message);
      const open = await fetch(`${gw.url}/open/x`);
      assertEquals(open.status, 200);
      await open.body?.cancel();
    };
    await expect("/api-400/x", /answered 400: invalid_client \(unknown client\)/);
    await expect("/api-500/x", /answered 500/);
    await expect("/api-html/x", /not a JSON object/);
    await expect("/api-no-token/x", /no access_token/);
    // Bounded by the token endpoint's timeout, which the message names.
    await expect("/api-slow/x", /did not answer within 1 s/);
    await expect("/down/x", /cannot be reached/);
    assertEquals(upstream.received.filter((r) => r.url.includes("/api-")).length, 0);
    assertMatch(gw.logs.join("\n"), /backend_auth_failed/);
  } finally {
    await gw.stop();
    for (const r of slowRequests) r.resolve();
    await tokens.stop();
    await upstream.stop();
  }
});

Deno.test("backend auth on a manual clock: renewal before expiry, the failure hold, the token endpoint's timeout", async () => {
  const op = await startOidcProvider({ audience: RESOURCE, scopes: ["system/*.rs"] });
  const clock = new ManualClock();
  const signal = new AbortController().signal;
  const jtiOf = async (c: ClientCredentials) => {
    const [[, value]] = await c.fields(signal);
    return decodeTokenClaims(value.replace(/^Bearer /, ""))?.jti ?? value;
  };
  const creds = new ClientCredentials({
    backend: "api",
    token_url: op.tokenUrl,
    client_id: "lab",
    client_auth: "client_secret_basic",
    client_secret: "lab-secret",
    scopes: [],
    resource: RESOURCE,
    timeout_secs: 5,
    clock,
  });
  let mode: "ok" | "fail" | "hang" = "fail";
  const hanging = new Set<PromiseWithResolvers<void>>();
  const flaky = startUpstream(async () => {
    if (mode === "fail") return new Response("oops", { status: 500 });
    const released = Promise.withResolvers<void>();
    hanging.add(released);
    await released.promise;
    return Response.json({ access_token: "late", expires_in: 60 });
  });
  const held = new ClientCredentials({
    backend: "held",
    token_url: `${flaky.url}/token`,
    client_id: "gw",
    client_auth: "client_secret_basic",
    client_secret: "s",
    scopes: [],
    timeout_secs: 1,
    clock,
  });
  try {
    const first = await jtiOf(creds);
    const issued = op.issued;
    assertEquals(await jtiOf(creds), first, "reused within its lifetime");
    // The provider's tokens live an hour (or its default); renewed a tenth before the end.
    await clock.advance(24 * 3600_000);
    const renewed = await jtiOf(creds);
    assert(renewed !== first, "a new token past the renewal point");
    assertEquals(op.issued, issued + 1);

    // A failure is held for a second: meanwhile requests fail at once, unasked.
    await assertRejects(() => held.fields(signal), /answered 500/);
    assertEquals(flaky.received.length, 1);
    await assertRejects(() => held.fields(signal), /answered 500/);
    assertEquals(flaky.received.length, 1, "held");
    await clock.advance(1000);
    await assertRejects(() => held.fields(signal), /answered 500/);
    assertEquals(flaky.received.length, 2, "asked again after the hold");

    // A token endpoint that does not answer: the timeout runs on the clock.
    await clock.advance(1000);
    mode = "hang";
    const waiting = Promise.resolve(held.fields(signal));
    waiting.catch(() => {});
    await waitFor(() => Promise.resolve(hanging.size > 0), {
      timeoutMs: 10_000,
      description: "the token request",
    });
    await clock.advance(1000);
    await assertRejects(() => waiting, /did not answer within 1 s/);
  } finally {
    creds.close();
    held.close();
    for (const r of hanging) r.resolve();
    await flaky.stop();
    await op.stop();
  }
});

Deno.test("backend auth: a token file is looked at again once a second on its clock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-creds-" });
  const clock = new ManualClock();
  try {
    await Deno.writeTextFile(`${dir}/token`, "first-token\n");
    const creds = await TokenFileCredentials.open(`${dir}/token`, clock);
    const token = async () => (await creds.fields())[0][1];
    assertEquals(await token(), "Bearer first-token");
    await Deno.writeTextFile(`${dir}/token`, "second-token\n");
    await Deno.utime(`${dir}/token`, new Date(), new Date(Date.now() + 60_000));
    assertEquals(await token(), "Bearer first-token", "not looked at within the second");
    await creds.refreshing;
    await clock.advance(1000);
    assertEquals(await token(), "Bearer first-token", "the look starts in the background");
    await creds.refreshing;
    assertEquals(await token(), "Bearer second-token");
  } finally {
    await Deno.remove(dir, { recursive: true });
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
    await Deno.writeTextFile(`${dir}/token`, "second-token\n");
    // A modification time surely different from the first write's.
    await Deno.utime(`${dir}/token`, new Date(), new Date(Date.now() + 60_000));
    // Requests go on; one of them (within a second) notices the change, the next ones carry it.
    await waitFor(
      async () => (await headersAt("/file/x")).authorization === "Bearer second-token",
      {
        timeoutMs: 10_000,
        intervalMs: 100,
        description: "the changed token file in use",
      },
    );
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
