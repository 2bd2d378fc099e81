/**
 * The team isolation matrix extended to every MCP tool: team B calls each tool with team A's ids.
 * Reading, changing or deleting A's records is "not found", referencing them is refused, lists
 * never show them, and not one KV entry of team A changes. A tool added later without a case here
 * fails this test. Then shares: they grant exactly what they say through the tools too.
 */
import { assert, assertEquals } from "./assert.ts";
import { call, createExamples, makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";
import { connectMcp, errorText, MCP_TEST_LIMITS } from "./mcp_harness.ts";
import { K, RESOURCE_KINDS } from "../cloud/store/mod.ts";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** Every KV entry of a team, with versionstamps. */
async function snapshot(cloud: TestCloud, teamId: string): Promise<string> {
  const rows: unknown[] = [];
  for await (const e of cloud.server.services.store.kv.list({ prefix: K.teamPrefix(teamId) })) {
    rows.push([e.key, e.value, e.versionstamp]);
  }
  return JSON.stringify(rows, (_k, v) => typeof v === "bigint" ? v.toString() : v);
}

const ONE: Record<string, string> = {
  gateways: "gateway",
  services: "service",
  endpoints: "endpoint",
  backends: "backend",
  middleware: "middleware",
  transforms: "transform",
  pipelines: "pipeline",
  networks: "network",
};

type Expect = "not_found" | "reference_missing" | "ok";

Deno.test("mcp isolation: every tool answers not found for another team's records, which stay unchanged", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const c = await makeUser(cloud, "carol@example.com", "C");
    const recs = await createExamples(cloud, a.apiToken);
    const aShare = (await call(cloud, "POST", "/api/shares", {
      token: a.apiToken,
      body: {
        resource_kind: "transforms",
        resource_id: recs.transforms.id,
        team_id: c.team.id,
        access: "read",
      },
    })).json;
    const aIds = [...RESOURCE_KINDS.map((k) => recs[k].id as string), aShare.id];
    const mcp = await connectMcp(cloud, b.apiToken);
    try {
      const bService = (await mcp.call("create-service", {
        name: "b_svc",
        endpoint_types: ["http"],
        backend_types: ["http"],
      })).record;
      const bPipeline = (await mcp.call("create-pipeline", { name: "b_pipe" })).record;
      const before = await snapshot(cloud, a.team.id);

      const cases: Record<string, { args: Record<string, unknown>; expect: Expect }> = {};
      for (const kind of RESOURCE_KINDS) {
        const one = ONE[kind];
        const id = recs[kind].id;
        cases[`list-${kind}`] = { args: {}, expect: "ok" };
        cases[`get-${one}`] = { args: { id }, expect: "not_found" };
        cases[`update-${one}`] = { args: { id, description: "changed by B" }, expect: "not_found" };
        cases[`delete-${one}`] = { args: { id }, expect: "not_found" };
      }
      // Creating in B is fine (names are per team); referencing A's records is refused.
      cases["create-gateway"] = { args: { code: recs.gateways.code }, expect: "ok" };
      cases["create-service"] = {
        args: { name: recs.services.name, endpoint_types: ["http"] },
        expect: "ok",
      };
      cases["create-network"] = { args: { name: recs.networks.name }, expect: "ok" };
      cases["create-transform"] = {
        args: { name: recs.transforms.name, spec: [{ operation: "shift", spec: { a: "b" } }] },
        expect: "ok",
      };
      cases["create-endpoint"] = {
        args: { name: "e", service_id: recs.services.id, type: "http" },
        expect: "reference_missing",
      };
      cases["create-backend"] = {
        args: { name: "b", service_id: recs.services.id, type: "echo" },
        expect: "reference_missing",
      };
      cases["create-middleware"] = {
        args: { name: "m", type: "transform", transform_id: recs.transforms.id },
        expect: "reference_missing",
      };
      cases["create-pipeline"] = {
        args: { name: "p", gateway_id: recs.gateways.id, endpoint_ids: [recs.endpoints.id] },
        expect: "reference_missing",
      };
      for (const part of ["endpoint", "backend", "middleware"]) {
        const partId = recs[part === "middleware" ? "middleware" : `${part}s` as "endpoints"].id;
        cases[`attach-${part}`] = {
          args: { pipeline_id: recs.pipelines.id, [`${part}_id`]: partId },
          expect: "not_found",
        };
        cases[`detach-${part}`] = {
          args: { pipeline_id: recs.pipelines.id, [`${part}_id`]: partId },
          expect: "not_found",
        };
      }
      cases["share-resource"] = {
        args: {
          resource_kind: "pipelines",
          resource_id: recs.pipelines.id,
          team_id: b.team.id,
          access: "write",
        },
        expect: "not_found",
      };
      cases["list-shares"] = { args: { direction: "incoming" }, expect: "ok" };
      cases["revoke-share"] = { args: { share_id: aShare.id }, expect: "not_found" };
      cases["validate-transform-spec"] = {
        args: { spec: [{ operation: "shift", spec: { a: "b" } }] },
        expect: "ok",
      };
      cases["preview-transform"] = {
        args: { transform_id: recs.transforms.id, input: { a: 1 } },
        expect: "not_found",
      };
      for (
        const t of [
          "get-gateway-status",
          "get-gateway-config-versions",
          "list-gateway-config-versions",
          "resume-gateway-config",
        ]
      ) {
        cases[t] = { args: { gateway_id: recs.gateways.id }, expect: "not_found" };
      }
      cases["rollback-gateway-config"] = {
        args: { gateway_id: recs.gateways.id, version: 1 },
        expect: "not_found",
      };
      cases["generate-gateway-toml"] = {
        args: { gateway_id: recs.gateways.id },
        expect: "not_found",
      };
      cases["generate-pipeline-toml"] = {
        args: { pipeline_id: recs.pipelines.id },
        expect: "not_found",
      };

      const tools = (await mcp.client.listTools()).tools as Tool[];
      const missing = tools.map((t) => t.name).filter((n) => !cases[n]);
      assertEquals(missing, [], "tools without an isolation case");

      for (const [name, { args, expect }] of Object.entries(cases)) {
        const res = await mcp.raw(name, args);
        const text = JSON.stringify(res);
        assertEquals(
          aIds.filter((id) => text.includes(id) && !JSON.stringify(args).includes(id)),
          [],
          `${name} leaked an id of team A: ${text}`,
        );
        if (expect === "ok") {
          assert(!res.isError, `${name}: ${text}`);
          const record = res.structuredContent.record;
          if (record) assertEquals(record.team_id, b.team.id, name);
        } else {
          assert(errorText(res).startsWith(`${expect}:`), `${name}: ${errorText(res)}`);
        }
      }
      // B's own pipeline cannot take A's endpoint, backend or middleware either.
      for (const [part, id] of [["endpoint", recs.endpoints.id], ["backend", recs.backends.id]]) {
        const res = await mcp.raw(`attach-${part}`, {
          pipeline_id: bPipeline.id,
          [`${part}_id`]: id,
        });
        assert(errorText(res).startsWith("reference_missing:"), errorText(res));
      }
      assertEquals((await mcp.call("get-service", { id: bService.id })).access, "owner");
      assertEquals(await snapshot(cloud, a.team.id), before, "team A's records changed");
    } finally {
      await mcp.close();
    }
  }, MCP_TEST_LIMITS);
});

