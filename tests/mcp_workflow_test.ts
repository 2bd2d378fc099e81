/**
 * SPEC's typical build workflow through the SDK's own client over Streamable HTTP: ensure a
 * gateway and a service, create endpoints and backends, create the pipeline and attach them, add
 * middleware with a transform, generate TOML, and load that TOML with the gateway's loader.
 */
import { assert, assertEquals } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import { connectMcp, errorText, MCP_TEST_LIMITS } from "./mcp_harness.ts";
import { loadConfigText } from "../gateway/config/mod.ts";

Deno.test("mcp workflow: build a pipeline with tools and load the generated TOML in the gateway loader", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com", "A");
    const mcp = await connectMcp(cloud, u.apiToken);
    try {
      // Ensure a gateway: look it up by code, create it when missing, and again: found.
      const ensureGateway = async () => {
        const found = await mcp.call("list-gateways", { name: "edge-1" });
        return found.items[0] ?? (await mcp.call("create-gateway", { code: "edge-1" })).record;
      };
      const gw = await ensureGateway();
      assertEquals([gw.code, gw.name, gw.status], ["edge-1", "edge-1", "pending"]);
      assertEquals((await ensureGateway()).id, gw.id);
      assert(errorText(await mcp.raw("create-gateway", { code: "edge-1" })).includes("name_taken"));

      // Ensure the service.
      const services = await mcp.call("list-services", { name: "fhir" });
      assertEquals(services.items, []);
      const service = (await mcp.call("create-service", {
        name: "fhir",
        endpoint_types: ["http", "fhir"],
        backend_types: ["http", "fhir"],
      })).record;

      const endpoint = (await mcp.call("create-endpoint", {
        name: "ehr_in",
        service_id: service.id,
        type: "fhir",
        options: { path_prefix: "/fhir" },
      })).record;
      const backend = (await mcp.call("create-backend", {
        name: "fhir_store",
        service_id: service.id,
        type: "http",
        options: { base_url: "http://10.0.0.5:8080" },
      })).record;

      const pipeline = (await mcp.call("create-pipeline", {
        name: "ingest",
        gateway_id: gw.id,
      })).record;
      await mcp.call("attach-endpoint", { pipeline_id: pipeline.id, endpoint_id: endpoint.id });
      const attached = await mcp.call("attach-backend", {
        pipeline_id: pipeline.id,
        backend_id: backend.id,
      });
      assertEquals(attached.record.endpoint_ids, [endpoint.id]);
      assertEquals(attached.record.backend_ids, [backend.id]);

      // Middleware with a transform: validate and preview the spec first.
      const spec = [{ operation: "shift", spec: { id: "identifier", name: "patient.name" } }];
      assertEquals(await mcp.call("validate-transform-spec", { spec }), {
        valid: true,
        problems: [],
      });
      assertEquals(
        (await mcp.call("preview-transform", { spec, input: { id: "7", name: "Ada" } })).output,
        { identifier: "7", patient: { name: "Ada" } },
      );
      const transform = (await mcp.call("create-transform", { name: "to_fhir", spec })).record;
      const stamp = (await mcp.call("create-middleware", {
        name: "stamp",
        type: "transform",
        transform_id: transform.id,
        options: { apply: "left" },
      })).record;
      const reshape = (await mcp.call("create-middleware", {
        name: "reshape",
        type: "transform",
        transform_id: transform.id,
        options: { apply: "both", fail_on_error: false },
      })).record;
      await mcp.call("attach-middleware", { pipeline_id: pipeline.id, middleware_id: stamp.id });
      const ordered = await mcp.call("attach-middleware", {
        pipeline_id: pipeline.id,
        middleware_id: reshape.id,
        position: 0,
      });
      assertEquals(ordered.record.middleware_ids, [reshape.id, stamp.id]);

      // Generate TOML for review and load it with the gateway's loader.
      const pipeToml = await mcp.call("generate-pipeline-toml", { pipeline_id: pipeline.id });
      assertEquals(pipeToml.problems, []);
      const gwToml = await mcp.call("generate-gateway-toml", { gateway_id: gw.id });
      // Version 1 was the empty configuration at creation; the pipeline made version 2.
      assertEquals([gwToml.problems, gwToml.version], [[], 2]);
      assertEquals(gwToml.transforms.map((t: { id: string }) => t.id), [transform.id]);
      for (const text of [pipeToml.toml, gwToml.toml]) {
        const loaded = await loadConfigText(text, "gateway.toml");
        assertEquals(loaded.problems, []);
        const config = loaded.config!;
        assertEquals(config.pipelines.ingest.endpoints, ["ehr_in"]);
        assertEquals(config.pipelines.ingest.middleware, ["reshape", "stamp"]);
        assertEquals(config.pipelines.ingest.backends, ["fhir_store"]);
        assertEquals(config.endpoints.ehr_in.service, "fhir");
        assertEquals(config.backends.fhir_store.options.base_url, "http://10.0.0.5:8080");
        assertEquals(config.middleware.reshape.options.spec_path, `${transform.id}.json`);
        assertEquals(config.middleware.reshape.options.apply, "both");
      }

      const versions = await mcp.call("get-gateway-config-versions", { gateway_id: gw.id });
      assertEquals([versions.desired_version, versions.applied_version], [2, null]);
      const status = await mcp.call("get-gateway-status", { gateway_id: gw.id });
      assertEquals([status.status, status.health, status.code], ["pending", null, "edge-1"]);

      // Detach moves things back out; the pipeline keeps the rest.
      const detached = await mcp.call("detach-middleware", {
        pipeline_id: pipeline.id,
        middleware_id: stamp.id,
      });
      assertEquals(detached.record.middleware_ids, [reshape.id]);
    } finally {
      await mcp.close();
    }
  }, MCP_TEST_LIMITS);
});
