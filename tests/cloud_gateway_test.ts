/** Gateway authorization, machine tokens, and the gateway-facing sync API. */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, type TestCloud, type TestUser, withCloud } from "./cloud_harness.ts";
import {
  checkMachineTokenPayload,
  decodeTokenClaims,
  MACHINE_ABILITIES,
} from "../shared/tokens.ts";
import { validateConfigText } from "../shared/gateway_config/mod.ts";

async function authorize(cloud: TestCloud, token: string, code: string) {
  return await call(cloud, "POST", "/api/gateway/authorize", {
    token,
    body: { gateway_code: code },
  });
}

/** An echo pipeline on `gatewayId`: service, endpoint, backend, pipeline. */
async function echoPipeline(cloud: TestCloud, u: TestUser, gatewayId: string, name = "echo") {
  const token = u.apiToken;
  const service = (await call(cloud, "POST", "/api/services", {
    token,
    body: { name: `${name}_svc`, endpoint_types: ["http"], backend_types: ["echo"] },
  })).json;
  const endpoint = (await call(cloud, "POST", "/api/endpoints", {
    token,
    body: {
      name: `${name}_in`,
      service_id: service.id,
      type: "http",
      options: { path_prefix: `/${name}` },
    },
  })).json;
  const backend = (await call(cloud, "POST", "/api/backends", {
    token,
    body: { name: `${name}_out`, service_id: service.id, type: "echo" },
  })).json;
  const pipeline = await call(cloud, "POST", "/api/pipelines", {
    token,
    body: { name, gateway_id: gatewayId, endpoint_ids: [endpoint.id], backend_ids: [backend.id] },
  });
  assertEquals(pipeline.status, 201, pipeline.text);
  return { service, endpoint, backend, pipeline: pipeline.json };
}

Deno.test("authorize: new gateway (201), existing gateway (200), payload per SPEC", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const first = await authorize(cloud, u.apiToken, "edge-1");
    assertEquals(first.status, 201);
    const check = checkMachineTokenPayload(first.json, cloud.clock.now());
    assert(check.ok, JSON.stringify(check));
    assertEquals(Object.keys(first.json).sort(), [
      "abilities",
      "expires_at",
      "gateway_code",
      "gateway_id",
      "machine_token",
    ]);
    assertEquals(first.json.gateway_code, "edge-1");
    assertEquals(first.json.abilities, [...MACHINE_ABILITIES]);
    const days = (Date.parse(first.json.expires_at) - cloud.clock.now()) / 86_400_000;
    assert(days > 29.99 && days <= 30, `valid ${days} days`);
    const claims = decodeTokenClaims(first.json.machine_token)!;
    assertEquals([claims.iss, claims.sub, claims.team_id], [
      cloud.url,
      first.json.gateway_id,
      u.team.id,
    ]);
    const gw = await call(cloud, "GET", `/api/gateways/${first.json.gateway_id}`, {
      token: u.apiToken,
    });
    assertEquals([gw.json.code, gw.json.status, gw.json.team_id], ["edge-1", "pending", u.team.id]);

    const second = await authorize(cloud, u.userToken, "edge-1");
    assertEquals(second.status, 200);
    assertEquals(second.json.gateway_id, first.json.gateway_id);
    assert(second.json.machine_token !== first.json.machine_token);
    const list = await call(cloud, "GET", "/api/gateways", { token: u.apiToken });
    assertEquals(list.json.items.length, 1);
    const tokens = await call(cloud, "GET", `/api/gateways/${first.json.gateway_id}/tokens`, {
      token: u.apiToken,
    });
    assertEquals(tokens.json.items.length, 2);
    assertEquals(tokens.json.items[1].issued_by, "test (ada@example.com)");
    const bad = await call(cloud, "POST", "/api/gateway/authorize", {
      token: u.apiToken,
      body: { gateway_code: "../x" },
    });
    assertEquals([bad.status, bad.json.error.fields[0].field], [422, "gateway_code"]);
    const audit = await call(cloud, "GET", "/api/audit?action=machine_token", {
      token: u.apiToken,
    });
    assertEquals(audit.json.items.length, 2);
  });
});

