/**
 * The web UI's builder over HTTP (as a browser without script posts its forms): every kind is
 * created, edited, shared and deleted through forms with the API's problems next to the fields;
 * the pipeline builder's list operations, preview and publish; the JOLT editor; configuration
 * versions with diff, rollback and resume as the gateway sees them; the fleet page; assets.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  call,
  makeUser,
  type TestCloud,
  uiRequest,
  uiSession,
  withCloud,
} from "./cloud_harness.ts";
import { cloudEchoPipeline, machineToken } from "./gateway_cloud_support.ts";
import { JOLT_EXAMPLES, previewOf } from "../cloud/ui/transform_editor.tsx";
import { fleetRates } from "../cloud/ui/fleet_pages.tsx";

const LIMITS = { rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never };

/** The id in a `/kind/<id>/edit` or `/kind/<id>` redirect. */
function idOf(location: string | null): string {
  const m = /^\/[a-z]+\/([0-9a-f-]{36})/.exec(location ?? "");
  if (!m) throw new Error(`no id in ${location}`);
  return m[1];
}

/** The problems listed under field `name` of a form page. */
function fieldErrors(html: string, name: string): string {
  const m = new RegExp(`<ul class="field-error" id="f-${name}-err"[^>]*>(.*?)</ul>`, "s").exec(
    html,
  );
  return m ? m[1].replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim() : "";
}

