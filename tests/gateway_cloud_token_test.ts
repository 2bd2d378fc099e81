/**
 * The machine token of a gateway against our cloud service: GATEWAY_MACHINE_TOKEN at start (good,
 * expired, malformed, of another cloud), `POST /admin/token` (stored, malformed, bad signature,
 * foreign issuer, revoked, cloud unreachable), and 403 while the cloud is disabled.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, startTestCloud, withCloud } from "./cloud_harness.ts";
import { machineToken, startCloudGateway, waitForCloud } from "./gateway_cloud_support.ts";
import { freePort } from "./support/mod.ts";

/** Log lines (parsed) whose message contains `text`. */
function logsWith(logs: string[], text: string) {
  return logs.map((l) => JSON.parse(l)).filter((l) => String(l.msg).includes(text));
}

Deno.test("GATEWAY_MACHINE_TOKEN: a good token is held, verified on first contact and syncs", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-env");
    const gw = await startCloudGateway(cloud, {
      env: { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
    });
    try {
      const c = await waitForCloud(gw, (c) => c.verified && c.sync.state === "running", "verified");
      assertEquals([c.authorized, c.token_source, c.gateway_id, c.gateway_code], [
        true,
        "environment",
        payload.gateway_id,
        "edge-env",
      ]);
      assertEquals([c.persisted, c.encryption_key, c.token_expires_at], [
        false,
        false,
        payload.expires_at,
      ]);
      // The cloud sees the gateway (its first status report makes it online).
      await waitForCloud(gw, (c) => c.sync.last_status_report_at !== null, "a status report");
      const view = await call(cloud, "GET", `/api/gateways/${payload.gateway_id}`, {
        token: u.apiToken,
      });
      assertEquals(view.json.status, "online");
      assertEquals(view.json.last_status.software_version, gw.gateway.version);
      assert(!gw.logs.join("\n").includes(payload.machine_token), "the token is never logged");
      assertEquals(logsWith(gw.logs, "lost on restart").length, 1, "warns: no encryption key");
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("GATEWAY_MACHINE_TOKEN: the bare token of `token:get --raw` is held like its payload", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-raw");
    const gw = await startCloudGateway(cloud, {
      env: { GATEWAY_MACHINE_TOKEN: `${payload.machine_token}\n` },
    });
    try {
      const c = await waitForCloud(gw, (c) => c.verified && c.sync.state === "running", "verified");
      assertEquals([c.token_source, c.gateway_id, c.gateway_code, c.token_expires_at], [
        "environment",
        payload.gateway_id,
        "edge-raw",
        payload.expires_at,
      ]);
      assertEquals(logsWith(gw.logs, "GATEWAY_MACHINE_TOKEN is refused").length, 0);
      assert(!gw.logs.join("\n").includes(payload.machine_token), "the token is never logged");
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("GATEWAY_MACHINE_TOKEN: expired, malformed or foreign tokens are refused and logged; the gateway runs", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-env");
    const other = await startTestCloud();
    let foreign;
    try {
      foreign = await machineToken(other, await makeUser(other, "bob@example.com"), "edge-env");
    } finally {
      await other.stop();
    }
    const cases: [string, string, RegExp][] = [
      [
        "expired",
        JSON.stringify({ ...payload, expires_at: "2001-01-01T00:00:00Z" }),
        /expires_at: the token expired at 2001-01-01T00:00:00Z/,
      ],
      ["not JSON", "{machine_token:", /not valid JSON: expected the JSON payload .*"gateway_code"/],
      [
        "a user token",
        u.userToken,
        /a JWT without gateway_code in its claims, so not a machine token of the cloud service: expected the JSON payload that POST \/api\/gateway\/authorize answers/,
      ],
      [
        "missing field",
        JSON.stringify({ ...payload, gateway_id: undefined }),
        /gateway_id: must be a UUID/,
      ],
      [
        "bad JWT",
        JSON.stringify({ ...payload, machine_token: "nope" }),
        /machine_token: must be a compact JWT/,
      ],
      [
        "foreign",
        JSON.stringify(foreign),
        /machine_token: issued by .*, not by the configured cloud service .*set \[cloud\] url to it and reload/,
      ],
    ];
    for (const [name, value, message] of cases) {
      const gw = await startCloudGateway(cloud, { env: { GATEWAY_MACHINE_TOKEN: value } });
      try {
        const info = await gw.info();
        assertEquals(info.cloud.authorized, false, name);
        assertEquals(info.cloud.sync.state, "stopped", name);
        const refused = logsWith(gw.logs, "GATEWAY_MACHINE_TOKEN is refused");
        assertEquals(refused.length, 1, name);
        assertEquals(refused[0].level, "error");
        assertMatch(refused[0].msg, message, name);
        assert(!gw.logs.join("\n").includes(payload.machine_token), `${name}: token not logged`);
        // The data plane runs.
        assertEquals((await fetch(`${gw.url}/local/x`)).status, 200, name);
      } finally {
        await gw.stop();
      }
    }
  });
});

Deno.test("POST /admin/token: stored and used; malformed is 400 naming the field; forged, foreign or revoked is 401", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const gw = await startCloudGateway(cloud);
    try {
      const before = await gw.info();
      assertEquals([before.cloud.authorized, before.cloud.url], [false, cloud.url]);

      const payload = await machineToken(cloud, u, "edge-1");
      const stored = await gw.admin("POST", "/admin/token", { body: payload });
      assertEquals(stored.status, 200);
      assertEquals(stored.json, {
        stored: true,
        gateway_id: payload.gateway_id,
        gateway_code: "edge-1",
        expires_at: payload.expires_at,
        persisted: false,
      });
      const c = await waitForCloud(gw, (c) => c.sync.last_apply !== null, "the first pull");
      assertEquals([c.authorized, c.verified, c.token_source], [true, true, "management_api"]);

      const expired = await gw.admin("POST", "/admin/token", {
        body: { ...payload, expires_at: "2001-01-01T00:00:00.000Z" },
      });
      assertEquals([expired.status, expired.json.error.code], [400, "invalid_machine_token"]);
      assertMatch(expired.json.error.message, /^expires_at: the token expired/);
      const missing = await gw.admin("POST", "/admin/token", {
        body: { machine_token: payload.machine_token },
      });
      assertEquals(missing.status, 400);
      assertMatch(missing.json.error.message, /expires_at: .*gateway_id: .*gateway_code: /);
      const notJson = await gw.admin("POST", "/admin/token", { body: "{" });
      assertEquals([notJson.status, notJson.json.error.code], [400, "invalid_machine_token"]);

      // A forged signature: the claims of the real token, the signature of another.
      const second = await machineToken(cloud, u, "edge-1");
      const [h, p] = second.machine_token.split(".");
      const forged = `${h}.${p}.${payload.machine_token.split(".")[2]}`;
      const bad = await gw.admin("POST", "/admin/token", {
        body: { ...second, machine_token: forged },
      });
      assertEquals([bad.status, bad.json.error.code], [401, "machine_token_rejected"]);
      assertMatch(bad.json.error.message, /signature does not verify/);

      const other = await startTestCloud();
      try {
        const foreign = await machineToken(other, await makeUser(other, "eve@example.com"), "e");
        const res = await gw.admin("POST", "/admin/token", { body: foreign });
        assertEquals([res.status, res.json.error.code], [401, "machine_token_rejected"]);
        assertMatch(res.json.error.message, /not by the configured cloud service/);
      } finally {
        await other.stop();
      }

      const jti =
        JSON.parse(atob(second.machine_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")))
          .jti;
      const revoke = await call(
        cloud,
        "DELETE",
        `/api/gateways/${second.gateway_id}/tokens/${jti}`,
        { token: u.apiToken },
      );
      assertEquals(revoke.status, 200);
      const revoked = await gw.admin("POST", "/admin/token", { body: second });
      assertEquals([revoked.status, revoked.json.error.code], [401, "machine_token_rejected"]);
      assertMatch(revoked.json.error.message, /machine token revoked/);

      // None of the refused tokens replaced the held one.
      const after = await gw.info();
      assertEquals(after.cloud.token_expires_at, payload.expires_at);
      assertEquals(after.cloud.token_source, "management_api");
      const all = gw.logs.join("\n");
      for (const t of [payload.machine_token, second.machine_token, forged]) {
        assert(!all.includes(t), "no token in the log");
      }
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("POST /admin/token: 502 cloud_unreachable when the cloud cannot be reached (nothing stored)", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-1");
    const gw = await startCloudGateway(cloud);
    try {
      // The same gateway, pointed at a port where nothing listens (same issuer text is impossible,
      // so rewrite [cloud] url to a dead address and post a token of that "issuer").
      const dead = `http://127.0.0.1:${freePort()}`;
      const text = await Deno.readTextFile(gw.configFile);
      await Deno.writeTextFile(
        gw.configFile,
        text.replace(`url = "${cloud.url}"`, `url = "${dead}"`),
      );
      assertEquals((await gw.admin("POST", "/api/reload")).status, 200);
      const claims = JSON.parse(
        atob(payload.machine_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
      );
      const b64 = (o: unknown) =>
        btoa(JSON.stringify(o)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      const [h, , s] = payload.machine_token.split(".");
      const retargeted = {
        ...payload,
        machine_token: `${h}.${b64({ ...claims, iss: dead })}.${s}`,
      };
      const res = await gw.admin("POST", "/admin/token", { body: retargeted });
      assertEquals([res.status, res.json.error.code], [502, "cloud_unreachable"]);
      assertMatch(res.json.error.message, new RegExp(`cloud service at ${dead} cannot be reached`));
      assertEquals((await gw.info()).cloud.authorized, false);
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("cloud operations are 403 cloud_disabled on a real gateway with [cloud] enabled = false", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-1");
    const gw = await startCloudGateway(cloud, {
      enabled: false,
      env: { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
    });
    try {
      for (const op of ["token", "authorize", "update"]) {
        const res = await gw.admin("POST", `/admin/${op}`, {
          body: payload,
          userToken: u.userToken,
        });
        assertEquals([res.status, res.json.error.code], [403, "cloud_disabled"], op);
      }
      const info = await gw.info();
      assertEquals([info.cloud_enabled, info.cloud.enabled, info.cloud.authorized], [
        false,
        false,
        false,
      ]);
      assertEquals(
        logsWith(gw.logs, "GATEWAY_MACHINE_TOKEN is set but [cloud] enabled is not true").length,
        1,
      );
      // Enabling the cloud by reload picks the variable's token up.
      const text = await Deno.readTextFile(gw.configFile);
      await Deno.writeTextFile(gw.configFile, text.replace("enabled = false", "enabled = true"));
      assertEquals((await gw.admin("POST", "/api/reload")).status, 200);
      const c = await waitForCloud(gw, (c) => c.verified, "the env token after enabling");
      assertEquals(c.token_source, "environment");
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("GATEWAY_MACHINE_TOKEN while the cloud is down: kept, retried with backoff, verified once the cloud is back", async () => {
  const first = await startTestCloud();
  const u = await makeUser(first, "ada@example.com");
  const payload = await machineToken(first, u, "edge-later");
  const port = first.server.port;
  await first.server.stop(); // keep the data directory (keys, token records)
  let second: Awaited<ReturnType<typeof startTestCloud>> | undefined;
  const gw = await startCloudGateway(first, {
    env: { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
  });
  try {
    const waiting = await waitForCloud(
      gw,
      (c) => c.sync.last_error !== null,
      "a failed verification",
    );
    assertEquals([waiting.authorized, waiting.verified, waiting.sync.state], [
      true,
      false,
      "verifying",
    ]);
    assertMatch(waiting.sync.last_error.message, /token verification: .*cannot be reached/);
    assertEquals((await fetch(`${gw.url}/local/x`)).status, 200, "the data plane runs");
    second = await startTestCloud({ port, dataDir: first.dir });
    const c = await waitForCloud(gw, (c) => c.verified, "verified after the cloud is back", 15_000);
    assertEquals([c.sync.state, c.token_source], ["running", "environment"]);
  } finally {
    await gw.stop();
    await second?.stop(); // its own (unused) temp dir
    await Deno.remove(first.dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("cloud pin: a token of another team for the same gateway code is refused; an explicit reset lets a new team in", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const eve = await makeUser(cloud, "eve@example.com", "Intruders");
    const gw = await startCloudGateway(cloud);
    try {
      const mine = await machineToken(cloud, ada, "edge-pin");
      assertEquals((await gw.admin("POST", "/admin/token", { body: mine })).status, 200);
      const pin = JSON.parse(await Deno.readTextFile(`${gw.stateDir}/cloud-pin.json`));
      assertEquals([pin.issuer, pin.gateway_id], [cloud.url, mine.gateway_id]);
      assertEquals((await Deno.stat(`${gw.stateDir}/cloud-pin.json`)).mode! & 0o777, 0o600);

      // Codes are unique only within a team: another team gets a valid token for the same code.
      const theirs = await machineToken(cloud, eve, "edge-pin");
      assertEquals(theirs.gateway_code, "edge-pin");
      const refused = await gw.admin("POST", "/admin/token", { body: theirs });
      assertEquals([refused.status, refused.json.error.code], [403, "cloud_pin_mismatch"]);
      assertMatch(refused.json.error.message, /pinned to gateway .* of team/);
      const viaUser = await gw.admin("POST", "/admin/authorize", {
        userToken: eve.userToken,
        body: { gateway_code: "edge-pin" },
      });
      assertEquals([viaUser.status, viaUser.json.error.code], [403, "cloud_pin_mismatch"]);
      const info = await gw.info();
      assertEquals(info.cloud.gateway_id, mine.gateway_id, "the first team's token is still held");

      // The pin survives a restart of the gateway's cloud integration (it is in the state dir).
      await gw.gateway.reload("api");
      const again = await gw.admin("POST", "/admin/token", { body: theirs });
      assertEquals(again.status, 403);

      const reset = await gw.admin("POST", "/admin/cloud-pin/reset");
      assertEquals(reset.status, 200);
      assertEquals([reset.json.reset, reset.json.previous.gateway_id], [true, mine.gateway_id]);
      assert(gw.logs.some((l) => l.includes("cloud pin reset by the operator")));
      assertEquals((await gw.admin("POST", "/admin/token", { body: theirs })).status, 200);
      const moved = JSON.parse(await Deno.readTextFile(`${gw.stateDir}/cloud-pin.json`));
      assertEquals(moved.gateway_id, theirs.gateway_id);
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("GATEWAY_MACHINE_TOKEN refused for a misspelt [cloud] url is accepted once a reload fixes the url", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-env");
    const wrong = cloud.url.replace("127.0.0.1", "localhost");
    const gw = await startCloudGateway(cloud, {
      cloudUrl: wrong,
      env: { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
    });
    try {
      assertEquals((await gw.info()).cloud.authorized, false, "refused: another issuer spelling");
      assert(gw.logs.some((l) => l.includes("checked again when the configuration reloads")));
      const text = await Deno.readTextFile(gw.configFile);
      await Deno.writeTextFile(gw.configFile, text.replace(wrong, cloud.url));
      assertEquals((await gw.admin("POST", "/api/reload")).status, 200);
      const c = await waitForCloud(gw, (c) => c.authorized && c.verified, "the token accepted");
      assertEquals([c.token_source, c.gateway_id], ["environment", payload.gateway_id]);
    } finally {
      await gw.stop();
    }
  });
});