Deno.test("authorize: bad, expired and revoked credentials answer 401", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const none = await call(cloud, "POST", "/api/gateway/authorize", {
      body: { gateway_code: "g" },
    });
    assertEquals(none.status, 401);
    const bad = await authorize(cloud, "gwc_" + "Z".repeat(43), "g");
    assertEquals([bad.status, bad.json.error.code], [401, "unauthorized"]);
    const garbage = await authorize(cloud, "not-a-token", "g");
    assertEquals(garbage.status, 401);
    // A machine token cannot authorize other gateways.
    const machine = (await authorize(cloud, u.apiToken, "g")).json.machine_token;
    assertEquals((await authorize(cloud, machine, "other")).status, 401);
    // Revoked API token.
    const tokenId =
      (await call(cloud, "GET", "/api/tokens", { token: u.userToken })).json.items[0].id;
    assertEquals(
      (await call(cloud, "DELETE", `/api/tokens/${tokenId}`, { token: u.userToken })).status,
      200,
    );
    const revoked = await authorize(cloud, u.apiToken, "g");
    assertEquals([revoked.status, revoked.json.error.message], [
      401,
      "unknown or revoked API token",
    ]);
    // Expired user token.
    cloud.clock.advance(24 * 3600 * 1000 + 1);
    const expired = await authorize(cloud, u.userToken, "g");
    assertEquals([expired.status, expired.json.error.message], [401, "token expired"]);
  });
});

Deno.test("machine tokens: gateway API access, revocation, renewal with grace, expiry after 30 days", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = (await authorize(cloud, u.apiToken, "edge-1")).json;
    const self = await call(cloud, "GET", "/api/gateway/self", { token: payload.machine_token });
    assertEquals(self.status, 200);
    assertEquals([self.json.gateway_id, self.json.gateway_code, self.json.token.expires_at], [
      payload.gateway_id,
      "edge-1",
      payload.expires_at,
    ]);
    // Machine tokens do not open the user API.
    assertEquals(
      (await call(cloud, "GET", "/api/gateways", { token: payload.machine_token })).status,
      401,
    );

    const renewed = await call(cloud, "POST", "/api/gateway/token/renew", {
      token: payload.machine_token,
    });
    assertEquals(renewed.status, 200);
    assert(checkMachineTokenPayload(renewed.json, cloud.clock.now()).ok);
    assertEquals(renewed.json.gateway_id, payload.gateway_id);
    assertEquals(
      (await call(cloud, "GET", "/api/gateway/self", { token: payload.machine_token })).status,
      200,
      "old token within the grace hour",
    );
    cloud.clock.advance(3600 * 1000 + 1000);
    const old = await call(cloud, "GET", "/api/gateway/self", { token: payload.machine_token });
    assertEquals([old.status, old.json.error.message], [401, "machine token expired"]);
    assertEquals(
      (await call(cloud, "GET", "/api/gateway/self", { token: renewed.json.machine_token })).status,
      200,
    );

    const jti = decodeTokenClaims(renewed.json.machine_token)!.jti;
    const revoke = await call(
      cloud,
      "DELETE",
      `/api/gateways/${payload.gateway_id}/tokens/${jti}`,
      { token: u.apiToken },
    );
    assertEquals(revoke.status, 200);
    const after = await call(cloud, "GET", "/api/gateway/config", {
      token: renewed.json.machine_token,
    });
    assertEquals([after.status, after.json.error.message], [401, "machine token revoked"]);
    assertEquals(
      (await call(cloud, "POST", "/api/gateway/token/renew", { token: renewed.json.machine_token }))
        .status,
      401,
      "a revoked token cannot renew",
    );

    const fresh = (await authorize(cloud, u.apiToken, "edge-1")).json;
    cloud.clock.advance(30 * 86_400_000 - 60_000);
    assertEquals(
      (await call(cloud, "GET", "/api/gateway/self", { token: fresh.machine_token })).status,
      200,
    );
    cloud.clock.advance(61_000);
    const expired = await call(cloud, "GET", "/api/gateway/self", { token: fresh.machine_token });
    assertEquals([expired.status, expired.json.error.message], [401, "token expired"]);
    // Deleting the gateway ends its tokens.
    const again = (await authorize(cloud, u.apiToken, "edge-1")).json;
    assertEquals(
      (await call(cloud, "DELETE", `/api/gateways/${again.gateway_id}`, { token: u.apiToken }))
        .status,
      204,
    );
    assertEquals(
      (await call(cloud, "GET", "/api/gateway/self", { token: again.machine_token })).status,
      401,
    );
  });
});

