/**
 * The machine token's life on a running gateway, on the cloud's manual clock: renewal once less
 * than a third of its life is left (persisted, and the old token ends), and the authorization
 * error of a revoked or expired token, after which the gateway stops calling the cloud until a
 * new token arrives.
 */
import { withManagementToken } from "./support/mod.ts";
import { generateX25519Identity } from "age-encryption";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import {
  advanceRenewal,
  machineToken,
  startCloudGateway,
  waitForCloud,
} from "./gateway_cloud_support.ts";
import { waitFor } from "./support/wait.ts";
import { decodeTokenClaims } from "../shared/tokens.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";

const DAY = 86_400_000;

async function counter(mgmt: string, name: string, outcome: string): Promise<number> {
  const m = parseExposition(await (await fetch(`${mgmt}/metrics`, withManagementToken())).text());
  return sampleValue(m, name, { outcome }) ?? NaN;
}

/** Calls the gateway made, as counted by its own metrics. */
async function callsMade(mgmt: string): Promise<number> {
  let n = 0;
  for (
    const [name, outcomes] of [
      ["gateway_cloud_config_pulls_total", ["applied", "failed", "not_modified", "error"]],
      ["gateway_cloud_status_reports_total", ["ok", "error"]],
      ["gateway_cloud_token_renewals_total", ["ok", "error"]],
    ] as const
  ) {
    for (const o of outcomes) n += await counter(mgmt, name, o);
  }
  return n;
}

Deno.test("renewal: with a third of its life left the token is renewed, persisted, and the old one ends", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-renew");
    const dir = await Deno.makeTempDir({ prefix: "gw-cloud-renew-" });
    const key = await generateX25519Identity();
    const gw = await startCloudGateway(cloud, { dir, env: { GATEWAY_ENCRYPTION_KEY: key } });
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      await waitForCloud(gw, (c) => c.sync.state === "running", "running");
      // The renewal check sleeps on the cloud's manual clock: each advance wakes it once, and it
      // sleeps again once it has looked (a new timer set: the look is done).
      await advanceRenewal(cloud.clock, 19 * DAY, { looked: true });
      assertEquals((await gw.info()).cloud.token_source, "management_api", "not due at 19 days");

      await advanceRenewal(cloud.clock, 1 * DAY + 60_000);
      const c = await waitForCloud(gw, (c) => c.token_source === "renewal", "the renewal");
      assert(Date.parse(c.token_expires_at) > Date.parse(payload.expires_at), "a later expiry");
      assertEquals([c.persisted, c.verified, c.gateway_id], [true, true, payload.gateway_id]);
      assert(c.sync.last_renewal_at !== null);
      assertEquals(await counter(gw.mgmt, "gateway_cloud_token_renewals_total", "ok"), 1);
      assertEquals(
        gw.logs.filter((l) => l.includes('"machine token renewed"')).length,
        1,
      );

      // The old token ends an hour after the renewal; the gateway goes on with the new one: the
      // advance wakes its status report (on the same clock), counted from before the advance (a
      // report quick enough to land before a count taken after it would never be seen).
      const reports = await counter(gw.mgmt, "gateway_cloud_status_reports_total", "ok");
      cloud.clock.advance(2 * 3600_000);
      const old = await call(cloud, "GET", "/api/gateway/self", { token: payload.machine_token });
      assertEquals(old.status, 401);
      await waitFor(
        async () => await counter(gw.mgmt, "gateway_cloud_status_reports_total", "ok") > reports,
        { timeoutMs: 30_000, description: "status reports going on with the renewed token" },
      );
      assertEquals((await gw.info()).cloud.sync.state, "running");
    } finally {
      await gw.stop({ keepDir: true });
    }
    // The renewed token is the one in the state file.
    const again = await startCloudGateway(cloud, {
      dir,
      env: { GATEWAY_ENCRYPTION_KEY: key, GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
    });
    try {
      const c = await waitForCloud(again, (c) => c.verified, "verified after restart");
      assertEquals(c.token_source, "state_file", "the renewed token beats the older variable");
      assert(Date.parse(c.token_expires_at) > Date.parse(payload.expires_at));
    } finally {
      await again.stop();
    }
  });
});

