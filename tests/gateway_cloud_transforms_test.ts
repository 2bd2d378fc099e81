/**
 * Transforms by id (SPEC, Transform behavior 2) against our cloud service: the sync downloads the
 * transforms a pulled configuration lists into `transforms_path`; a missing transform id file is
 * downloaded before the pipeline is built (at start); a transform changed in the cloud is
 * downloaded again and later requests use it.
 */
import { waitFor, withManagementToken } from "./support/mod.ts";
import { assert, assertEquals } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import {
  cloudEchoPipeline,
  machineToken,
  postJson,
  startCloudGateway,
  waitForCloud,
  waitForPull,
} from "./gateway_cloud_support.ts";
import { transformIdOf } from "../gateway/cloud_client/mod.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";

Deno.test("transforms by id: downloaded by the sync, again at start when missing, and when changed", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, u, "edge-jolt");
    const parts = await cloudEchoPipeline(cloud, u, payload.gateway_id, {
      name: "jolt",
      prefix: "/jolt",
      spec: [{ operation: "shift", spec: { name: "patient.name" } }],
    });
    const id = parts.transformId!;
    const dir = await Deno.makeTempDir({ prefix: "gw-cloud-jolt-" });
    const file = `${dir}/transforms/${id}.json`;
    const env = { GATEWAY_MACHINE_TOKEN: JSON.stringify(payload) };

    const first = await startCloudGateway(cloud, { dir, env });
    try {
      await waitForCloud(first, (c) => c.sync.last_apply?.status === "applied", "applied");
      const spec = JSON.parse(await Deno.readTextFile(file));
      assertEquals(spec, [{ operation: "shift", spec: { name: "patient.name" } }]);
      const res = await postJson(`${first.url}/jolt/p`, { name: "Ada" });
      assertEquals(res.data, { patient: { name: "Ada" } });
    } finally {
      await first.stop({ keepDir: true });
    }

    // The file is gone; the pulled configuration still names it: downloaded before the build.
    await Deno.remove(file);
    const second = await startCloudGateway(cloud, { dir, env });
    try {
      assert(await Deno.stat(file).then(() => true, () => false), "downloaded at start");
      assertEquals((await postJson(`${second.url}/jolt/p`, { name: "Bob" })).data, {
        patient: { name: "Bob" },
      });
      const m = parseExposition(
        await (await fetch(`${second.mgmt}/metrics`, withManagementToken())).text(),
      );
      assertEquals(
        sampleValue(m, "gateway_cloud_transform_downloads_total", { outcome: "ok" }),
        1,
      );
      await waitForPull(cloud, second);

      // Changed in the cloud: a new version, the file is replaced, requests use the new spec.
      const patched = await call(cloud, "PATCH", `/api/transforms/${id}`, {
        token: u.apiToken,
        body: { spec: [{ operation: "shift", spec: { name: "person.full_name" } }] },
      });
      assertEquals(patched.status, 200, patched.text);
      await waitForCloud(second, (c) => c.sync.last_apply?.status === "applied", "re-applied");
      const changed = JSON.parse(await Deno.readTextFile(file));
      assertEquals(changed[0].spec, { name: "person.full_name" });
      // The workers switch to the new spec after the apply is reported: wait for a request that
      // sees it (the bound only turns a reload that never lands into a failure).
      let data;
      await waitFor(async () => {
        data = (await postJson(`${second.url}/jolt/p`, { name: "Cy" })).data;
        return data.person !== undefined;
      }, { timeoutMs: 30_000, description: "requests transformed by the new version" });
      assertEquals(data, { person: { full_name: "Cy" } });
    } finally {
      await second.stop();
    }
  });
});

Deno.test("transforms by id: a missing id file without a token fails the start with a message that says why", async () => {
  await withCloud(async (cloud) => {
    const id = "0190f5e3-aaaa-7bbb-8ccc-dddddddddddd";
    assertEquals(transformIdOf(`${id}.json`), id);
    assertEquals(transformIdOf(`sub/${id}.json`), null, "only directly in transforms_path");
    assertEquals(transformIdOf("patient.json"), null);
    const body = `
[endpoints.t]
service = "http"
options = { path_prefix = "/t" }
[middleware.m]
type = "transform"
options = { spec_path = "${id}.json" }
[backends.t]
service = "echo"
[pipelines.t]
endpoints = ["t"]
middleware = ["m"]
backends = ["t"]
`;
    let message = "";
    try {
      const gw = await startCloudGateway(cloud, { body });
      await gw.stop();
    } catch (err) {
      message = (err as Error).message;
    }
    assert(
      message.includes(`${id}.json does not exist, and it cannot be downloaded`) &&
        message.includes("gwcli gateway:authorize"),
      message,
    );
  });
});
