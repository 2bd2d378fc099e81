/**
 * The TOML a gateway pulls from the cloud loads in the gateway's own config loader, and a gateway
 * running it (with the transforms it downloaded) moves traffic through the cloud-built pipeline.
 */
import { assert, assertEquals } from "./assert.ts";
import { call, createExamples, makeUser, withCloud } from "./cloud_harness.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { loadConfigFile } from "../gateway/config/mod.ts";
import { validateConfigText } from "../shared/gateway_config/mod.ts";
import { parseSpec } from "../shared/jolt/mod.ts";

Deno.test("cloud TOML: the documented example set loads in the gateway's config loader", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const recs = await createExamples(cloud, u.apiToken);
    const payload = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: u.apiToken,
      body: { gateway_code: recs.gateways.code },
    })).json;
    assertEquals(payload.gateway_id, recs.gateways.id);
    const pulled =
      (await call(cloud, "GET", "/api/gateway/config", { token: payload.machine_token })).json;
    assertEquals(validateConfigText(pulled.toml, "gateway.toml").problems, []);

    const dir = await Deno.makeTempDir({ prefix: "cloud-toml-" });
    try {
      await Deno.writeTextFile(`${dir}/gateway.toml`, pulled.toml);
      await Deno.mkdir(`${dir}/transforms`);
      for (const t of pulled.transforms) {
        const res = await fetch(t.url, {
          headers: { authorization: `Bearer ${payload.machine_token}` },
        });
        await Deno.writeTextFile(`${dir}/transforms/${t.file}`, await res.text());
      }
      const loaded = await loadConfigFile(`${dir}/gateway.toml`);
      assertEquals(loaded.problems, []);
      const config = loaded.config!;
      assertEquals(config.cloud, {
        enabled: true,
        url: cloud.url,
        state_dir: `${dir}/state`,
        status_interval_secs: 60,
        allowed_env: [],
        // Relative state keys are resolved when the file is loaded (GATEWAY_STATE_DIR, else the
        // configuration's directory).
        data_dir: `${dir}/data`,
      });
      assertEquals(config.pipelines.fhir_ingest.endpoints, ["fhir_in"]);
      assertEquals(config.pipelines.fhir_ingest.middleware, ["to_fhir"]);
      assertEquals(config.pipelines.fhir_ingest.backends, ["fhir_server"]);
      assertEquals(config.endpoints.fhir_in.networks, ["public"]);
      assertEquals([config.network.public.port, config.network.public.http3?.port], [8443, 8443]);
      assertEquals(config.backends.fhir_server.targets, ["fhir_server_a", "fhir_server_b"]);
      assertEquals(config.targets.fhir_server_b.url, "http://10.0.0.6:8080/fhir");
      const specPath = config.middleware.to_fhir.options.spec_path as string;
      assertEquals(specPath, `${recs.transforms.id}.json`);
      const spec = parseSpec(await Deno.readTextFile(`${config.transforms_path}/${specPath}`));
      assertEquals(spec.apply({ id: "7", name: { first: "Ada", last: "Lovelace" } }), {
        id: "7",
        name: [{ given: ["Ada"], family: "Lovelace" }],
        resourceType: "Patient",
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("cloud TOML: a gateway runs the pulled configuration and applies the pulled transform", async () => {
  const upstream = startUpstream();
  try {
    await withCloud(async (cloud) => {
      const u = await makeUser(cloud, "ada@example.com");
      const t = u.apiToken;
      const post = async (kind: string, body: unknown) => {
        const res = await call(cloud, "POST", `/api/${kind}`, { token: t, body });
        assertEquals(res.status, 201, res.text);
        return res.json;
      };
      const gw = (await call(cloud, "POST", "/api/gateway/authorize", {
        token: t,
        body: { gateway_code: "e2e" },
      })).json;
      const svc = await post("services", {
        name: "web",
        endpoint_types: ["http"],
        backend_types: ["http"],
      });
      const ep = await post("endpoints", {
        name: "api",
        service_id: svc.id,
        type: "http",
        options: { path_prefix: "/api" },
      });
      const be = await post("backends", {
        name: "up",
        service_id: svc.id,
        type: "http",
        options: { base_url: upstream.url },
      });
      const tr = await post("transforms", {
        name: "rename",
        spec: [{ operation: "shift", spec: { a: "renamed" } }],
      });
      const mw = await post("middleware", {
        name: "reshape",
        type: "transform",
        transform_id: tr.id,
      });
      await post("pipelines", {
        name: "main",
        gateway_id: gw.gateway_id,
        endpoint_ids: [ep.id],
        middleware_ids: [mw.id],
        backend_ids: [be.id],
      });
      const pulled =
        (await call(cloud, "GET", "/api/gateway/config", { token: gw.machine_token })).json;
      const files: Record<string, string> = {};
      for (const x of pulled.transforms) {
        files[`transforms/${x.file}`] =
          (await call(cloud, "GET", `/api/gateway/transforms/${x.id}`, { token: gw.machine_token }))
            .text;
      }
      const gateway = await startTestGateway(pulled.toml, { files });
      try {
        const res = await fetch(`${gateway.url}/api/things`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ a: 42 }),
        });
        assertEquals(res.status, 200);
        await res.body?.cancel();
        const got = upstream.received.at(-1)!;
        assertEquals(new URL(got.url).pathname, "/things");
        assertEquals(JSON.parse(new TextDecoder().decode(got.body)), { renamed: 42 });
        assert(gateway.logs.every((l) => !l.includes('"level":"error"')), gateway.logs.join("\n"));
      } finally {
        await gateway.stop();
      }
      const report = await call(cloud, "POST", "/api/gateway/config/apply", {
        token: gw.machine_token,
        body: { version: pulled.version, status: "applied" },
      });
      assertEquals(report.json.status, "online");
    });
  } finally {
    await upstream.stop();
  }
});
