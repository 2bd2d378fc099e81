/** The resources REST API: checks, references, unique names, pagination, revisions, audit log. */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";

const LIMITS = { rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never };

async function post(cloud: TestCloud, token: string, kind: string, body: unknown) {
  return await call(cloud, "POST", `/api/${kind}`, { token, body });
}

Deno.test("resources: service types, gateway option schemas, JOLT specs and middleware rules are checked", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: t } = await makeUser(cloud, "ada@example.com");
    const svc = (await post(cloud, t, "services", {
      name: "fhir",
      endpoint_types: ["fhir"],
      backend_types: ["fhir", "echo"],
    })).json;
    const noTypes = await post(cloud, t, "services", { name: "empty" });
    assertEquals([noTypes.status, noTypes.json.error.fields[0].field], [422, "endpoint_types"]);

    const wrongType = await post(cloud, t, "endpoints", {
      name: "in",
      service_id: svc.id,
      type: "http",
      options: { path_prefix: "/x" },
    });
    assertEquals(wrongType.status, 422);
    assertEquals(wrongType.json.error.fields, [{
      field: "type",
      message: "service `fhir` allows endpoint types: fhir",
    }]);
    const noPrefix = await post(cloud, t, "endpoints", {
      name: "in",
      service_id: svc.id,
      type: "fhir",
    });
    assertEquals(noPrefix.json.error.fields[0].field, "options.path_prefix");
    const badPrefix = await post(cloud, t, "endpoints", {
      name: "in",
      service_id: svc.id,
      type: "fhir",
      options: { path_prefix: "no-slash", x: 1 },
    });
    assertEquals(badPrefix.json.error.fields.map((f: { field: string }) => f.field).sort(), [
      "options.path_prefix",
      "options.x",
    ]);
    const ep = await post(cloud, t, "endpoints", {
      name: "in",
      service_id: svc.id,
      type: "fhir",
      options: { path_prefix: "/fhir/" },
    });
    assertEquals(ep.status, 201);
    assertEquals(ep.json.options, { path_prefix: "/fhir/" });
    const missingService = await post(cloud, t, "endpoints", {
      name: "in2",
      service_id: crypto.randomUUID(),
      type: "fhir",
      options: { path_prefix: "/b" },
    });
    assertEquals([missingService.status, missingService.json.error.code], [
      422,
      "reference_missing",
    ]);

    const bothUrlAndTargets = await post(cloud, t, "backends", {
      name: "out",
      service_id: svc.id,
      type: "fhir",
      options: { base_url: "http://a" },
      targets: [{ name: "a", url: "http://b" }],
    });
    assertEquals(bothUrlAndTargets.status, 422);
    assertMatch(bothUrlAndTargets.json.error.message, /base_url|targets/);
    const badTarget = await post(cloud, t, "backends", {
      name: "out",
      service_id: svc.id,
      type: "fhir",
      targets: [{ name: "a", url: "ftp://b" }],
    });
    assertEquals(badTarget.json.error.fields[0].field, "targets.0.url");
    const be = await post(cloud, t, "backends", {
      name: "out",
      service_id: svc.id,
      type: "fhir",
      targets: [{ name: "a", url: "http://10.0.0.1/fhir" }, {
        name: "b",
        url: "http://10.0.0.2/fhir",
      }],
      load_balancing: "least_requests",
    });
    assertEquals(be.status, 201, be.text);

    const badSpec = await post(cloud, t, "transforms", {
      name: "x",
      spec: [{ operation: "shiftt", spec: {} }],
    });
    assertEquals([badSpec.status, badSpec.json.error.fields[0].field], [422, "spec.0"]);
    assertMatch(badSpec.json.error.fields[0].message, /unknown operation "shiftt"/);
    const deepBad = await post(cloud, t, "transforms", {
      name: "x",
      spec: [{ operation: "shift", spec: { a: 5 } }],
    });
    assertEquals(deepBad.json.error.fields[0].field, "spec.0.spec.a");
    const tr = await post(cloud, t, "transforms", {
      name: "x",
      spec: [{ operation: "shift", spec: { a: "b" } }],
    });
    assertEquals(tr.status, 201);
    assertMatch(tr.json.sha256, /^[0-9a-f]{64}$/);

    const needsTransform = await post(cloud, t, "middleware", { name: "m", type: "transform" });
    assertEquals(needsTransform.json.error.fields, [{
      field: "transform_id",
      message: "required for middleware of type transform",
    }]);
    const specPath = await post(cloud, t, "middleware", {
      name: "m",
      type: "transform",
      transform_id: tr.json.id,
      options: { spec_path: "x.json" },
    });
    assertEquals(specPath.json.error.fields[0].field, "options.spec_path");
    const badApply = await post(cloud, t, "middleware", {
      name: "m",
      type: "transform",
      transform_id: tr.json.id,
      options: { apply: "sideways" },
    });
    assertEquals(badApply.json.error.fields[0].field, "options.apply");
    const unknownType = await post(cloud, t, "middleware", { name: "m", type: "teleport" });
    assertEquals(unknownType.json.error.fields[0].field, "type");
    const mw = await post(cloud, t, "middleware", {
      name: "m",
      type: "transform",
      transform_id: tr.json.id,
      options: { apply: "both" },
    });
    assertEquals(mw.status, 201);

    const net = await post(cloud, t, "networks", { name: "n", port: 8443, tls_cert_path: "c.pem" });
    assertEquals(net.json.error.fields[0].field, "tls_key_path");
    const h3 = await post(cloud, t, "networks", { name: "n", port: 8443, http3: { port: 8443 } });
    assertEquals(h3.status, 422, "http3 needs certificates");
    assertEquals(
      (await post(cloud, t, "networks", { name: "n", port: 8443, tunnel: { provider: "ngrok" } }))
        .status,
      201,
    );

    // A service may not drop a type its endpoints use.
    const narrow = await call(cloud, "PATCH", `/api/services/${svc.id}`, {
      token: t,
      body: { endpoint_types: ["http"] },
    });
    assertEquals(narrow.status, 422);
    assertEquals(narrow.json.error.fields[0], {
      field: "endpoint_types",
      message: "endpoint `in` of this service has type fhir",
    });

    const preview = await call(cloud, "POST", "/api/transforms/preview", {
      token: t,
      body: { spec: [{ operation: "shift", spec: { a: "b.c" } }], input: { a: 7 } },
    });
    assertEquals(preview.json, { output: { b: { c: 7 } } });
  }, LIMITS);
});