Deno.test("UI builder: every kind through forms, problems beside their fields, share, delete", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const bob = await makeUser(cloud, "bob@example.com", "Cardiology");
    const ui = await uiSession(cloud, ada.user);
    const post = (path: string, form: Record<string, string | string[]>) =>
      uiRequest(cloud, ui, path, form);

    const service = await post("/services/new", {
      name: "fhir",
      description: "FHIR traffic",
      endpoint_types: ["http"],
      backend_types: ["echo"],
    });
    assertEquals(service.status, 303, service.text);
    const serviceId = idOf(service.location);

    // Bad JSON is named under its field, the rest of the form is kept as typed.
    const badJson = await post("/endpoints/new", {
      name: "patients",
      service_id: serviceId,
      type: "http",
      options: '{"path_prefix": ',
    });
    assertEquals(badJson.status, 422);
    assertMatch(fieldErrors(badJson.text, "options"), /not valid JSON/);
    assert(badJson.text.includes('value="patients"'), "the name is kept");
    // The API's own messages, beside the fields they are about.
    const badName = await post("/endpoints/new", {
      name: "bad name!",
      service_id: serviceId,
      type: "http",
      options: "{}",
    });
    assertEquals(badName.status, 422);
    assertMatch(fieldErrors(badName.text, "name"), /use letters, digits/);
    assert(badName.text.includes('aria-invalid="true"'), "the field is marked invalid");
    const noService = await post("/endpoints/new", { name: "x", type: "http", options: "{}" });
    assertEquals(noService.status, 422);
    assertMatch(fieldErrors(noService.text, "service_id"), /UUID/);
    const wrongOption = await post("/endpoints/new", {
      name: "x",
      service_id: serviceId,
      type: "http",
      options: '{"path_prefix": 5}',
    });
    assertEquals(wrongOption.status, 422);
    assert(fieldErrors(wrongOption.text, "options") !== "", wrongOption.text);

    const endpoint = await post("/endpoints/new", {
      name: "patients",
      service_id: serviceId,
      type: "http",
      options: '{"path_prefix": "/patients"}',
    });
    assertEquals(endpoint.status, 303, endpoint.text);
    const endpointId = idOf(endpoint.location);
    const backend = await post("/backends/new", {
      name: "echo",
      service_id: serviceId,
      type: "echo",
      options: "{}",
      targets: "[]",
    });
    assertEquals(backend.status, 303, backend.text);
    const backendId = idOf(backend.location);
    const noTransform = await post("/middleware/new", {
      name: "rename",
      type: "transform",
      options: "{}",
    });
    assertEquals(noTransform.status, 422);
    assertMatch(noTransform.text, /transform_id/);
    const transform = await post("/transforms/new", {
      name: "rename",
      spec: JSON.stringify(JOLT_EXAMPLES[0].spec),
      op: "save",
    });
    assertEquals(transform.status, 303, transform.text);
    const middleware = await post("/middleware/new", {
      name: "rename",
      type: "transform",
      transform_id: idOf(transform.location),
      options: '{"apply": "left"}',
    });
    assertEquals(middleware.status, 303, middleware.text);
    const badPort = await post("/networks/new", { name: "lan", bind: "0.0.0.0", port: "eighty" });
    assertEquals(badPort.status, 422);
    assertMatch(fieldErrors(badPort.text, "port"), /must be a number/);
    assert(badPort.text.includes('value="eighty"'), "the typed text is shown again");
    assertEquals((await post("/networks/new", { name: "lan", port: "8081" })).status, 303);
    const gateway = await post("/gateways/new", { code: "edge-1", name: "", description: "" });
    assertEquals(gateway.status, 303, gateway.text);
    assertMatch(gateway.location!, /^\/gateways\/[0-9a-f-]{36}$/);

    // The API sees what the forms made.
    const endpoints = await call(cloud, "GET", "/api/endpoints", { token: ada.apiToken });
    assertEquals(endpoints.json.items[0].options, { path_prefix: "/patients" });
    const gw = (await call(cloud, "GET", "/api/gateways", { token: ada.apiToken })).json.items[0];
    assertEquals([gw.code, gw.name], ["edge-1", "edge-1"]);

    // Edit; a service may not drop a type an endpoint uses.
    const edited = await post(`/services/${serviceId}/edit`, {
      name: "fhir",
      description: "FHIR R4",
      endpoint_types: ["http"],
      backend_types: ["echo"],
    });
    assertEquals(edited.status, 303);
    assert((await uiRequest(cloud, ui, `/services/${serviceId}/edit`)).text.includes("FHIR R4"));
    const narrowed = await post(`/services/${serviceId}/edit`, {
      name: "fhir",
      endpoint_types: ["fhir"],
      backend_types: ["echo"],
    });
    assertEquals(narrowed.status, 422);
    assertMatch(narrowed.text, /patients/);

    // Delete: refused while used (the users are linked), then done.
    const inUse = await post(`/services/${serviceId}/delete`, {});
    assertEquals(inUse.status, 409);
    assert(inUse.text.includes(`/endpoints/${endpointId}/edit`), "links the endpoint using it");
    assertEquals((await uiRequest(cloud, ui, `/endpoints/${endpointId}/delete`)).status, 200);
    assertEquals((await post(`/endpoints/${endpointId}/delete`, {})).status, 303);
    assertEquals((await uiRequest(cloud, ui, `/endpoints/${endpointId}/edit`)).status, 404);

    // Share with Bob's team read-only: he sees it, cannot change it; then stop sharing.
    const shared = await post(`/backends/${backendId}/share`, {
      team_id: bob.team.id,
      access: "read",
    });
    assertEquals(shared.status, 303);
    const page = await uiRequest(cloud, ui, `/backends/${backendId}/edit`);
    assert(page.text.includes(bob.team.id), "the share is listed");
    const bobUi = await uiSession(cloud, bob.user);
    // Bob's list names the owning team; the record's page has no form.
    assertMatch(
      (await uiRequest(cloud, bobUi, "/backends")).text,
      /data-testid="owner-team">Radiology<\/span>.*read-only/s,
    );
    const bobView = await uiRequest(cloud, bobUi, `/backends/${backendId}/edit`);
    assertMatch(bobView.text, /read-only/);
    assert(!bobView.text.includes('action="/backends/'), "no form on a read-only record");
    const bobEdit = await uiRequest(cloud, bobUi, `/backends/${backendId}/edit`, {
      name: "mine",
      service_id: serviceId,
      type: "echo",
    });
    assertEquals(bobEdit.status, 403);
    assertMatch(bobEdit.text, /read-only/);
    const shareId = /\/shares\/([0-9a-f-]{36})\/revoke/.exec(page.text)![1];
    assertEquals((await post(`/backends/${backendId}/shares/${shareId}/revoke`, {})).status, 303);
    assertEquals((await uiRequest(cloud, bobUi, `/backends/${backendId}/edit`)).status, 404);
    const unknownTeam = await post(`/backends/${backendId}/share`, {
      team_id: crypto.randomUUID(),
      access: "write",
    });
    assertEquals(unknownTeam.status, 422);
    assertMatch(unknownTeam.text, /team not found/);
  }, LIMITS);
});

