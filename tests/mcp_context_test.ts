/**
 * The MCP server's context for agents, through the SDK's client: the configuration reference and
 * each gateway's configuration as resources (listed per team, read, completed), the build-pipeline
 * prompt with its arguments completed from the caller's team, logging/setLevel with tool
 * failures logged to the client, and resource subscriptions notified of configuration changes.
 */
import type {
  LoggingMessageNotification,
  ResourceUpdatedNotification,
} from "@modelcontextprotocol/sdk/types.js";
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { waitFor } from "./support/mod.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import { connectMcp, MCP_TEST_LIMITS } from "./mcp_harness.ts";
import { cloudEchoPipeline } from "./gateway_cloud_support.ts";

Deno.test("mcp context: resources, the build-pipeline prompt, completions and logging", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const bob = await makeUser(cloud, "bob@example.com", "Lab");
    const mcp = await connectMcp(cloud, ada.apiToken);
    const other = await connectMcp(cloud, bob.apiToken);
    try {
      const caps = mcp.client.getServerCapabilities()!;
      assert(caps.resources && caps.prompts && caps.completions && caps.logging);
      const gw = (await mcp.call("create-gateway", { name: "edge-ct", code: "edge-ct" })).record;
      await mcp.call("create-service", {
        name: "fhir-proxy",
        endpoint_types: ["fhir"],
        backend_types: ["fhir"],
      });
      await other.call("create-gateway", { name: "edge-lab", code: "edge-lab" });

      // Resources: the reference, and the team's gateways only.
      const listed = await mcp.client.listResources();
      const uris = listed.resources.map((r: { uri: string }) => r.uri);
      assert(uris.includes("docs://gateway/configuration-reference"), uris.join(", "));
      assert(uris.includes(`gateway://${gw.id}/configuration`));
      assert(uris.includes(`gateway://${gw.id}/applied-configuration`));
      assertEquals(
        uris.filter((u: string) => u.startsWith("gateway://")).length,
        2,
        "not bob's gateway",
      );
      const reference = await mcp.client.readResource({
        uri: "docs://gateway/configuration-reference",
      });
      assertMatch(
        (reference.contents[0] as { text: string }).text,
        /### `\[backends\.<name>\.queue\]`/,
      );
      const config = await mcp.client.readResource({ uri: `gateway://${gw.id}/configuration` });
      assertMatch(
        (config.contents[0] as { text: string }).text,
        /^# gateway edge-ct \(edge-ct\): configuration version \d+, applied by the gateway: none yet/,
      );
      // The applied configuration: nothing yet; then what the gateway reported applying.
      const appliedUri = `gateway://${gw.id}/applied-configuration`;
      const readApplied = async () =>
        ((await mcp.client.readResource({ uri: appliedUri })).contents[0] as { text: string }).text;
      assertMatch(await readApplied(), /has not applied a configuration from the cloud yet/);
      const machine = (await call(cloud, "POST", "/api/gateway/authorize", {
        token: ada.apiToken,
        body: { gateway_code: "edge-ct" },
      })).json;
      const pulled = await call(cloud, "GET", "/api/gateway/config", {
        token: machine.machine_token,
      });
      await call(cloud, "POST", "/api/gateway/config/apply", {
        token: machine.machine_token,
        body: { version: pulled.json.version, status: "applied" },
      });
      const applied = await readApplied();
      assertMatch(applied, new RegExp(`applied version ${pulled.json.version} at 20`));
      assert(applied.includes(pulled.json.toml), applied);
      const bobs = await other.client.listResources();
      const bobGateway = bobs.resources.find((r: { uri: string }) =>
        r.uri.startsWith("gateway://")
      )!;
      const foreign = await mcp.client.readResource({ uri: bobGateway.uri }).then(
        () => "read",
        (err: Error) => err.message,
      );
      assertMatch(foreign, /no gateway .* in your team/);

      // The prompt, its arguments completed from the caller's own team.
      const prompts = await mcp.client.listPrompts();
      assertEquals(prompts.prompts.map((p: { name: string }) => p.name), ["build-pipeline"]);
      const complete = async (argument: string, value: string) =>
        (await mcp.client.complete({
          ref: { type: "ref/prompt", name: "build-pipeline" },
          argument: { name: argument, value },
        })).completion.values;
      assertEquals(await complete("gateway", "edge"), ["edge-ct"]);
      assertEquals(await complete("service", "f"), ["fhir-proxy"]);
      assertEquals(await complete("inbound", "dic"), ["dicom_scp", "dicomweb"]);
      // The types come from the gateway's registry: the hl7 endpoint and backend are offered.
      assertEquals(await complete("inbound", "hl"), ["hl7"]);
      assertEquals(await complete("outbound", "h"), ["hl7", "http", "http3"]);
      const ids = await mcp.client.complete({
        ref: { type: "ref/resource", uri: "gateway://{gateway_id}/configuration" },
        argument: { name: "gateway_id", value: gw.id.slice(0, 4) },
      });
      assertEquals(ids.completion.values, [gw.id]);
      const prompt = await mcp.client.getPrompt({
        name: "build-pipeline",
        arguments: { gateway: "edge-ct", inbound: "fhir", outbound: "fhir", service: "fhir-proxy" },
      });
      const text = (prompt.messages[0].content as { text: string }).text;
      assertMatch(text, /on gateway "edge-ct" that receives fhir and sends to fhir/);
      assertMatch(text, /Reuse the service "fhir-proxy"/);
      assertMatch(text, /generate-pipeline-toml/);

      // Logging: at "warning", a failed tool call is logged to the client.
      const logs: LoggingMessageNotification["params"][] = [];
      mcp.client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (n: LoggingMessageNotification) => {
          logs.push(n.params);
        },
      );
      await mcp.client.setLoggingLevel("warning");
      const failed = await mcp.raw("get-gateway-status", { gateway_id: crypto.randomUUID() });
      assert(failed.isError);
      await waitFor(() => Promise.resolve(logs.length > 0), {
        timeoutMs: 10_000,
        intervalMs: 10,
        description: "the warning logged to the client",
      });
      assertEquals(logs[0]?.level, "warning");
      assertEquals(logs[0]?.logger, "get-gateway-status");
      assertMatch(JSON.stringify(logs[0]?.data), /not found/);
      // At "error", warnings are not sent: back at "warning", the next failure's warning is the
      // only one that follows (no waiting for something not to happen).
      await mcp.client.setLoggingLevel("error");
      await mcp.raw("get-gateway-status", { gateway_id: crypto.randomUUID() });
      await mcp.client.setLoggingLevel("warning");
      await mcp.raw("get-gateway-status", { gateway_id: crypto.randomUUID() });
      // Sent after any warning of the call at "error" level would have been.
      await waitFor(() => Promise.resolve(logs.length > 1), {
        timeoutMs: 10_000,
        intervalMs: 10,
        description: "the warning after the level is back",
      });
      assertEquals(logs.length, 2, "nothing was sent at error level");
    } finally {
      await mcp.close();
      await other.close();
    }
  }, MCP_TEST_LIMITS);
});

