/**
 * Tool behavior beyond the workflow: invalid input and failed operations come back as `isError`
 * results that say how to fix the call, lists are paged with cursors, and the endpoint shares the
 * API's per-token budget (429 with Retry-After).
 */
import { assert, assertEquals } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import { connectMcp, errorText, MCP_TEST_LIMITS } from "./mcp_harness.ts";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

Deno.test("mcp tools: invalid input and failed operations are tool errors that say how to fix the call", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const mcp = await connectMcp(cloud, u.apiToken);
    try {
      const badName = errorText(
        await mcp.raw("create-service", { name: "no spaces", endpoint_types: ["http"] }),
      );
      assert(badName.includes("name") && badName.includes("letters, digits"), badName);
      const noTypes = errorText(await mcp.raw("create-service", { name: "svc" }));
      assert(
        noTypes.includes("endpoint_types: list at least one endpoint or backend type"),
        noTypes,
      );
      assert(noTypes.includes("How to fix"), noTypes);
      const unknownField = errorText(
        await mcp.raw("create-network", { name: "n", prot: 80 }),
      );
      assert(unknownField.includes("prot"), unknownField);

      const svc = (await mcp.call("create-service", {
        name: "svc",
        endpoint_types: ["http"],
        backend_types: ["http"],
      })).record;
      const wrongType = errorText(
        await mcp.raw("create-endpoint", { name: "e", service_id: svc.id, type: "fhir" }),
      );
      assert(
        wrongType.startsWith("validation_failed: type: service `svc` allows endpoint types: http"),
        wrongType,
      );
      assert(wrongType.includes("How to fix: Fix the listed fields"), wrongType);
      const endpoint = (await mcp.call("create-endpoint", {
        name: "e",
        service_id: svc.id,
        type: "http",
        options: { path_prefix: "/x" },
      })).record;
      const inUse = errorText(await mcp.raw("delete-service", { id: svc.id }));
      assert(inUse.startsWith("in_use:"), inUse);
      assert(inUse.includes(endpoint.id), inUse);
      assert(inUse.includes("How to fix: Remove the references"), inUse);
      const missing = errorText(
        await mcp.raw("get-pipeline", { id: crypto.randomUUID() }),
      );
      assert(missing.startsWith("not_found: pipeline not found"), missing);
      assert(missing.includes("list-"), missing);
      const badSpec = await mcp.call("validate-transform-spec", {
        spec: [{ operation: "shiftt", spec: {} }],
      });
      assertEquals(badSpec.valid, false);
      assert(badSpec.problems[0].message.includes("shiftt"), JSON.stringify(badSpec));
      const stale = errorText(
        await mcp.raw("update-endpoint", { id: endpoint.id, if_revision: 7, description: "x" }),
      );
      assert(stale.startsWith("conflict:"), stale);
      const pipeline = (await mcp.call("create-pipeline", { name: "p" })).record;
      const notAttached = errorText(
        await mcp.raw("detach-endpoint", { pipeline_id: pipeline.id, endpoint_id: endpoint.id }),
      );
      assert(notAttached.includes("is not attached to this pipeline"), notAttached);
    } finally {
      await mcp.close();
    }
  }, MCP_TEST_LIMITS);
});

Deno.test("mcp tools: list-* pages with cursors and filters", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const mcp = await connectMcp(cloud, u.apiToken);
    try {
      for (const name of ["net-a", "net-b", "other"]) {
        await mcp.call("create-network", { name, port: 8000 + name.length });
      }
      const first = await mcp.call("list-networks", { limit: 2 });
      assertEquals(first.items.map((n: { name: string }) => n.name), ["net-a", "net-b"]);
      assert(typeof first.next_cursor === "string");
      const second = await mcp.call("list-networks", { limit: 2, cursor: first.next_cursor });
      assertEquals(second.items.map((n: { name: string }) => n.name), ["other"]);
      assertEquals(second.next_cursor, null);
      const filtered = await mcp.call("list-networks", { name: "NET-" });
      assertEquals(filtered.items.length, 2);
      const tooMany = errorText(await mcp.raw("list-networks", { limit: 1000 }));
      assert(tooMany.includes("limit"), tooMany);
    } finally {
      await mcp.close();
    }
  }, MCP_TEST_LIMITS);
});

Deno.test("mcp http: the per-token budget of the API applies (429 with Retry-After)", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const mcp = await connectMcp(cloud, u.apiToken);
    let limited: Error | undefined;
    try {
      for (let i = 0; i < 10 && !limited; i++) {
        await mcp.call("list-gateways").catch((err) => limited = err);
      }
    } finally {
      await mcp.client.close();
    }
    assert(limited, "no request was limited");
    assert(String(limited).includes('"code":"rate_limited"'), String(limited));
    const res = await fetch(`${cloud.url}/mcp/cloud`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${u.apiToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    await res.body?.cancel();
    assertEquals(res.status, 429);
    assert(Number(res.headers.get("retry-after")) >= 1);
  }, { rateLimits: { perToken: { limit: 5, windowSeconds: 60 } } as never });
});

Deno.test("mcp tools: `type` is described for the kind of each create-/update- tool", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const mcp = await connectMcp(cloud, u.apiToken);
    try {
      const tools = (await mcp.client.listTools()).tools as Tool[];
      const typeOf = (name: string) =>
        ((tools.find((t: Tool) => t.name === name)!.inputSchema.properties ?? {}) as Record<
          string,
          { description?: string }
        >).type.description!;
      for (const verb of ["create", "update"]) {
        const middleware = typeOf(`${verb}-middleware`);
        assert(middleware.startsWith("Middleware type: transform, metadata_transform"), middleware);
        assert(middleware.includes("jwt_auth") && !/endpoint|backend|fhir/i.test(middleware));
        const endpoint = typeOf(`${verb}-endpoint`);
        assert(endpoint.startsWith("Endpoint service type") && !endpoint.includes("echo"));
        const backend = typeOf(`${verb}-backend`);
        assert(backend.startsWith("Backend service type") && backend.includes("echo"), backend);
        assert(!backend.includes("transform"), backend);
      }
    } finally {
      await mcp.close();
    }
  });
});