/** Echo-pipeline parts made through the API, and a session of their owner. */
async function parts(cloud: TestCloud) {
  const ada = await makeUser(cloud, "ada@example.com", "Radiology");
  const token = ada.apiToken;
  const must = async (path: string, body: unknown) => {
    const res = await call(cloud, "POST", path, { token, body });
    if (res.status !== 201) throw new Error(`${path}: ${res.text}`);
    return res.json.id as string;
  };
  const service = await must("/api/services", {
    name: "svc",
    endpoint_types: ["http"],
    backend_types: ["echo"],
  });
  return {
    ada,
    ui: await uiSession(cloud, ada.user),
    gateway: await must("/api/gateways", { code: "edge-1" }),
    endpoint: await must("/api/endpoints", {
      name: "inbound",
      service_id: service,
      type: "http",
      options: { path_prefix: "/in" },
    }),
    cors: await must("/api/middleware", {
      name: "cors",
      type: "cors",
      options: { allow_origins: ["https://app.example.org"] },
    }),
    headers: await must("/api/middleware", {
      name: "headers",
      type: "headers",
      options: { request_set: { "x-from": "gateway" } },
    }),
    backend: await must("/api/backends", { name: "echo", service_id: service, type: "echo" }),
  };
}

/** The ids of the hidden `name` inputs of a page, in order. */
function hiddenList(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(`<input type="hidden" name="${name}" value="([^"]+)"`, "g"))]
    .map((m) => m[1]);
}

Deno.test("UI builder: the pipeline builder adds, orders and removes parts, previews, publishes", async () => {
  await withCloud(async (cloud) => {
    const p = await parts(cloud);
    const step = (form: Record<string, string | string[]>) =>
      uiRequest(cloud, p.ui, "/pipelines/new", {
        name: "intake",
        description: "",
        gateway_id: p.gateway,
        endpoint_ids: [p.endpoint],
        ...form,
      });
    let page = await step({ op: "mw-add", add_middleware: p.cors });
    assertEquals(hiddenList(page.text, "middleware_ids"), [p.cors]);
    page = await step({ op: "mw-add", add_middleware: p.headers, middleware_ids: [p.cors] });
    assertEquals(hiddenList(page.text, "middleware_ids"), [p.cors, p.headers]);
    page = await step({ op: "mw-up:1", middleware_ids: [p.cors, p.headers] });
    assertEquals(hiddenList(page.text, "middleware_ids"), [p.headers, p.cors]);
    page = await step({ op: "mw-down:0", middleware_ids: [p.headers, p.cors] });
    assertEquals(hiddenList(page.text, "middleware_ids"), [p.cors, p.headers]);
    page = await step({ op: "mw-remove:1", middleware_ids: [p.cors, p.headers] });
    assertEquals(hiddenList(page.text, "middleware_ids"), [p.cors]);
    page = await step({ op: "be-add", add_backend: p.backend, middleware_ids: [p.cors] });
    assertEquals(hiddenList(page.text, "backend_ids"), [p.backend]);
    // The preview: this pipeline's TOML, and the gateway's configuration against what it applied
    // (nothing yet), before anything is stored.
    assertMatch(page.text, /data-testid="pipeline-toml">[^<]*\[pipelines\.intake\]/);
    assertMatch(page.text, /<span class="add">\+\[pipelines\.intake\]/);
    assertEquals(
      (await call(cloud, "GET", "/api/pipelines", { token: p.ada.apiToken })).json.items,
      [],
    );

    const published = await step({
      op: "publish",
      middleware_ids: [p.cors],
      backend_ids: [p.backend],
    });
    assertEquals(published.status, 303, published.text);
    const id = idOf(published.location);
    const stored = (await call(cloud, "GET", `/api/pipelines/${id}`, { token: p.ada.apiToken }))
      .json;
    assertEquals(
      [stored.endpoint_ids, stored.middleware_ids, stored.backend_ids, stored.gateway_id],
      [[p.endpoint], [p.cors], [p.backend], p.gateway],
    );
    // Editing starts from the stored pipeline; the diff compares with the gateway's applied
    // version (none yet: the whole file is new).
    const edit = await uiRequest(cloud, p.ui, `/pipelines/${id}/edit`);
    assertEquals(hiddenList(edit.text, "middleware_ids"), [p.cors]);
    const renamed = await uiRequest(cloud, p.ui, `/pipelines/${id}/edit`, {
      name: "intake",
      gateway_id: p.gateway,
      endpoint_ids: [p.endpoint],
      middleware_ids: [p.cors, p.headers],
      backend_ids: [p.backend],
      op: "publish",
    });
    assertEquals(renamed.status, 303);
    // A draft the gateway's validator refuses is not published; the problem is shown.
    const noName = await uiRequest(cloud, p.ui, `/pipelines/${id}/edit`, {
      name: "",
      gateway_id: p.gateway,
      endpoint_ids: [p.endpoint],
      op: "publish",
    });
    assertEquals(noName.status, 422);
    assert(fieldErrors(noName.text, "name") !== "", noName.text.slice(0, 300));
    // A hostile form with thousands of ids is cut at the API's limits before anything is read.
    const flood = await uiRequest(cloud, p.ui, `/pipelines/${id}/edit`, {
      name: "intake",
      middleware_ids: Array.from({ length: 5_000 }, () => crypto.randomUUID()),
      op: "preview",
    });
    assertEquals(flood.status, 422);
    assertMatch(flood.text, /at most 30 entries/);
    assertEquals(hiddenList(flood.text, "middleware_ids").length, 30);
  }, LIMITS);
});

