/**
 * A gateway's configuration versions over MCP: list-gateway-config-versions, rollback-gateway-config
 * (a pin) and resume-gateway-config; the pin shown by the gateway and pipeline tools, with a note
 * that explains why a pipeline built while the gateway is pinned answers 404 there; and, end to
 * end with a real gateway pulling from the cloud, that 404 and its end after resuming.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import { connectMcp, errorText, MCP_TEST_LIMITS, type TestMcp } from "./mcp_harness.ts";
import {
  machineToken,
  postJson,
  startCloudGateway,
  waitForCloud,
} from "./gateway_cloud_support.ts";

/** An echo pipeline under `prefix` on `gatewayId`, built with the MCP tools; the create result. */
async function echoPipeline(mcp: TestMcp, gatewayId: string, name: string, prefix: string) {
  const service = (await mcp.call("create-service", {
    name: `${name}_svc`,
    endpoint_types: ["http"],
    backend_types: ["echo"],
  })).record;
  const endpoint = (await mcp.call("create-endpoint", {
    name: `${name}_in`,
    service_id: service.id,
    type: "http",
    options: { path_prefix: prefix },
  })).record;
  const backend = (await mcp.call("create-backend", {
    name: `${name}_out`,
    service_id: service.id,
    type: "echo",
  })).record;
  const pipeline = await mcp.call("create-pipeline", { name, gateway_id: gatewayId });
  await mcp.call("attach-endpoint", { pipeline_id: pipeline.record.id, endpoint_id: endpoint.id });
  const attached = await mcp.call("attach-backend", {
    pipeline_id: pipeline.record.id,
    backend_id: backend.id,
  });
  return { created: pipeline, attached, endpoint, backend };
}

Deno.test("mcp versions: list, roll back (pin shown with a 404 note), resume", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "A");
    const bob = await makeUser(cloud, "bob@example.com", "B");
    const mcp = await connectMcp(cloud, ada.apiToken);
    const other = await connectMcp(cloud, bob.apiToken);
    try {
      const gw = (await mcp.call("create-gateway", { code: "edge-1" })).record;
      assertEquals(gw.pin, null);
      const first = await echoPipeline(mcp, gw.id, "first", "/first");
      // One shape: attach-* answers `record` like create-*/update-*/get-*.
      assertEquals(first.attached.record.backend_ids, [first.backend.id]);
      assertEquals([first.attached.gateway_pin, first.attached.notes], [null, []]);

      const listed = await mcp.call("list-gateway-config-versions", { gateway_id: gw.id });
      assertEquals(listed.pin, null);
      assertEquals(listed.desired_version, listed.versions[0].version);
      const v1 = listed.versions.find((v: { version: number }) => v.version === 1);
      assertEquals([v1.pipelines, v1.source, v1.can_roll_back], [[], "records", true]);
      assert(
        listed.versions[0].pipelines.includes("first"),
        JSON.stringify(listed.versions[0]),
      );

      // Roll back to the empty version 1: the gateway is pinned, and says so everywhere.
      const rolled = await mcp.call("rollback-gateway-config", { gateway_id: gw.id, version: 1 });
      assertEquals([rolled.pin.version, rolled.pin.pipelines], [1, []]);
      assertMatch(rolled.pin.pinned_by, /ada@example\.com/);
      assert(rolled.desired_version > listed.desired_version, "the rollback is a new version");
      assertMatch(rolled.notes[0], /rolled back.*resume-gateway-config/s);
      const toml = await mcp.call("generate-gateway-toml", { gateway_id: gw.id });
      assertEquals(toml.pin.version, 1);
      assert(!toml.toml.includes("[pipelines.first]"), "the pinned file is version 1's");
      const status = await mcp.call("get-gateway-status", { gateway_id: gw.id });
      assertEquals(status.pin.version, 1);
      assertMatch(status.notes[0], /answer 404/);
      assertEquals((await mcp.call("get-gateway", { id: gw.id })).record.pin.version, 1);
      const found = await mcp.call("list-gateways", { name: "edge-1" });
      assertEquals(found.items[0].pin.version, 1);
      const versions = await mcp.call("get-gateway-config-versions", { gateway_id: gw.id });
      assertEquals(versions.pin.version, 1);
      const history = await mcp.call("list-gateway-config-versions", { gateway_id: gw.id });
      assertEquals(history.versions[0].source, "rollback to 1");

      // A pipeline built now is not published: every result about it says why it answers 404.
      const second = await echoPipeline(mcp, gw.id, "second", "/second");
      for (const result of [second.created, second.attached]) {
        assertEquals(result.gateway_pin.version, 1);
        assertMatch(
          result.notes[0],
          /Pipeline second is not published: .* rolled back to configuration version 1 .* answer 404 .* resume-gateway-config/,
        );
      }
      const got = await mcp.call("get-pipeline", { id: second.created.record.id });
      assertEquals(got.gateway_pin.version, 1);
      const review = await mcp.call("generate-pipeline-toml", {
        pipeline_id: second.created.record.id,
      });
      assertMatch(review.notes[0], /answer 404/);
      // The first pipeline is in no version the gateway runs either (version 1 is empty).
      const firstNow = await mcp.call("get-pipeline", { id: first.created.record.id });
      assertMatch(firstNow.notes[0], /That version has no pipeline first/);

      // Shared with another team, the pipeline and the gateway do not show who pinned what.
      for (const [kind, id] of [["pipelines", second.created.record.id], ["gateways", gw.id]]) {
        await mcp.call("share-resource", {
          resource_kind: kind,
          resource_id: id,
          team_id: bob.team.id,
          access: "read",
        });
      }
      const sharedPipeline = await other.call("get-pipeline", { id: second.created.record.id });
      assertEquals([sharedPipeline.access, sharedPipeline.gateway_pin, sharedPipeline.notes], [
        "read",
        null,
        [],
      ]);
      const sharedGateway = await other.call("get-gateway", { id: gw.id });
      assertEquals([sharedGateway.record.pin, sharedGateway.notes], [null, []]);
      assert(!JSON.stringify([sharedPipeline, sharedGateway]).includes("pinned_by"));

      // Another team sees nothing of it and cannot pin or resume it.
      for (
        const [tool, args] of [
          ["list-gateway-config-versions", { gateway_id: gw.id }],
          ["rollback-gateway-config", { gateway_id: gw.id, version: 1 }],
          ["resume-gateway-config", { gateway_id: gw.id }],
        ] as const
      ) {
        assertMatch(errorText(await other.raw(tool, args)), /^not_found: gateway not found/);
      }
      const missing = errorText(
        await mcp.raw("rollback-gateway-config", { gateway_id: gw.id, version: 999 }),
      );
      assertMatch(missing, /^not_found: version 999 of gateway edge-1 has no stored snapshot/);
      assertMatch(missing, /How to fix/);

      // Resume: the pipelines are published again, and the notes are gone.
      const resumed = await mcp.call("resume-gateway-config", { gateway_id: gw.id });
      assertEquals([resumed.resumed, resumed.pin], [true, null]);
      assertEquals(resumed.pipelines.sort(), ["first", "second"]);
      const after = await mcp.call("get-pipeline", { id: second.created.record.id });
      assertEquals([after.gateway_pin, after.notes], [null, []]);
      const again = await mcp.call("resume-gateway-config", { gateway_id: gw.id });
      assertEquals([again.resumed, again.desired_version], [false, resumed.desired_version]);
    } finally {
      await mcp.close();
      await other.close();
    }
  }, MCP_TEST_LIMITS);
});