Deno.test("config pull: TOML versions, ETag and If-None-Match, long poll wakes on change", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = (await authorize(cloud, u.apiToken, "edge-1")).json;
    const token = payload.machine_token;
    const empty = await call(cloud, "GET", "/api/gateway/config", { token });
    assertEquals(empty.status, 200);
    assertEquals([empty.json.version, empty.json.pipelines], [1, []]);
    assertEquals(empty.headers.get("etag"), empty.json.etag);
    assertEquals(empty.headers.get("x-config-version"), "1");
    assertEquals(validateConfigText(empty.json.toml, "pulled.toml").problems, []);
    assertMatch(empty.json.toml, new RegExp(`\\[cloud\\]\\nenabled = true\\nurl = "${cloud.url}"`));
    const same = await call(cloud, "GET", "/api/gateway/config", {
      token,
      headers: { "if-none-match": empty.json.etag },
    });
    assertEquals([same.status, same.text], [304, ""]);

    // Long poll: held until the team's records change, then the new version.
    let answered = false;
    const waiting = call(cloud, "GET", "/api/gateway/config?wait=10", {
      token,
      headers: { "if-none-match": empty.json.etag },
    }).finally(() => answered = true);
    // The request waits on the service's clock (unchanged records would have had the 304 at once).
    // Its timer is set for what is left of the 10 s (the clock's now() moves with real time too).
    await cloud.clock.waitForTimer((ms) => ms > 5_000 && ms <= 10_000);
    assertEquals(answered, false, "held while nothing changed");
    await echoPipeline(cloud, u, payload.gateway_id);
    const changed = await waiting;
    // Answered with the change, the clock not moved (the 10 s wait did not run out).
    assertEquals(changed.status, 200);
    assertEquals([changed.json.version, changed.json.pipelines], [2, ["echo"]]);
    assert(changed.json.etag !== empty.json.etag);
    const loaded = validateConfigText(changed.json.toml, "pulled.toml");
    assertEquals(loaded.problems, []);
    assertEquals(loaded.config!.pipelines.echo.endpoints, ["echo_in"]);
    assertEquals(loaded.config!.endpoints.echo_in.options.path_prefix, "/echo");

    // Long poll without a change ends with 304 once its wait has passed on the clock.
    let idleAnswered = false;
    const idle = call(cloud, "GET", "/api/gateway/config?wait=1", {
      token,
      headers: { "if-none-match": changed.json.etag },
    }).finally(() => idleAnswered = true);
    await cloud.clock.waitForTimer((ms) => ms > 500 && ms <= 1_000);
    await cloud.clock.advance(400);
    assertEquals(idleAnswered, false, "held until the wait has passed");
    await cloud.clock.advance(600);
    assertEquals((await idle).status, 304);
    // A change elsewhere in the team (a service) wakes the poll but keeps the version: it waits
    // on for what is left of its wait (a new timer for at most the remaining 600 ms), then 304.
    let unrelatedAnswered = false;
    const unrelated = call(cloud, "GET", "/api/gateway/config?wait=1", {
      token,
      headers: { "if-none-match": changed.json.etag },
    }).finally(() => unrelatedAnswered = true);
    await cloud.clock.waitForTimer((ms) => ms > 600 && ms <= 1_000);
    await cloud.clock.advance(400);
    await call(cloud, "POST", "/api/services", {
      token: u.apiToken,
      body: { name: "other", endpoint_types: ["http"] },
    });
    await cloud.clock.waitForTimer((ms) => ms <= 600);
    assertEquals(unrelatedAnswered, false, "kept waiting after an unrelated change");
    await cloud.clock.advance(600);
    assertEquals((await unrelated).status, 304);

    const toml = await fetch(`${cloud.url}/api/gateway/config`, {
      headers: { authorization: `Bearer ${token}`, accept: "application/toml" },
    });
    assertEquals(toml.headers.get("content-type"), "application/toml; charset=utf-8");
    assertEquals(await toml.text(), changed.json.toml);
    const badWait = await call(cloud, "GET", "/api/gateway/config?wait=999", { token });
    assertEquals([badWait.status, badWait.json.error.fields[0].field], [422, "wait"]);
  }, { rateLimits: { perToken: { limit: 10_000, windowSeconds: 60 } } as never });
});