Deno.test("UI builder: versions have diffs; a rollback pins a snapshot the gateway pulls, transforms too; resume", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const payload = await machineToken(cloud, ada, "edge-v");
    const gw = payload.gateway_id;
    const made = await cloudEchoPipeline(cloud, ada, gw, {
      name: "v",
      prefix: "/a",
      spec: [{ operation: "shift", spec: { name: "first" } }],
    });
    const ui = await uiSession(cloud, ada.user);
    const machine = (path: string, init: { method?: string; body?: unknown } = {}) =>
      call(cloud, init.method ?? "GET", path, { token: payload.machine_token, body: init.body });
    const v1 = await machine("/api/gateway/config");
    assertEquals(v1.json.version, 1);
    await machine("/api/gateway/config/apply", {
      method: "POST",
      body: { version: 1, status: "applied" },
    });
    await call(cloud, "PATCH", `/api/endpoints/${made.endpointId}`, {
      token: ada.apiToken,
      body: { options: { path_prefix: "/b" } },
    });
    await call(cloud, "PATCH", `/api/transforms/${made.transformId}`, {
      token: ada.apiToken,
      body: { spec: [{ operation: "shift", spec: { name: "second" } }] },
    });
    const v2 = await machine("/api/gateway/config");
    assertEquals(v2.json.version, 2);

    const list = await uiRequest(cloud, ui, `/gateways/${gw}/versions`);
    assertEquals(list.status, 200);
    assertMatch(list.text, /applied <time/);
    const diff = await uiRequest(cloud, ui, `/gateways/${gw}/versions?from=1&to=2`);
    assertMatch(diff.text, /<span class="del">-path_prefix = &quot;\/a&quot;/);
    assertMatch(diff.text, /<span class="add">\+path_prefix = &quot;\/b&quot;/);

    // Roll back to 1: the gateway pulls version 1's content as version 3, with 1's transform.
    const rolled = await uiRequest(cloud, ui, `/gateways/${gw}/versions/1/rollback`, {});
    assertEquals(rolled.status, 303);
    const v3 = await machine("/api/gateway/config");
    assertEquals(v3.json.version, 3);
    assertMatch(
      (await call(cloud, "GET", "/api/gateway/config", {
        token: payload.machine_token,
        headers: { accept: "application/toml" },
      })).text,
      /path_prefix = "\/a"/,
    );
    const spec = await machine(`/api/gateway/transforms/${made.transformId}`);
    assertEquals(spec.json, [{ operation: "shift", spec: { name: "first" } }]);
    const pinned = await uiRequest(cloud, ui, `/gateways/${gw}/versions`);
    assertMatch(pinned.text, /data-testid="pinned"/);
    assertMatch(pinned.text, /rollback to 1/);
    // Changes to the records wait while pinned.
    await call(cloud, "PATCH", `/api/endpoints/${made.endpointId}`, {
      token: ada.apiToken,
      body: { options: { path_prefix: "/c" } },
    });
    assertEquals((await machine("/api/gateway/config")).json.version, 3);
    // Resume: the records again (a new version with /c and the second spec).
    assertEquals((await uiRequest(cloud, ui, `/gateways/${gw}/versions/resume`, {})).status, 303);
    const v4 = await call(cloud, "GET", "/api/gateway/config", {
      token: payload.machine_token,
      headers: { accept: "application/toml" },
    });
    assertMatch(v4.text, /path_prefix = "\/c"/);
    assertEquals(
      (await machine(`/api/gateway/transforms/${made.transformId}`)).json,
      [{ operation: "shift", spec: { name: "second" } }],
    );
    const audit = await call(cloud, "GET", "/api/audit", { token: ada.apiToken });
    assertMatch(audit.text, /gateway\.config_rolled_back/);
    assertMatch(audit.text, /gateway\.config_resumed/);
  }, LIMITS);
});