Deno.test("resources: unique names, references, in_use on delete, If-Match, pagination, audit", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: t } = await makeUser(cloud, "ada@example.com");
    const svc = (await post(cloud, t, "services", {
      name: "web",
      endpoint_types: ["http"],
      backend_types: ["echo"],
    })).json;
    const dup = await post(cloud, t, "services", { name: "WEB", endpoint_types: ["http"] });
    assertEquals([dup.status, dup.json.error.code, dup.json.error.fields[0].field], [
      409,
      "name_taken",
      "name",
    ]);
    const ep = (await post(cloud, t, "endpoints", {
      name: "in",
      service_id: svc.id,
      type: "http",
      options: { path_prefix: "/a" },
    })).json;
    const be =
      (await post(cloud, t, "backends", { name: "out", service_id: svc.id, type: "echo" })).json;
    const gw = (await post(cloud, t, "gateways", { code: "gw-1" })).json;
    assertEquals([gw.name, gw.status], ["gw-1", "pending"]);
    const dangling = await post(cloud, t, "pipelines", {
      name: "p",
      endpoint_ids: [ep.id, crypto.randomUUID()],
      backend_ids: [be.id],
    });
    assertEquals([dangling.status, dangling.json.error.fields[0].field], [422, "endpoint_ids.1"]);
    const p = await post(cloud, t, "pipelines", {
      name: "p",
      gateway_id: gw.id,
      endpoint_ids: [ep.id],
      backend_ids: [be.id],
    });
    assertEquals(p.status, 201);
    assertEquals(p.headers.get("etag"), '"1"');
    assertEquals(p.headers.get("location"), `/api/pipelines/${p.json.id}`);

    const inUse = await call(cloud, "DELETE", `/api/endpoints/${ep.id}`, { token: t });
    assertEquals([inUse.status, inUse.json.error.code], [409, "in_use"]);
    assertEquals(inUse.json.error.used_by, [{ kind: "pipelines", id: p.json.id }]);
    assertEquals((await call(cloud, "DELETE", `/api/gateways/${gw.id}`, { token: t })).status, 409);

    // A second pipeline on the same gateway with the same endpoint breaks the gateway's file: refused.
    const clash = await post(cloud, t, "pipelines", {
      name: "p2",
      gateway_id: gw.id,
      endpoint_ids: [ep.id],
      backend_ids: [be.id],
    });
    assertEquals([clash.status, clash.json.error.code], [422, "validation_failed"]);
    assertEquals(clash.json.error.gateway_id, gw.id);
    assertMatch(clash.json.error.message, /already used by pipeline `p`/);
    // Another endpoint whose prefix collides, moved onto the gateway by an update: refused too.
    const ep2 = (await post(cloud, t, "endpoints", {
      name: "in2",
      service_id: svc.id,
      type: "http",
      options: { path_prefix: "/b" },
    })).json;
    const p2 = (await post(cloud, t, "pipelines", {
      name: "p2",
      gateway_id: gw.id,
      endpoint_ids: [ep2.id],
      backend_ids: [be.id],
    })).json;
    const collide = await call(cloud, "PATCH", `/api/endpoints/${ep2.id}`, {
      token: t,
      body: { options: { path_prefix: "/a" } },
    });
    assertEquals(collide.status, 422);
    assertMatch(collide.json.error.message, /path_prefix "\/a" is also served by endpoint `in`/);

    const stale = await call(cloud, "PATCH", `/api/pipelines/${p2.id}`, {
      token: t,
      headers: { "if-match": '"7"' },
      body: { description: "x" },
    });
    assertEquals([stale.status, stale.json.error.code], [409, "conflict"]);
    const fresh = await call(cloud, "PATCH", `/api/pipelines/${p2.id}`, {
      token: t,
      headers: { "if-match": '"1"' },
      body: { description: "x" },
    });
    assertEquals([fresh.status, fresh.json.revision, fresh.headers.get("etag")], [200, 2, '"2"']);
    const rename = await call(cloud, "PATCH", `/api/pipelines/${p2.id}`, {
      token: t,
      body: { name: "P" },
    });
    assertEquals([rename.status, rename.json.error.code], [409, "name_taken"]);
    const renamed = await call(cloud, "PATCH", `/api/pipelines/${p2.id}`, {
      token: t,
      body: { name: "renamed" },
    });
    assertEquals(renamed.json.name, "renamed");
    assertEquals(
      (await post(cloud, t, "pipelines", { name: "p2" })).status,
      201,
      "the old name is free again",
    );

    // Detach, then delete works.
    await call(cloud, "PATCH", `/api/pipelines/${p.json.id}`, {
      token: t,
      body: { endpoint_ids: [] },
    });
    assertEquals(
      (await call(cloud, "DELETE", `/api/endpoints/${ep.id}`, { token: t })).status,
      204,
    );
    assertEquals((await call(cloud, "GET", `/api/endpoints/${ep.id}`, { token: t })).status, 404);

    for (let i = 0; i < 25; i++) {
      await post(cloud, t, "services", {
        name: `svc-${String(i).padStart(2, "0")}`,
        backend_types: ["echo"],
      });
    }
    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page = await call(cloud, "GET", `/api/services?limit=10${q}`, { token: t });
      names.push(...page.json.items.map((s: { name: string }) => s.name));
      cursor = page.json.next_cursor;
      pages++;
    } while (cursor);
    assertEquals(pages, 3);
    assertEquals(names.length, 26);
    assertEquals(names[0], "web", "oldest first");
    const filtered = await call(cloud, "GET", "/api/services?name=SVC-1", { token: t });
    assertEquals(
      filtered.json.items.map((s: { name: string }) => s.name),
      Array.from({ length: 10 }, (_, i) => `svc-1${i}`),
    );
    const byGateway = await call(cloud, "GET", `/api/pipelines?gateway_id=${gw.id}`, { token: t });
    assertEquals(byGateway.json.items.map((x: { name: string }) => x.name).sort(), [
      "p",
      "renamed",
    ]);
    assertEquals((await call(cloud, "GET", "/api/services?limit=0", { token: t })).status, 422);
    assertEquals((await call(cloud, "GET", "/api/services?cursor=%%%", { token: t })).status, 422);

    const audit = await call(cloud, "GET", "/api/audit?limit=200", { token: t });
    const actions = audit.json.items.map((e: { action: string }) => e.action);
    assert(actions.includes("endpoint.deleted") && actions.includes("pipeline.updated"));
    const upd = audit.json.items.find((e: { action: string; resource: { id: string } }) =>
      e.action === "pipeline.updated" && e.resource.id === p2.id
    );
    assertEquals(upd.actor.type, "api_token");
    assertEquals(upd.actor.label, "test (ada@example.com)");
    // 26 services, 2 endpoints, 1 backend, 1 gateway, 3 pipelines, the team and the API token.
    assertEquals(
      audit.json.items.filter((e: { action: string }) => e.action.endsWith(".created")).length,
      35,
    );
    assert(
      Date.parse(audit.json.items[0].at) >= Date.parse(audit.json.items.at(-1).at),
      "newest first",
    );
  }, LIMITS);
});

