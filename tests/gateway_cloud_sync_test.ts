/**
 * The configuration sync against our cloud service: a pipeline placed on the gateway in the cloud
 * is pulled, applied through the gateway's reload and reported; a pulled configuration the gateway
 * refuses is kept out (the running configuration stays) and reported with its problems; the last
 * pulled configuration runs again after a restart; disabling the cloud by reload stops the sync
 * and drops the pulled pipelines; the sync's metrics.
 */
import { waitFor, withManagementToken } from "./support/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import {
  cloudEchoPipeline,
  machineToken,
  postJson,
  startCloudGateway,
  waitForCloud,
  waitForPull,
} from "./gateway_cloud_support.ts";
import { MANAGED_CONFIG_NAME, SYNC_STATE_NAME } from "../gateway/cloud_client/mod.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";

async function metrics(mgmt: string) {
  return parseExposition(await (await fetch(`${mgmt}/metrics`, withManagementToken())).text());
}

Deno.test("sync: a cloud pipeline is pulled, applied, reported, and runs again after a restart", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-sync");
    const dir = await Deno.makeTempDir({ prefix: "gw-cloud-sync-" });
    const gw = await startCloudGateway(cloud, { dir });
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      await waitForCloud(gw, (c) => c.sync.last_apply?.version === 1, "the empty version 1");
      const generation = (await gw.info()).config_generation;

      await cloudEchoPipeline(cloud, u, payload.gateway_id, {
        name: "cloud_echo",
        prefix: "/cloud",
        spec: [{ operation: "shift", spec: { a: "b" } }],
      });
      const c = await waitForCloud(
        gw,
        (c) => c.sync.last_apply?.version > 1,
        "the pulled pipeline",
      );
      assertEquals(c.sync.last_apply.status, "applied", JSON.stringify(c.sync.last_apply));
      assertEquals(c.sync.config_version, c.sync.last_apply.version);
      const version = c.sync.config_version;
      const info = await gw.info();
      assert(info.config_generation > generation, "applied through a reload");

      const echoed = await postJson(`${gw.url}/cloud/x`, { a: 1 });
      assertEquals([echoed.status, echoed.pipeline, echoed.data], [200, "cloud_echo", { b: 1 }]);
      assertEquals((await postJson(`${gw.url}/local/x`, { a: 1 })).data, { a: 1 }, "local stays");

      // Reported to the cloud: applied version and status.
      const view = (await call(cloud, "GET", `/api/gateways/${payload.gateway_id}`, {
        token: u.apiToken,
      })).json;
      assertEquals([view.applied_version, view.last_apply.status], [version, "applied"]);
      await waitForCloud(gw, (c) => c.sync.last_status_report_at > c.sync.last_apply.at, "status");
      const reported = (await call(cloud, "GET", `/api/gateways/${payload.gateway_id}`, {
        token: u.apiToken,
      })).json.last_status;
      assertEquals(reported.config_version, version);
      assertEquals(reported.health, "healthy");
      assert(
        reported.pipelines.some((p: { name: string; requests: number }) =>
          p.name === "cloud_echo" && p.requests >= 1
        ),
        JSON.stringify(reported.pipelines),
      );

      // On disk: the managed file and the sync state.
      const managed = await Deno.readTextFile(`${gw.stateDir}/${MANAGED_CONFIG_NAME}`);
      assertMatch(
        managed,
        new RegExp(`^# Written by the gateway's cloud sync: configuration version ${version} `),
      );
      assertMatch(managed, /\[pipelines\.cloud_echo\]/);
      assert(!managed.includes("[cloud]"), "the local file keeps [cloud]");
      const state = JSON.parse(await Deno.readTextFile(`${gw.stateDir}/${SYNC_STATE_NAME}`));
      assertEquals([state.version, state.etag], [version, c.sync.etag]);

      const m = await metrics(gw.mgmt);
      assertEquals(sampleValue(m, "gateway_cloud_config_version"), version);
      assertEquals(sampleValue(m, "gateway_cloud_authorized"), 1);
      assertEquals(
        sampleValue(m, "gateway_cloud_token_expiry_timestamp_seconds"),
        Date.parse(payload.expires_at) / 1000,
      );
      assert(sampleValue(m, "gateway_cloud_config_pulls_total", { outcome: "applied" })! >= 2);
      assert(sampleValue(m, "gateway_cloud_status_reports_total", { outcome: "ok" })! >= 1);
      assert(sampleValue(m, "gateway_cloud_transform_downloads_total", { outcome: "ok" })! >= 1);
      assert(sampleValue(m, "gateway_cloud_last_contact_timestamp_seconds")! > 0);
    } finally {
      await gw.stop({ keepDir: true });
    }

    // Restart (the token comes from the variable): the pulled pipeline serves at once, and the
    // sync resumes from the recorded ETag without applying the same version again.
    const again = await startCloudGateway(cloud, {
      dir,
      env: { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) },
    });
    try {
      assertEquals((await postJson(`${again.url}/cloud/x`, { a: 2 })).data, { b: 2 });
      const c = await waitForPull(cloud, again);
      assertEquals(c.sync.last_apply, null, "304: nothing applied");
      assert(c.sync.config_version > 1);
    } finally {
      await again.stop();
    }
  });
});