Deno.test("UI builder: the JOLT editor's examples run; previews show output or the spec path", async () => {
  await withCloud(async (cloud) => {
    const s = cloud.server.services;
    for (const e of JOLT_EXAMPLES) {
      const out = await previewOf(s, JSON.stringify(e.spec), JSON.stringify(e.input));
      assertEquals(out.problems, [], e.id);
    }
    const fhir = await previewOf(
      s,
      JSON.stringify(JOLT_EXAMPLES[0].spec),
      JSON.stringify(JOLT_EXAMPLES[0].input),
    );
    assertEquals(JSON.parse(fhir.output!).lastName, "Chalmers");
    const dicom = await previewOf(
      s,
      JSON.stringify(JOLT_EXAMPLES[1].spec),
      JSON.stringify(JOLT_EXAMPLES[1].input),
    );
    assertEquals(JSON.parse(dicom.output!), {
      modality: "CT",
      patientName: "Doe^Jane",
      patientId: "PID-12345",
      studyInstanceUid: "1.2.840.113619.2.55.3.604688119.971.1234567890.1",
    });

    const ada = await makeUser(cloud, "ada@example.com");
    const ui = await uiSession(cloud, ada.user);
    const bad = await uiRequest(cloud, ui, "/transforms/preview", {
      spec: '[{"operation":"shift","spec":{"a":"b"}},{"operation":"explode"}]',
      sample: "{}",
    });
    assertEquals(bad.status, 200);
    assertMatch(bad.text, /<code>spec\.1[^<]*<\/code>/);
    const good = await uiRequest(cloud, ui, "/transforms/preview", {
      spec: '[{"operation":"shift","spec":{"a":"b"}}]',
      sample: '{"a": 1}',
    });
    assertMatch(good.text, /data-testid="jolt-output">\{\s*&quot;b&quot;: 1\s*\}/);
    const example = await uiRequest(cloud, ui, "/transforms/new", {
      name: "tags",
      spec: "[]",
      sample: "",
      example: "dicom-json-tags",
      op: "example",
    });
    assertMatch(example.text, /studyInstanceUid/);
    const invalid = await uiRequest(cloud, ui, "/transforms/new", {
      name: "tags",
      spec: '[{"operation":"explode"}]',
      op: "save",
    });
    assertEquals(invalid.status, 422);
    assertMatch(fieldErrors(invalid.text, "spec"), /0/);
  });
});