Deno.test("a revoked token: authorization error logged, calls stop, a new token resumes the sync", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-revoked");
    const gw = await startCloudGateway(cloud);
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      await waitForCloud(gw, (c) => c.sync.last_status_report_at !== null, "a status report");
      const jti = decodeTokenClaims(payload.machine_token)!.jti;
      const revoke = await call(
        cloud,
        "DELETE",
        `/api/gateways/${payload.gateway_id}/tokens/${jti}`,
        { token: u.apiToken },
      );
      assertEquals(revoke.status, 200);
      const c = await waitForCloud(gw, (c) => c.sync.state === "unauthorized", "unauthorized");
      assertEquals([c.authorized, c.gateway_id, c.token_expires_at], [false, null, null]);
      assertMatch(c.sync.last_error.message, /machine token revoked/);
      const logged = gw.logs.map((l) => JSON.parse(l)).filter((l) =>
        String(l.msg).startsWith("authorization error")
      );
      assertEquals(logged.length, 1);
      assertEquals(logged[0].level, "error");
      assertMatch(logged[0].msg, /gwcli gateway:authorize/);

      // The sync has ended: no renewal check waits on the clock, and moving the clock past the
      // renewal point (which would have a running sync renew) makes no call.
      const before = await callsMade(gw.mgmt);
      assertEquals(cloud.clock.pending, 0, "no renewal check sleeps");
      await cloud.clock.advance(25 * DAY);
      assertEquals(await callsMade(gw.mgmt), before, "no calls while unauthorized");
      const m = parseExposition(
        await (await fetch(`${gw.mgmt}/metrics`, withManagementToken())).text(),
      );
      assertEquals(sampleValue(m, "gateway_cloud_authorized"), 0);
      const update = await gw.admin("POST", "/admin/update");
      assertEquals([update.status, update.json.error.code], [409, "not_authorized"]);

      const fresh = await machineToken(cloud, u, "edge-revoked");
      assertEquals((await gw.admin("POST", "/admin/token", { body: fresh })).status, 200);
      const resumed = await waitForCloud(gw, (c) => c.sync.state === "running", "resumed");
      assertEquals(resumed.sync.last_error, null);
      const after = await callsMade(gw.mgmt);
      await waitFor(async () => await callsMade(gw.mgmt) > after, {
        timeoutMs: 30_000,
        description: "calls resuming with the new token",
      });
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("an expired token (never renewed): authorization error, no calls", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-expired");
    const gw = await startCloudGateway(cloud, {
      env: { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
    });
    try {
      await waitForCloud(gw, (c) => c.sync.state === "running", "running");
      await advanceRenewal(cloud.clock, 31 * DAY);
      const c = await waitForCloud(gw, (c) => c.sync.state === "unauthorized", "unauthorized");
      assertMatch(c.sync.last_error.message, /expired/);
      assertEquals(c.authorized, false);
      assert(gw.logs.some((l) => l.includes("authorization error")));
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("renewal: [cloud] renew_before_days moves the renewal point; info and gwcli show it", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-renew-soon");
    const gw = await startCloudGateway(cloud, { cloudKeys: "renew_before_days = 29" });
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      const running = await waitForCloud(gw, (c) => c.sync.state === "running", "running");
      const due = Date.parse(payload.expires_at) - 29 * DAY;
      assertEquals(running.token_renews_at, new Date(due).toISOString());
      // A day and a bit later, not twenty.
      await advanceRenewal(cloud.clock, 1 * DAY + 60_000);
      const c = await waitForCloud(gw, (c) => c.token_source === "renewal", "the early renewal");
      assert(Date.parse(c.token_renews_at) > due, "the next renewal point is the new token's");
    } finally {
      await gw.stop();
    }
  });
});
