/** The fhir endpoint and backend: OperationOutcome errors, 415, `_format`, response validation. */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { requirePeer, startNginx } from "./support/mod.ts";

function fhirConfig(baseUrl: string): string {
  return `
[endpoints.fhir]
service = "fhir"
[endpoints.fhir.options]
path_prefix = "/fhir"
[backends.server]
service = "fhir"
retries = 0
[backends.server.options]
base_url = "${baseUrl}"
[pipelines.fhir]
endpoints = ["fhir"]
backends = ["server"]
`;
}

Deno.test("fhir: search parameters and $operations pass through; _format sets Accept", async () => {
  const up = startUpstream((req) =>
    Response.json({ resourceType: "Bundle", url: req.url, accept: req.headers.get("accept") }, {
      headers: { "content-type": "application/fhir+json" },
    })
  );
  const gw = await startTestGateway(fhirConfig(up.url + "/r4"));
  try {
    const res = await fetch(
      `${gw.url}/fhir/Patient?name:exact=Doe&birthdate=ge1970-01-01&_format=json&_count=10`,
    );
    assertEquals(res.status, 200);
    const body = await res.json();
    assertEquals(
      new URL(body.url).pathname + new URL(body.url).search,
      // The client's query bytes, not a re-encoding of them.
      "/r4/Patient?name:exact=Doe&birthdate=ge1970-01-01&_format=json&_count=10",
    );
    assertEquals(body.accept, "application/fhir+json");
    const op = await fetch(`${gw.url}/fhir/Patient/123/$everything`);
    assertMatch((await op.json()).url, /\/r4\/Patient\/123\/\$everything$/);
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("fhir: a non-FHIR body on create is 415 OperationOutcome", async () => {
  const up = startUpstream();
  const gw = await startTestGateway(fhirConfig(up.url));
  try {
    const res = await fetch(`${gw.url}/fhir/Patient`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    assertEquals(res.status, 415);
    assertEquals(res.headers.get("content-type"), "application/fhir+json");
    const oo = await res.json();
    assertEquals(oo.resourceType, "OperationOutcome");
    assertEquals(oo.issue[0].code, "not-supported");
    assertEquals(oo.issue[0].details.text, "unsupported_media_type");
    assertMatch(oo.issue[0].diagnostics, new RegExp(res.headers.get("x-request-id")!));
    assertEquals(up.received.length, 0);
    // A FHIR JSON create goes through.
    const ok = await fetch(`${gw.url}/fhir/Patient`, {
      method: "POST",
      headers: { "content-type": "application/fhir+json" },
      body: JSON.stringify({ resourceType: "Patient" }),
    });
    await ok.body?.cancel();
    assertEquals(up.received.length, 1);
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("fhir: backend failure and bad _format are OperationOutcomes", async () => {
  const gw = await startTestGateway(fhirConfig("http://127.0.0.1:9"));
  try {
    const res = await fetch(`${gw.url}/fhir/Patient/1`);
    assertEquals(res.status, 502);
    const oo = await res.json();
    assertEquals(oo.resourceType, "OperationOutcome");
    assertEquals(oo.issue[0].code, "transient");
    assertEquals(oo.issue[0].details.text, "backend_unavailable");
    const bad = await fetch(`${gw.url}/fhir/Patient?_format=yaml`);
    assertEquals(bad.status, 400);
    assertEquals((await bad.json()).issue[0].details.text, "invalid_format");
  } finally {
    await gw.stop();
  }
});

Deno.test("fhir backend: a non-FHIR response content type is 502 invalid_fhir_response", async () => {
  const up = startUpstream(() =>
    new Response("<html>proxy error</html>", { headers: { "content-type": "text/html" } })
  );
  const gw = await startTestGateway(fhirConfig(up.url));
  try {
    const res = await fetch(`${gw.url}/fhir/Patient/1`);
    assertEquals(res.status, 502);
    assertEquals((await res.json()).issue[0].details.text, "invalid_fhir_response");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test({
  name:
    "fhir: an nginx error page in front of the FHIR server keeps its status as an OperationOutcome (404 stays 404)",
  ignore: !requirePeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    const nginx = await startNginx({
      conf: `
  server {
    listen 127.0.0.1:{{port}};
    location /r4/Patient/ { default_type application/fhir+json; return 200 '{"resourceType":"Patient"}'; }
    location /r4/Observation/ { return 503; }
    location /r4/Gone/ {
      default_type application/fhir+json;
      return 410 '{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"deleted"}]}';
    }
    location /r4/Html/ { default_type text/html; return 200 '<html>login</html>'; }
  }`,
    });
    const gw = await startTestGateway(fhirConfig(`http://127.0.0.1:${nginx.port}/r4`));
    try {
      // nginx's own 404 page (text/html) for a path it does not serve: 404, not 502.
      const missing = await fetch(`${gw.url}/fhir/Encounter/1`);
      assertEquals(missing.status, 404);
      assertEquals(missing.headers.get("content-type"), "application/fhir+json");
      const oo = await missing.json();
      assertEquals([oo.resourceType, oo.issue[0].code], ["OperationOutcome", "not-found"]);
      assertEquals(oo.issue[0].details.text, "backend_error");
      assertMatch(oo.issue[0].diagnostics, /answered 404 with content type text\/html/);

      const down = await fetch(`${gw.url}/fhir/Observation/1`);
      assertEquals(down.status, 503);
      assertEquals((await down.json()).issue[0].code, "transient");

      // The server's own OperationOutcome passes through with its status.
      const gone = await fetch(`${gw.url}/fhir/Gone/1`);
      assertEquals(gone.status, 410);
      assertEquals((await gone.json()).issue[0].code, "deleted");

      // A success that is not FHIR is still refused.
      const html = await fetch(`${gw.url}/fhir/Html/1`);
      assertEquals(html.status, 502);
      assertEquals((await html.json()).issue[0].details.text, "invalid_fhir_response");

      const ok = await fetch(`${gw.url}/fhir/Patient/1`);
      assertEquals([ok.status, (await ok.json()).resourceType], [200, "Patient"]);
    } finally {
      await gw.stop();
      await nginx.stop();
    }
  },
});

Deno.test("fhir: the request log names the resource type, not the id (an MRN), unless log_identifiers", async () => {
  const up = startUpstream(() =>
    Response.json({ resourceType: "Patient", id: "x" }, {
      headers: { "content-type": "application/fhir+json" },
    })
  );
  const gw = await startTestGateway(fhirConfig(up.url + "/r4"));
  try {
    const res = await fetch(`${gw.url}/fhir/Patient/MRN-0048151623?_format=json`);
    await res.body?.cancel();
    assertEquals(res.status, 200);
    const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "request");
    assertEquals(line?.path, "/fhir/Patient/{id}");
    assert(!gw.logs.join("\n").includes("MRN-0048151623"), "the id is in no log line");

    // Opted in, for debugging: the whole path.
    const text = await Deno.readTextFile(gw.configFile);
    await Deno.writeTextFile(
      gw.configFile,
      text.replace("[logging]\n", "[logging]\nlog_identifiers = true\n"),
    );
    const reload = await gw.mgmtFetch("/api/reload", { method: "POST" });
    assertEquals(reload.status, 200, await reload.text());
    const again = await fetch(`${gw.url}/fhir/Patient/MRN-0048151623`);
    await again.body?.cancel();
    const last = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1);
    assertEquals(last?.path, "/fhir/Patient/MRN-0048151623");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("fhir: a malformed JSON create is 400 OperationOutcome invalid_json; the server never sees it", async () => {
  const up = startUpstream(() =>
    Response.json({ resourceType: "Patient", id: "1" }, {
      status: 201,
      headers: { "content-type": "application/fhir+json" },
    })
  );
  const gw = await startTestGateway(fhirConfig(up.url + "/r4"));
  try {
    const bad = await fetch(`${gw.url}/fhir/Patient`, {
      method: "POST",
      headers: { "content-type": "application/fhir+json" },
      body: '{"resourceType": "Patient", "name": [',
    });
    assertEquals(bad.status, 400);
    assertEquals(bad.headers.get("content-type"), "application/fhir+json");
    const outcome = await bad.json();
    assertEquals(outcome.resourceType, "OperationOutcome");
    assertEquals(outcome.issue[0].details.coding[0].code, "invalid_json");
    assertEquals(up.received.length, 0, "nothing was forwarded");

    const good = await fetch(`${gw.url}/fhir/Patient`, {
      method: "POST",
      headers: { "content-type": "application/fhir+json" },
      body: '{"resourceType": "Patient"}',
    });
    assertEquals(good.status, 201);
    await good.body?.cancel();
    assertEquals(JSON.parse(new TextDecoder().decode(up.received[0].body)).resourceType, "Patient");
  } finally {
    await gw.stop();
    await up.stop();
  }
});