Deno.test("mcp isolation: shares grant exactly read or write through the tools, never delete", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const ma = await connectMcp(cloud, a.apiToken);
    const mb = await connectMcp(cloud, b.apiToken);
    try {
      const spec = [{ operation: "shift", spec: { a: "b" } }];
      const t = (await ma.call("create-transform", { name: "t", spec })).record;
      assert(errorText(await mb.raw("get-transform", { id: t.id })).startsWith("not_found:"));
      const share = (await ma.call("share-resource", {
        resource_kind: "transforms",
        resource_id: t.id,
        team_id: b.team.id,
        access: "read",
      })).share;
      assertEquals((await ma.call("list-shares", {})).items.map((s: { id: string }) => s.id), [
        share.id,
      ]);
      assertEquals(
        (await mb.call("list-shares", { direction: "incoming" })).items[0].resource_id,
        t.id,
      );
      const got = await mb.call("get-transform", { id: t.id });
      assertEquals([got.access, got.record.name], ["read", "t"]);
      assertEquals(
        (await mb.call("preview-transform", { transform_id: t.id, input: { a: 5 } })).output,
        { b: 5 },
      );
      assert(
        errorText(await mb.raw("update-transform", { id: t.id, description: "x" }))
          .startsWith("forbidden:"),
      );
      assert(errorText(await mb.raw("delete-transform", { id: t.id })).startsWith("forbidden:"));
      await ma.call("revoke-share", { share_id: share.id });
      await ma.call("share-resource", {
        resource_kind: "transforms",
        resource_id: t.id,
        team_id: b.team.id,
        access: "write",
      });
      const updated = await mb.call("update-transform", { id: t.id, description: "by B" });
      assertEquals([updated.access, updated.record.description], ["write", "by B"]);
      assert(errorText(await mb.raw("delete-transform", { id: t.id })).startsWith("forbidden:"));
      assertEquals((await ma.call("get-transform", { id: t.id })).record.revision, 2);
    } finally {
      await ma.close();
      await mb.close();
    }
  }, MCP_TEST_LIMITS);
});