Deno.test("resources: a literal credential in a secret field is refused; an environment reference is stored", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: t } = await makeUser(cloud, "ada@example.com");
    const svc = (await post(cloud, t, "services", {
      name: "archive",
      endpoint_types: ["http"],
      backend_types: ["storage"],
    })).json;
    const options = {
      root: "s3://archive/in",
      region: "eu-central-1",
      read_pattern: "{path}",
      access_key_id: "${S3_KEY_ID}",
    };
    const literal = await post(cloud, t, "backends", {
      name: "s3",
      service_id: svc.id,
      type: "storage",
      options: { ...options, secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
    });
    assertEquals(literal.status, 422);
    assertEquals(literal.json.error.fields.map((f: { field: string }) => f.field), [
      "options.secret_access_key",
    ]);
    assertMatch(literal.json.error.fields[0].message, /credential cannot be stored in the cloud/);
    assert(!JSON.stringify(literal.json).includes("wJalrXUtnFEMI"), "the value is not echoed");
    const listed = await call(cloud, "GET", "/api/backends", { token: t });
    assert(!listed.text.includes("wJalrXUtnFEMI"), "nothing was stored");

    const reference = await post(cloud, t, "backends", {
      name: "s3",
      service_id: svc.id,
      type: "storage",
      options: { ...options, secret_access_key: "${S3_SECRET}" },
    });
    assertEquals(reference.status, 201, reference.text);
    assertEquals(reference.json.options.secret_access_key, "${S3_SECRET}");
  });
});