Deno.test("reports: apply outcomes, status and health, uploaded configuration, derived status", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = (await authorize(cloud, u.apiToken, "edge-1")).json;
    const token = payload.machine_token;
    const gwPath = `/api/gateways/${payload.gateway_id}`;
    await echoPipeline(cloud, u, payload.gateway_id);
    const pulled = (await call(cloud, "GET", "/api/gateway/config", { token })).json;

    const applied = await call(cloud, "POST", "/api/gateway/config/apply", {
      token,
      body: { version: pulled.version, status: "applied" },
    });
    assertEquals(applied.status, 200);
    assertEquals([applied.json.applied_version, applied.json.status], [pulled.version, "online"]);
    const future = await call(cloud, "POST", "/api/gateway/config/apply", {
      token,
      body: { version: pulled.version + 5, status: "applied" },
    });
    assertEquals([future.status, future.json.error.code], [409, "unknown_version"]);
    const failed = await call(cloud, "POST", "/api/gateway/config/apply", {
      token,
      body: {
        version: pulled.version,
        status: "failed",
        errors: [{ path: "backends.echo_out", message: "boom" }],
      },
    });
    assertEquals([failed.json.status, failed.json.applied_version], ["degraded", pulled.version]);
    assertEquals(failed.json.last_apply.errors, [{ path: "backends.echo_out", message: "boom" }]);

    const status = await call(cloud, "POST", "/api/gateway/status", {
      token,
      body: {
        health: "healthy",
        software_version: "0.12.0",
        uptime_secs: 3600,
        config_version: pulled.version,
        pipelines: [{ name: "echo", requests: 10, errors: 1 }],
        error_counts: { backend_timeout: 1 },
      },
    });
    assertEquals(status.status, 200);
    await call(cloud, "POST", "/api/gateway/config/apply", {
      token,
      body: { version: pulled.version, status: "applied" },
    });
    const view = (await call(cloud, "GET", gwPath, { token: u.apiToken })).json;
    assertEquals(view.status, "online");
    assertEquals([view.config_version, view.applied_version], [pulled.version, pulled.version]);
    assertEquals(view.last_status.pipelines, [{ name: "echo", requests: 10, errors: 1 }]);
    assertEquals(view.last_status.error_counts, { backend_timeout: 1 });
    assertEquals(view.last_status.software_version, "0.12.0");
    await call(cloud, "POST", "/api/gateway/status", {
      token,
      body: { health: "unhealthy", software_version: "0.12.0", uptime_secs: 3700 },
    });
    assertEquals((await call(cloud, "GET", gwPath, { token: u.apiToken })).json.status, "degraded");
    const invalid = await call(cloud, "POST", "/api/gateway/status", {
      token,
      body: { health: "fine" },
    });
    assertEquals(invalid.status, 422);
    assertEquals(invalid.json.error.fields.map((f: { field: string }) => f.field).sort(), [
      "health",
      "software_version",
      "uptime_secs",
    ]);

    const local = '[endpoints.api]\nservice = "http"\noptions = { path_prefix = "/api" }\n';
    const upload = await call(cloud, "PUT", "/api/gateway/config/local", {
      token,
      body: local,
      headers: { "content-type": "application/toml" },
    });
    assertEquals(upload.status, 200);
    assertEquals([upload.json.size, upload.json.problems], [
      new TextEncoder().encode(local).byteLength,
      [],
    ]);
    const stored = await call(cloud, "GET", `${gwPath}/reported-config`, { token: u.apiToken });
    assertEquals(stored.text, local);
    const broken = await call(cloud, "PUT", "/api/gateway/config/local", {
      token,
      body: { toml: "[endpoints.x]\nservice = 1\n" },
    });
    assertEquals(broken.status, 200);
    assert(
      broken.json.problems.length > 0 && broken.json.problems[0].path.startsWith("endpoints.x"),
    );
    const big = "#".repeat(600 * 1024);
    const tooBig = await call(cloud, "PUT", "/api/gateway/config/local", {
      token,
      body: big,
      headers: { "content-type": "text/plain" },
    });
    assertEquals(tooBig.status, 413);
    const chunked = "# " + "x".repeat(200 * 1024) + "\n";
    assertEquals(
      (await call(cloud, "PUT", "/api/gateway/config/local", {
        token,
        body: chunked,
        headers: { "content-type": "text/plain" },
      })).json.size,
      chunked.length,
    );
    assertEquals(
      (await call(cloud, "GET", `${gwPath}/reported-config`, { token: u.apiToken })).text,
      chunked,
    );

    cloud.clock.advance(3 * 60_000 + 1000);
    assertEquals((await call(cloud, "GET", gwPath, { token: u.apiToken })).json.status, "offline");
  });
});