Deno.test("mcp versions: a real gateway rolled back answers 404 for an MCP-built pipeline until resume", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, ada, "edge-pinned");
    const gw = await startCloudGateway(cloud);
    const mcp = await connectMcp(cloud, ada.apiToken);
    try {
      assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
      await waitForCloud(gw, (c) => c.sync.last_apply?.version === 1, "the empty version 1");
      const pinned = await mcp.call("rollback-gateway-config", {
        gateway_id: payload.gateway_id,
        version: 1,
      });
      await waitForCloud(
        gw,
        (c) => c.sync.last_apply?.version === pinned.desired_version,
        "the pinned version",
      );

      const built = await echoPipeline(mcp, payload.gateway_id, "agent_echo", "/agent");
      assertMatch(built.attached.notes[0], /answer 404/);
      // The gateway keeps serving the pinned version: the route is not there.
      const refused = await fetch(`${gw.url}/agent/x`, { method: "POST", body: "{}" });
      await refused.body?.cancel();
      assertEquals(refused.status, 404);
      const status = await mcp.call("get-gateway-status", { gateway_id: payload.gateway_id });
      assertEquals(status.pin.version, 1);

      const resumed = await mcp.call("resume-gateway-config", { gateway_id: payload.gateway_id });
      assert(resumed.pipelines.includes("agent_echo"), JSON.stringify(resumed));
      await waitForCloud(
        gw,
        (c) => c.sync.last_apply?.version === resumed.desired_version,
        "the resumed version",
      );
      const echoed = await postJson(`${gw.url}/agent/x`, { a: 1 });
      assertEquals([echoed.status, echoed.pipeline, echoed.data], [200, "agent_echo", { a: 1 }]);
    } finally {
      await mcp.close();
      await gw.stop();
    }
  }, MCP_TEST_LIMITS);
});