Deno.test("sync: a pulled configuration the gateway refuses is kept out, reported with its problems, and a fix applies", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-bad");
    const gw = await startCloudGateway(cloud);
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      await waitForCloud(gw, (c) => c.sync.last_apply?.version === 1, "version 1");
      const generation = (await gw.info()).config_generation;
      // Valid for the cloud, but its endpoint takes the local endpoint's path on this gateway.
      const parts = await cloudEchoPipeline(cloud, u, payload.gateway_id, {
        name: "clash",
        prefix: "/local",
      });
      const c = await waitForCloud(gw, (c) => c.sync.last_apply?.version > 1, "the clash");
      assertEquals(c.sync.last_apply.status, "failed");
      assert(c.sync.last_apply.errors.length > 0);
      assertMatch(JSON.stringify(c.sync.last_apply.errors), /path_prefix/);
      assertEquals(c.sync.config_version, 1, "the running version stays");
      assertEquals((await gw.info()).config_generation, generation, "nothing swapped");
      assertEquals((await postJson(`${gw.url}/local/x`, { a: 1 })).pipeline, "local_echo");
      const managed = await Deno.readTextFile(`${gw.stateDir}/${MANAGED_CONFIG_NAME}`);
      assert(!managed.includes("clash"), "the previous managed file is back");
      assertEquals(
        gw.logs.filter((l) => l.includes("cloud configuration refused")).length,
        1,
      );

      const view = (await call(cloud, "GET", `/api/gateways/${payload.gateway_id}`, {
        token: u.apiToken,
      })).json;
      assertEquals(view.last_apply.status, "failed");
      assertEquals(view.last_apply.errors, c.sync.last_apply.errors);
      assertEquals(view.status, "degraded");
      const m = await metrics(gw.mgmt);
      assertEquals(sampleValue(m, "gateway_cloud_config_pulls_total", { outcome: "failed" }), 1);

      // The fix in the cloud is a new version, which applies.
      const fixed = await call(cloud, "PATCH", `/api/endpoints/${parts.endpointId}`, {
        token: u.apiToken,
        body: { options: { path_prefix: "/clash" } },
      });
      assertEquals(fixed.status, 200, fixed.text);
      const failedVersion = c.sync.last_apply.version;
      const after = await waitForCloud(
        gw,
        (c) => c.sync.last_apply?.version > failedVersion,
        "the fix",
      );
      assertEquals(after.sync.last_apply.status, "applied");
      assertEquals((await postJson(`${gw.url}/clash/x`, {})).pipeline, "clash");
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("sync: disabling the cloud by reload stops the sync and drops the pulled pipelines", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-off");
    await cloudEchoPipeline(cloud, u, payload.gateway_id, { name: "cloud_echo", prefix: "/cloud" });
    const gw = await startCloudGateway(cloud);
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      await waitForCloud(gw, (c) => c.sync.last_apply?.status === "applied", "applied");
      assertEquals((await postJson(`${gw.url}/cloud/x`, {})).status, 200);

      const text = await Deno.readTextFile(gw.configFile);
      await Deno.writeTextFile(gw.configFile, text.replace("enabled = true", "enabled = false"));
      assertEquals((await gw.admin("POST", "/api/reload")).status, 200);
      const c = await waitForCloud(gw, (c) => c.sync.state === "stopped", "stopped");
      assertEquals(c.enabled, false);
      const res = await fetch(`${gw.url}/cloud/x`);
      await res.body?.cancel();
      assertEquals(res.status, 404, "the pulled pipeline is not merged while disabled");
      // Stopped: its loops have ended (the renewal check no longer waits on the clock), so no
      // report can follow; moving the clock makes no call either.
      const before = sampleValue(await metrics(gw.mgmt), "gateway_cloud_status_reports_total", {
        outcome: "ok",
      });
      await waitFor(() => Promise.resolve(cloud.clock.pending === 0), {
        timeoutMs: 10_000,
        description: "the sync's renewal check gone from the clock",
      });
      await cloud.clock.advance(3_600_000);
      const after = sampleValue(await metrics(gw.mgmt), "gateway_cloud_status_reports_total", {
        outcome: "ok",
      });
      assertEquals(after, before, "no more status reports");

      // Enabled again: the token held in memory is kept and the sync resumes.
      await Deno.writeTextFile(gw.configFile, text);
      assertEquals((await gw.admin("POST", "/api/reload")).status, 200);
      const resumed = await waitForCloud(
        gw,
        (c) => c.sync.state === "running" && c.verified,
        "resumed",
      );
      assertEquals([resumed.authorized, resumed.gateway_id], [true, payload.gateway_id]);
      assertEquals((await postJson(`${gw.url}/cloud/x`, {})).status, 200);
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("sync: a pushed configuration cannot read the host's files or environment; the running config stays", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-untrusted");
    const token = u.apiToken;
    const must = async (path: string, body: unknown) => {
      const res = await call(cloud, "POST", path, { token, body });
      assertEquals(res.status, 201, `POST ${path}: ${res.text}`);
      return res.json;
    };
    const service = await must("/api/services", {
      name: "files_svc",
      endpoint_types: ["http"],
      backend_types: ["storage"],
    });
    const endpoint = await must("/api/endpoints", {
      name: "files_in",
      service_id: service.id,
      type: "http",
      options: { path_prefix: "/files" },
    });
    // What a hijacker pushes: the host's /etc as a storage root.
    const backend = await must("/api/backends", {
      name: "host_files",
      service_id: service.id,
      type: "storage",
      options: { root: "/etc", read_pattern: "{path}" },
    });
    await must("/api/pipelines", {
      name: "steal",
      gateway_id: payload.gateway_id,
      endpoint_ids: [endpoint.id],
      middleware_ids: [],
      backend_ids: [backend.id],
    });
    const gw = await startCloudGateway(cloud);
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      const c = await waitForCloud(gw, (c) => c.sync.last_apply !== null, "the first apply");
      assertEquals(c.sync.last_apply.status, "failed", JSON.stringify(c.sync.last_apply));
      const [error] = c.sync.last_apply.errors;
      assertEquals(error.path, "backends.host_files.options.root");
      assertMatch(error.message, /"\/etc" is outside .* \(\[cloud\] data_dir\)/);
      const res = await fetch(`${gw.url}/files/passwd`);
      const text = await res.text();
      assertEquals(res.status, 404, "no route: the pushed pipeline never ran");
      assert(!text.includes("root:"), "no host file was served");
    } finally {
      await gw.stop();
    }
  });
});