Deno.test("transforms for gateways: download by id with ETag, only those the gateway uses", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = (await authorize(cloud, u.apiToken, "edge-1")).json;
    const token = payload.machine_token;
    const parts = await echoPipeline(cloud, u, payload.gateway_id);
    const spec = [{ operation: "shift", spec: { a: "b" } }];
    const used = (await call(cloud, "POST", "/api/transforms", {
      token: u.apiToken,
      body: { name: "a_to_b", spec },
    })).json;
    const unused = (await call(cloud, "POST", "/api/transforms", {
      token: u.apiToken,
      body: { name: "other", spec },
    })).json;
    const mw = (await call(cloud, "POST", "/api/middleware", {
      token: u.apiToken,
      body: { name: "reshape", type: "transform", transform_id: used.id },
    })).json;
    const patched = await call(cloud, "PATCH", `/api/pipelines/${parts.pipeline.id}`, {
      token: u.apiToken,
      body: { middleware_ids: [mw.id] },
    });
    assertEquals(patched.status, 200, patched.text);
    const config = (await call(cloud, "GET", "/api/gateway/config", { token })).json;
    assertEquals(config.transforms.map((t: { id: string; file: string }) => [t.id, t.file]), [[
      used.id,
      `${used.id}.json`,
    ]]);
    assertMatch(config.toml, new RegExp(`spec_path = "${used.id}.json"`));
    const dl = await call(cloud, "GET", `/api/gateway/transforms/${used.id}`, { token });
    assertEquals(dl.status, 200);
    assertEquals(JSON.parse(dl.text), spec);
    const etag = dl.headers.get("etag")!;
    assertEquals(
      (await call(cloud, "GET", `/api/gateway/transforms/${used.id}`, {
        token,
        headers: { "if-none-match": etag },
      })).status,
      304,
    );
    assertEquals(
      (await call(cloud, "GET", `/api/gateway/transforms/${unused.id}`, { token })).status,
      404,
    );
    // A changed spec is a new configuration version (the gateway must download it again).
    const newSpec = [{ operation: "shift", spec: { a: "c" } }];
    await call(cloud, "PATCH", `/api/transforms/${used.id}`, {
      token: u.apiToken,
      body: { spec: newSpec },
    });
    const next = (await call(cloud, "GET", "/api/gateway/config", { token })).json;
    assertEquals(next.version, config.version + 1);
    assertEquals(next.toml, config.toml);
    assertEquals(
      JSON.parse((await call(cloud, "GET", `/api/gateway/transforms/${used.id}`, { token })).text),
      newSpec,
    );
  });
});

Deno.test("deleting a gateway with more machine tokens than one KV commit holds", async () => {
  await withCloud(async (cloud) => {
    const s = cloud.server.services;
    const u = await makeUser(cloud, "ada@example.com");
    const payload = (await authorize(cloud, u.apiToken, "busy")).json;
    const actor = { type: "user" as const, id: u.user.id, label: u.user.email };
    const now = cloud.clock.now();
    for (let i = 0; i < 1000; i++) {
      await s.store.tokens.addMachineToken({
        jti: crypto.randomUUID(),
        team_id: u.team.id,
        gateway_id: payload.gateway_id,
        issued_at: new Date(now).toISOString(),
        expires_at: new Date(now + 86_400_000).toISOString(),
        revoked_at: null,
        renewed_from: null,
        issued_by: "test",
        last_used_at: null,
      }, actor);
    }
    assertEquals(
      (await s.store.tokens.listMachineTokens(u.team.id, payload.gateway_id)).length,
      1001,
    );
    assertEquals(
      (await call(cloud, "DELETE", `/api/gateways/${payload.gateway_id}`, { token: u.apiToken }))
        .status,
      204,
    );
    assertEquals((await s.store.tokens.listMachineTokens(u.team.id, payload.gateway_id)).length, 0);
    assertEquals(
      (await call(cloud, "GET", "/api/gateway/self", { token: payload.machine_token })).status,
      401,
    );
  });
});