Deno.test("UI builder: the fleet page charts rates from the status series; restarts do not go negative", async () => {
  const at = (min: number) => Date.UTC(2026, 0, 1, 10, min);
  const sample = (min: number, uptime: number, requests: number, errors: number, ms: number) => ({
    at: at(min),
    uptime_secs: uptime,
    health: "healthy" as const,
    pipelines: [{ name: "p", requests, errors, duration_ms_sum: ms }],
  });
  const r = fleetRates([
    sample(0, 600, 1000, 0, 5000),
    sample(1, 660, 1600, 6, 8000),
    sample(2, 30, 90, 9, 900),
  ]);
  assertEquals(r.requestsPerSecond.map((p) => p[1]), [10, 3]);
  assertEquals(r.errorPercent.map((p) => p[1]), [1, 10]);
  assertEquals(r.latencyMs.map((p) => p[1]), [5, 10]);

  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const payload = await machineToken(cloud, ada, "edge-f");
    const report = (requests: number, errors: number) =>
      call(cloud, "POST", "/api/gateway/status", {
        token: payload.machine_token,
        body: {
          health: "healthy",
          software_version: "1.0.0",
          uptime_secs: 100 + requests,
          config_version: null,
          pipelines: [{ name: "intake", requests, errors, duration_ms_sum: requests * 4 }],
          error_counts: {},
          checks: [{ name: "queue pacs", status: "warn", message: "120 waiting" }],
        },
      });
    assertEquals((await report(0, 0)).status, 200);
    cloud.clock.advance(60_000);
    assertEquals((await report(120, 6)).status, 200);
    // The manual clock also moves with real time: the reports are 60 s apart plus however long the
    // first request took on this machine, so the rate is taken from the samples as stored.
    const [first, second] = await cloud.server.services.store.statusSeries.since(
      ada.team.id,
      payload.gateway_id,
      0,
    );
    const rate = 120 / ((second.at - first.at) / 1000);
    assert(rate > 0 && rate <= 2, `${rate} req/s`);
    const ui = await uiSession(cloud, ada.user);
    const page = await uiRequest(cloud, ui, "/fleet?hours=1");
    assertEquals(page.status, 200);
    assertMatch(page.text, new RegExp(`aria-label="Requests: latest ${rate.toFixed(1)} req/s`));
    assertMatch(page.text, /aria-label="Errors: latest 5\.0 % 5xx/);
    assertMatch(page.text, /aria-label="Mean latency: latest 4\.0 ms/);
    assertMatch(
      page.text,
      new RegExp(`<td>intake</td><td>${rate.toFixed(2).replace(".", "\\.")}</td><td>5\\.0 %</td>`),
    );
    assertMatch(page.text, /queue pacs.*warn.*120 waiting/s);

    // A gateway with more pipelines than a sample keeps: the rest are summed, the totals stay.
    const many = Array.from({ length: 150 }, (_, i) => ({
      name: `p${i}`,
      requests: 2,
      errors: 1,
      duration_ms_sum: 10,
    }));
    await cloud.server.services.store.statusSeries.add(ada.team.id, payload.gateway_id, {
      at: Date.UTC(2030, 0, 1),
      uptime_secs: 1,
      health: "healthy",
      pipelines: many,
    });
    const [kept] = await cloud.server.services.store.statusSeries.since(
      ada.team.id,
      payload.gateway_id,
      Date.UTC(2030, 0, 1),
    );
    assertEquals(kept.pipelines.length, 100);
    assertEquals(kept.pipelines.at(-1), {
      name: "(other)",
      requests: 102,
      errors: 51,
      duration_ms_sum: 510,
    });
  });
});

Deno.test("UI builder: htmx and the favicon come from this origin; the uploaded config downloads with the session", async () => {
  await withCloud(async (cloud) => {
    const js = await fetch(`${cloud.url}/assets/htmx.min.js`);
    assertEquals(js.headers.get("content-type"), "text/javascript; charset=utf-8");
    assertMatch(await js.text(), /htmx/);
    const icon = await fetch(`${cloud.url}/favicon.ico`);
    assertEquals(icon.headers.get("content-type"), "image/svg+xml");
    await icon.body?.cancel();
    const signIn = await fetch(`${cloud.url}/sign-in`);
    assertMatch(signIn.headers.get("content-security-policy")!, /script-src 'self'/);
    assertMatch(await signIn.text(), /<script src="\/assets\/htmx\.min\.js" defer="">/);

    const ada = await makeUser(cloud, "ada@example.com");
    const payload = await machineToken(cloud, ada, "edge-d");
    const toml = "[network]\nport = 8080\n";
    const up = await call(cloud, "PUT", "/api/gateway/config/local", {
      token: payload.machine_token,
      body: toml,
      headers: { "content-type": "application/toml" },
    });
    assertEquals(up.status, 200, up.text);
    const ui = await uiSession(cloud, ada.user);
    const page = await uiRequest(cloud, ui, `/gateways/${payload.gateway_id}`);
    assert(page.text.includes(`href="/gateways/${payload.gateway_id}/reported-config"`));
    const download = await uiRequest(cloud, ui, `/gateways/${payload.gateway_id}/reported-config`);
    assertEquals([download.status, download.text], [200, toml]);
    const anonymous = await fetch(`${cloud.url}/gateways/${payload.gateway_id}/reported-config`, {
      redirect: "manual",
    });
    await anonymous.body?.cancel();
    assertEquals(anonymous.status, 302);
  });
});