Deno.test("mcp context: resources/subscribe notifies configuration changes of the team's gateways", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const bob = await makeUser(cloud, "bob@example.com", "Lab");
    const mcp = await connectMcp(cloud, ada.apiToken);
    const other = await connectMcp(cloud, bob.apiToken);
    try {
      assertEquals(mcp.client.getServerCapabilities()!.resources?.subscribe, true);
      const updates: string[] = [];
      const waiters: { uri: string; resolve: () => void }[] = [];
      mcp.client.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        (n: ResourceUpdatedNotification) => {
          updates.push(n.params.uri);
          for (const w of waiters.filter((w) => w.uri === n.params.uri)) w.resolve();
        },
      );
      /** Resolves at the next update of `uri` (rejects after 10 s). */
      const nextUpdate = (uri: string) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no update of ${uri}`)), 10_000);
          waiters.push({ uri, resolve: () => (clearTimeout(timer), resolve()) });
        });

      const gw = (await mcp.call("create-gateway", { code: "edge-sub" })).record;
      const bobs = (await other.call("create-gateway", { code: "edge-bob" })).record;
      const configUri = `gateway://${gw.id}/configuration`;
      const appliedUri = `gateway://${gw.id}/applied-configuration`;
      const bobUri = `gateway://${bobs.id}/configuration`;
      for (const uri of [configUri, appliedUri, bobUri, "test://watched-resource"]) {
        assertEquals(await mcp.client.subscribeResource({ uri }), {});
      }
      assertEquals(await mcp.client.subscribeResource({ uri: configUri }), {}, "idempotent");

      // A change of the records (here through the REST API) makes a new configuration version.
      const changed = nextUpdate(configUri);
      await cloudEchoPipeline(cloud, ada, gw.id, { name: "p1", prefix: "/p1" });
      await changed;

      // The gateway reports applying a version: the applied configuration changed.
      const machine = (await call(cloud, "POST", "/api/gateway/authorize", {
        token: ada.apiToken,
        body: { gateway_code: "edge-sub" },
      })).json;
      const pulled = await call(cloud, "GET", "/api/gateway/config", {
        token: machine.machine_token,
      });
      const applied = nextUpdate(appliedUri);
      await call(cloud, "POST", "/api/gateway/config/apply", {
        token: machine.machine_token,
        body: { version: pulled.json.version, status: "applied" },
      });
      await applied;

      // After unsubscribing, changes of that resource are not sent; the other one still is.
      assertEquals(await mcp.client.unsubscribeResource({ uri: configUri }), {});
      assertEquals(await mcp.client.unsubscribeResource({ uri: "test://never" }), {});
      const before = updates.filter((u) => u === configUri).length;
      await cloudEchoPipeline(cloud, ada, gw.id, { name: "p2", prefix: "/p2" });
      await cloudEchoPipeline(cloud, bob, bobs.id, { name: "bob_p", prefix: "/bob" });
      const again = nextUpdate(appliedUri);
      const next = await call(cloud, "GET", "/api/gateway/config", {
        token: machine.machine_token,
      });
      await call(cloud, "POST", "/api/gateway/config/apply", {
        token: machine.machine_token,
        body: { version: next.json.version, status: "applied" },
      });
      await again;
      assertEquals(updates.filter((u) => u === configUri).length, before, "unsubscribed");
      assert(!updates.includes(bobUri), "another team's gateway is never reported");
      assert(!updates.includes("test://watched-resource"));
    } finally {
      await mcp.close();
      await other.close();
    }
  }, MCP_TEST_LIMITS);
});
