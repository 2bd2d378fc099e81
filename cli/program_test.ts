/**
 * runCli in-process with a fake cloud and gateway behind `fetch`: exit codes, hints, and the
 * branches of gateway:authorize and gateway:update that the end-to-end tests cannot reach.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { envOf } from "./env.ts";
import { EXIT } from "./errors.ts";
import { saveInstances } from "./instances.ts";
import { Output } from "./output.ts";
import { resolvePaths } from "./paths.ts";
import { runCli } from "./program.ts";
import type { Prompter } from "./prompt.ts";
import { SecureStore } from "./secure_store.ts";
import { GWCLI_VERSION } from "./version.ts";

const CLOUD = "https://cloud.test";
const MGMT = "http://127.0.0.1:9090/admin";
const GATEWAY_ID = "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a";

type Handler = (req: { method: string; body: unknown }) => Response | Promise<Response>;

async function fixture(routes: Record<string, Handler> = {}) {
  const home = await Deno.makeTempDir();
  const env = envOf({ HOME: home, GATEWAY_API_URL: CLOUD, GWCLI_SECURE_STORE: "file" });
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" };
  const sign = (claims: Record<string, unknown>, aud: string, sub: string, exp: number) =>
    new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" }).setIssuer(CLOUD)
      .setAudience(aud).setSubject(sub).setIssuedAt().setExpirationTime(exp).sign(privateKey);
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const userToken = await sign(
    { user: { email: "ada@example.com" }, team: { name: "Radiology" } },
    "gateway-cloud-api",
    "u1",
    exp,
  );
  const calls: string[] = [];
  const defaults: Record<string, Handler> = {
    [`GET ${CLOUD}/.well-known/openid-configuration`]: () =>
      Response.json({
        issuer: CLOUD,
        jwks_uri: `${CLOUD}/.well-known/jwks.json`,
        device_authorization_endpoint: `${CLOUD}/oauth/device/code`,
        token_endpoint: `${CLOUD}/oauth/token`,
      }),
    [`GET ${CLOUD}/.well-known/jwks.json`]: () => Response.json({ keys: [jwk] }),
    [`POST ${CLOUD}/api/gateway/authorize`]: async ({ body }) => {
      const code = (body as { gateway_code: string }).gateway_code;
      const mexp = Math.floor(Date.now() / 1000) + 30 * 86400;
      const machine_token = await sign(
        { gateway_code: code, abilities: [] },
        "gateway-machine",
        GATEWAY_ID,
        mexp,
      );
      return Response.json({
        machine_token,
        expires_at: new Date(mexp * 1000).toISOString(),
        gateway_id: GATEWAY_ID,
        gateway_code: code,
      }, { status: 201 });
    },
    [`GET ${MGMT}/info`]: () =>
      Response.json({ cloud: { enabled: true, url: CLOUD, gateway_code: "edge-1" } }),
    [`POST ${MGMT}/token`]: () => Response.json({ stored: true, persisted: true }),
    [`POST ${MGMT}/update`]: () =>
      Response.json({
        uploaded_bytes: 2048,
        files: ["/etc/gateway/gateway.toml"],
        problems: [{ path: "pipelines.x", line: 3, message: "unknown backend" }],
      }),
  };
  const table = { ...defaults, ...routes };
  const fetchFn = async (input: string | URL | Request, init?: RequestInit) => {
    const key = `${init?.method ?? "GET"} ${input}`;
    calls.push(key);
    const handler = table[key];
    if (!handler) return new Response("not found", { status: 404 });
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    return await handler({ method: init?.method ?? "GET", body });
  };
  const silent = { stdout: () => {}, stderr: () => {} };
  await new SecureStore({ paths: resolvePaths(env), env, out: new Output(silent), apiUrl: CLOUD })
    .save({
      access_token: userToken,
      token_type: "Bearer",
      api_url: CLOUD,
      obtained_at: new Date().toISOString(),
      source: "device_login",
    });
  await saveInstances(resolvePaths(env).instances, [
    { id: "abc123", gateway_id: null, label: "edge", ip: "127.0.0.1", port: 9090, prefix: "admin" },
  ]);
  const run = async (args: string[], prompter?: Prompter) => {
    let stdout = "";
    let stderr = "";
    const code = await runCli(args, {
      env,
      sinks: { stdout: (t) => stdout += t, stderr: (t) => stderr += t },
      fetch: fetchFn,
      prompter: prompter ??
        { interactive: false, ask: () => Promise.reject(new Error("no terminal")) },
      openBrowser: () => Promise.resolve({ opened: false, reason: "test" }),
    });
    return { code, stdout, stderr };
  };
  const registry = async () =>
    JSON.parse(await Deno.readTextFile(resolvePaths(env).instances)).instances[0];
  return { run, calls, registry, cleanup: () => Deno.remove(home, { recursive: true }) };
}

function answering(...answers: string[]): Prompter & { questions: string[] } {
  const questions: string[] = [];
  return {
    interactive: true,
    questions,
    ask: (q) => (questions.push(q), Promise.resolve(answers.shift() ?? null)),
  };
}

Deno.test("program: version, usage errors (2), unexpected failures (1) with a hint to use -v", async () => {
  const f = await fixture({
    [`GET ${MGMT}/info`]: () => Response.json({ cloud: { enabled: true, url: CLOUD } }),
  });
  try {
    assert.deepEqual(await f.run(["-V"]), { code: 0, stdout: `${GWCLI_VERSION}\n`, stderr: "" });
    const usage = await f.run(["gateway:info", "--nope"]);
    assert.equal(usage.code, EXIT.usage);
    assert.match(
      usage.stderr,
      /unknown option '--nope'\n\(run gwcli --help, or gwcli <command> --help\)/,
    );
    const crash = await f.run(["gateway:authorize"], {
      interactive: true,
      ask: () => Promise.reject(new Error("terminal went away")),
    });
    assert.equal(crash.code, EXIT.failure);
    assert.equal(
      crash.stderr,
      "error: unexpected failure: terminal went away\n(run again with -v for details)\n",
    );
  } finally {
    await f.cleanup();
  }
});

Deno.test("authorize: the gateway's code, the cloud, the registry, the token; upload asked on a terminal", async () => {
  const f = await fixture();
  try {
    const prompter = answering("y");
    const r = await f.run(["gateway:authorize"], prompter);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(f.calls.filter((c) => !c.includes("well-known")), [
      `GET ${MGMT}/info`,
      `POST ${CLOUD}/api/gateway/authorize`,
      `POST ${MGMT}/token`,
      `POST ${MGMT}/update`,
    ]);
    assert.match(
      r.stdout,
      /^Created gateway 'edge-1' \(0190f5e1-.*\) in the cloud \(team Radiology\)\.\n/,
    );
    assert.match(r.stdout, /Uploaded 2\.0 KiB \(2048 bytes\) of 'edge' \(abc123\)'s configuration/);
    assert.match(r.stdout, /\nFiles: \/etc\/gateway\/gateway\.toml\n/);
    assert.match(
      r.stderr,
      /^warning: the cloud's validator found 1 problem\(s\) in the upload \(stored anyway\):\n {2}pipelines\.x \(line 3\): unknown backend\n$/,
    );
    assert.deepEqual(prompter.questions, [
      "Upload the instance's local configuration to the cloud service now? [y/N] ",
    ]);
    assert.equal((await f.registry()).gateway_id, GATEWAY_ID);
    assert(!r.stderr.includes("memory only"), "persisted: no warning");

    f.calls.length = 0;
    const skipped = await f.run(["gateway:authorize", "-y"], answering("y"));
    assert.equal(skipped.code, 0);
    assert(!f.calls.includes(`POST ${MGMT}/update`), "-y skips the upload without --update");
    assert.match(skipped.stdout, /Configuration upload skipped/);
  } finally {
    await f.cleanup();
  }
});

Deno.test("authorize: no code from the gateway: -g, a prompt on a terminal, else a usage error", async () => {
  const f = await fixture({
    [`GET ${MGMT}/info`]: () =>
      Response.json({ cloud_enabled: true, cloud: { enabled: true, gateway_code: "" } }),
  });
  try {
    const none = await f.run(["gateway:authorize", "--id", "abc123"]);
    assert.equal(none.code, EXIT.usage);
    assert.match(
      none.stderr,
      /'edge' \(abc123\) reports no gateway code\nPass one with -g\/--gateway-code CODE/,
    );
    const prompted = answering("edge-7", "n");
    const asked = await f.run(["gateway:authorize", "-l", "edge"], prompted);
    assert.equal(asked.code, 0, asked.stderr);
    assert.match(prompted.questions[0], /^Gateway code for 'edge' \(abc123\)/);
    assert.match(asked.stdout, /as gateway 'edge-7'/);
    const given = await f.run(["gateway:authorize", "-g", "edge-9", "-y"]);
    assert.match(given.stdout, /as gateway 'edge-9'/);
    const invalid = await f.run(["gateway:authorize"], answering("bad code"));
    assert.equal(invalid.code, EXIT.usage);
    assert.match(invalid.stderr, /invalid gateway code "bad code"/);
  } finally {
    await f.cleanup();
  }
});

Deno.test("authorize: a gateway on another cloud is refused before any token is issued", async () => {
  const f = await fixture({
    [`GET ${MGMT}/info`]: () =>
      Response.json({ cloud: { enabled: true, url: "https://other.test/", gateway_code: "e" } }),
  });
  try {
    const r = await f.run(["gateway:authorize", "-y"]);
    assert.equal(r.code, EXIT.failure);
    assert.match(
      r.stderr,
      /works with the cloud service at https:\/\/other\.test\/, but gwcli is logged in to https:\/\/cloud\.test/,
    );
    assert.match(r.stderr, /gwcli config:set api-url https:\/\/other\.test\//);
    assert(!f.calls.includes(`POST ${CLOUD}/api/gateway/authorize`));
  } finally {
    await f.cleanup();
  }
});

Deno.test("authorize: each refusal of /token is explained; in-memory tokens are warned about", async () => {
  const error = (status: number, code: string, message: string) => () =>
    Response.json({ error: { code, message, request_id: "rq" } }, { status });
  const cases: [Handler, RegExp][] = [
    [
      error(400, "invalid_machine_token", "expires_at: expired"),
      /answered POST \/admin\/token with 400: expires_at: expired \(invalid_machine_token, request id rq\)/,
    ],
    [
      error(401, "machine_token_rejected", "the cloud refused it"),
      /\[cloud\] url: it must be https:\/\/cloud\.test/,
    ],
    [error(403, "cloud_disabled", "off"), /Enable it: set `\[cloud\] enabled = true`/],
    [
      error(501, "not_implemented", "later"),
      /GATEWAY_MACHINE_TOKEN set to the output of `gwcli token:get -g edge-1`/,
    ],
  ];
  for (const [handler, pattern] of cases) {
    const f = await fixture({ [`POST ${MGMT}/token`]: handler });
    try {
      const r = await f.run(["gateway:authorize", "-y"]);
      assert.equal(r.code, EXIT.failure);
      assert.match(r.stderr, pattern);
      assert.equal(
        (await f.registry()).gateway_id,
        GATEWAY_ID,
        "the gateway id is stored before /token",
      );
    } finally {
      await f.cleanup();
    }
  }
  const f = await fixture({
    [`POST ${MGMT}/token`]: () => Response.json({ stored: true, persisted: false }),
  });
  try {
    const r = await f.run(["gateway:authorize", "-y"]);
    assert.equal(r.code, 0);
    assert.match(
      r.stderr,
      /^warning: the gateway keeps the token in memory only.*GATEWAY_ENCRYPTION_KEY on the gateway\n$/,
    );
  } finally {
    await f.cleanup();
  }
});

Deno.test("update: a gateway without a machine token (409 not_authorized) says to authorize first", async () => {
  const f = await fixture({
    [`POST ${MGMT}/update`]: () =>
      Response.json({ error: { code: "not_authorized", message: "no machine token" } }, {
        status: 409,
      }),
  });
  try {
    const r = await f.run(["gateway:update", "-l", "edge"]);
    assert.equal(r.code, EXIT.failure);
    assert.match(
      r.stderr,
      /answered POST \/admin\/update with 409: no machine token \(not_authorized\)\nAuthorize it first: gwcli gateway:authorize --id abc123\n$/,
    );
  } finally {
    await f.cleanup();
  }
});

Deno.test("verify, token:get: an invalid stored token exits 3 and advises login", async () => {
  const f = await fixture({
    [`GET ${CLOUD}/.well-known/jwks.json`]: () => Response.json({ keys: [] }),
  });
  try {
    for (const args of [["verify"], ["token:get", "-g", "x"], ["gateway:authorize", "-y"]]) {
      const r = await f.run(args);
      assert.equal(r.code, EXIT.auth, args.join(" "));
      assert.match(
        r.stderr,
        /^error: the stored token is not valid: .*\nRun `gwcli login` to log in\.\n$/,
      );
    }
  } finally {
    await f.cleanup();
  }
});