Deno.test("resources: a FHIR backend's auth table is validated; a literal client secret is refused, a reference stored", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: t } = await makeUser(cloud, "grace@example.com");
    const svc = (await post(cloud, t, "services", {
      name: "ehr",
      endpoint_types: ["fhir"],
      backend_types: ["fhir"],
    })).json;
    const auth = {
      type: "oauth2_client_credentials",
      token_url: "https://login.hospital.example/oauth2/token",
      client_id: "edge-gateway",
      scopes: ["system/Observation.rs"],
    };
    const create = (a: Record<string, unknown>) =>
      post(cloud, t, "backends", {
        name: "ehr",
        service_id: svc.id,
        type: "fhir",
        options: { base_url: "https://fhir.hospital.example/r4", auth: a },
      });
    const literal = await create({ ...auth, client_secret: "hunter2-literal" });
    assertEquals(literal.status, 422);
    assertEquals(literal.json.error.fields.map((f: { field: string }) => f.field), [
      "options.auth.client_secret",
    ]);
    assert(!JSON.stringify(literal.json).includes("hunter2-literal"));
    const incomplete = await create({ type: "oauth2_client_credentials", client_id: "c" });
    assertEquals(incomplete.status, 422);
    assert(
      incomplete.json.error.fields.some((f: { field: string }) =>
        f.field === "options.auth.token_url"
      ),
      JSON.stringify(incomplete.json),
    );
    const stored = await create({ ...auth, client_secret: "${EHR_CLIENT_SECRET}" });
    assertEquals(stored.status, 201, stored.text);
    assertEquals(stored.json.options.auth.client_secret, "${EHR_CLIENT_SECRET}");
  });
});
