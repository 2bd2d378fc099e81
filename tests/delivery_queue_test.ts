/**
 * Durable delivery against real upstreams: nginx answering 503 while it is "down" (a flag file),
 * then 200: every accepted message arrives once, in order, with its delivery id as
 * Idempotency-Key; a FHIR-shaped upstream answering 429 with Retry-After is waited for; a 400 goes
 * to the dead letters with the answer kept, is inspected, retried and purged through the
 * management API; a gateway restarted with messages waiting delivers them; DCMTK storescu through
 * the gateway to an Orthanc that is down, then up: every instance arrives once, the same bytes.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream, type TestGateway } from "./harness.ts";
import { freePort, requirePeer, runCommand, startNginx, waitFor } from "./support/mod.ts";
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { parseP10 } from "../gateway/dicom/mod.ts";
import { DCMTK_ENV, startOrthanc } from "../fixtures/dicom/peers.ts";

function pipeline(baseUrl: string, queue: string, dir: string): string {
  return `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
timeout_secs = 5
retries = 0
[backends.out.options]
base_url = "${baseUrl}"
[backends.out.queue]
dir = "${dir}"
initial_backoff_ms = 100
max_backoff_ms = 400
${queue}
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`;
}

async function queues(gw: TestGateway) {
  const res = await gw.mgmtFetch("/admin/queues");
  assertEquals(res.status, 200);
  return (await res.json()).queues as Record<string, number | string>[];
}

Deno.test({
  name: "delivery: nginx answers 503 while down, then 200: every message once, in order",
  ignore: !requirePeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    const nginx = await startNginx({
      conf: `
log_format delivered '$status $request_uri $http_idempotency_key';
server {
  listen 127.0.0.1:{{port}};
  access_log {{dir}}/deliveries.log delivered;
  location / {
    if (-f {{dir}}/down) { return 503; }
    return 200 "ok\\n";
  }
}`,
    });
    await Deno.writeTextFile(`${nginx.dir}/down`, "");
    const qdir = await Deno.makeTempDir({ prefix: "gw-queue-" });
    const gw = await startTestGateway(pipeline(nginx.url, "", qdir));
    try {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${gw.url}/in/orders/${i}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer client-secret" },
          body: JSON.stringify({ order: i }),
        });
        assertEquals(res.status, 202);
        const body = await res.json();
        assertEquals(body.status, "queued");
        assertEquals(res.headers.get("x-delivery-id"), body.delivery_id);
        ids.push(body.delivery_id);
      }
      await waitFor(async () => Number((await queues(gw))[0].retried_total) >= 2, {
        timeoutMs: 5000,
        description: "retries while nginx answers 503",
      });
      const [down] = await queues(gw);
      assertEquals([down.backend, down.depth, down.dead], ["out", 20, 0]);
      assert(Number(down.oldest_age_secs) > 0);
      // Nothing was stored that the client sent as a credential.
      for await (const e of Deno.readDir(`${qdir}/ready`)) {
        if (!e.name.endsWith(".msg")) continue;
        const text = new TextDecoder().decode(await Deno.readFile(`${qdir}/ready/${e.name}`));
        assert(!text.includes("client-secret"), "no credential on disk");
      }

      await Deno.remove(`${nginx.dir}/down`);
      await waitFor(async () => Number((await queues(gw))[0].depth) === 0, {
        timeoutMs: 15_000,
        description: "the queue drained",
      });
      const log = (await Deno.readTextFile(`${nginx.dir}/deliveries.log`)).trim().split("\n");
      const delivered = log.filter((l) => l.startsWith("200 ")).map((l) => l.split(" "));
      assertEquals(delivered.map((d) => d[1]), ids.map((_, i) => `/orders/${i}`), "in order");
      assertEquals(delivered.map((d) => d[2]), ids, "each once, with its id as Idempotency-Key");
      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      assertMatch(metrics, /gateway_queue_delivered_total\{backend="out"\} 20/);
      assertMatch(metrics, /gateway_queue_depth\{backend="out"\} 0/);
    } finally {
      await gw.stop();
      await nginx.stop();
      await Deno.remove(qdir, { recursive: true });
    }
  },
});

Deno.test("delivery: 429 with Retry-After is waited for; a 400 is a dead letter, inspected, retried, purged", async () => {
  const attempts: { path: string; at: number }[] = [];
  let refuse = true;
  const fhir = startUpstream((req) => {
    const path = new URL(req.url).pathname;
    attempts.push({ path, at: Date.now() });
    if (path.endsWith("/busy") && attempts.filter((a) => a.path === path).length === 1) {
      return new Response("slow down", { status: 429, headers: { "retry-after": "1" } });
    }
    if (path.endsWith("/bad") && refuse) {
      return Response.json({ resourceType: "OperationOutcome", issue: [{ code: "invalid" }] }, {
        status: 400,
      });
    }
    return Response.json({ resourceType: "Observation", id: "1" }, { status: 201 });
  });
  const qdir = await Deno.makeTempDir({ prefix: "gw-queue-" });
  const gw = await startTestGateway(pipeline(fhir.url, 'ordering = "parallel"', qdir));
  try {
    for (const path of ["busy", "bad"]) {
      const res = await fetch(`${gw.url}/in/Observation/${path}`, {
        method: "POST",
        headers: { "content-type": "application/fhir+json" },
        body: '{"resourceType":"Observation"}',
      });
      assertEquals(res.status, 202);
      await res.body?.cancel();
    }
    await waitFor(async () => {
      const [q] = await queues(gw);
      return q.depth === 0 && q.dead === 1;
    }, { timeoutMs: 10_000, description: "busy delivered, bad dead" });
    const busy = attempts.filter((a) => a.path.endsWith("/busy"));
    assertEquals(busy.length, 2);
    assert(busy[1].at - busy[0].at >= 950, `Retry-After honoured: ${busy[1].at - busy[0].at} ms`);

    const dead = await (await gw.mgmtFetch("/admin/queues/out/messages?state=dead")).json();
    assertEquals(dead.messages.length, 1);
    const [letter] = dead.messages;
    assertEquals([letter.state, letter.method, letter.path], ["dead", "POST", "/Observation/bad"]);
    assertEquals(letter.dead.status, 400);
    assertMatch(letter.dead.answer, /OperationOutcome/);
    assert(!("body" in letter), "never the body");
    const one = await (await gw.mgmtFetch(`/admin/queues/out/messages/${letter.id}`)).json();
    assertEquals(one.id, letter.id);

    // Ids become file names: anything but a delivery id is refused before the file system.
    for (const bad of ["../../ready/x", "00000-bad"]) {
      const hostile = await gw.mgmtFetch("/admin/queues/out/retry", {
        method: "POST",
        body: JSON.stringify({ id: bad }),
      });
      assertEquals([hostile.status, (await hostile.json()).error.code], [400, "invalid_id"]);
    }
    const badInspect = await gw.mgmtFetch("/admin/queues/out/messages/..%2F..%2Fgateway.toml");
    assertEquals(badInspect.status, 400);
    await badInspect.body?.cancel();

    const unconfirmed = await gw.mgmtFetch("/admin/queues/out/dead", { method: "DELETE" });
    assertEquals(unconfirmed.status, 400);
    assertEquals((await unconfirmed.json()).error.code, "confirmation_required");

    refuse = false;
    const retry = await gw.mgmtFetch("/admin/queues/out/retry", {
      method: "POST",
      body: JSON.stringify({ id: letter.id }),
    });
    assertEquals(await retry.json(), { requeued: 1 });
    await waitFor(async () => {
      const [q] = await queues(gw);
      return q.depth === 0 && q.dead === 0;
    }, { timeoutMs: 5000, description: "the retried dead letter delivered" });
    assertEquals(attempts.filter((a) => a.path.endsWith("/bad")).length, 2);

    // A purge with confirmation deletes dead letters.
    refuse = true;
    const again = await fetch(`${gw.url}/in/Observation/bad`, { method: "POST", body: "{}" });
    await again.body?.cancel();
    await waitFor(async () => (await queues(gw))[0].dead === 1, {
      timeoutMs: 5000,
      description: "a new dead letter",
    });
    const purged = await gw.mgmtFetch("/admin/queues/out/dead?confirm=out", { method: "DELETE" });
    assertEquals(await purged.json(), { purged: 1 });
    assertEquals((await queues(gw))[0].dead, 0);
  } finally {
    await gw.stop();
    await fhir.stop();
    await Deno.remove(qdir, { recursive: true });
  }
});

Deno.test("delivery: a gateway restarted with messages waiting delivers them", async () => {
  const received: string[] = [];
  // The first gateway delivers under /down, which always fails; the second under /up. (A flag
  // flipped between the two would also count an attempt of the first gateway that the upstream
  // finished reading after the flip: a legitimate duplicate of at-least-once delivery.)
  const upstream = startUpstream((req, body) => {
    if (new URL(req.url).pathname.startsWith("/down")) {
      return new Response("down", { status: 503 });
    }
    received.push(new TextDecoder().decode(body));
    return new Response("ok");
  });
  const qdir = await Deno.makeTempDir({ prefix: "gw-queue-" });
  const first = await startTestGateway(pipeline(`${upstream.url}/down`, "", qdir));
  try {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${first.url}/in/x`, { method: "POST", body: `message ${i}` });
      assertEquals(res.status, 202);
      await res.body?.cancel();
    }
  } finally {
    await first.stop();
  }
  const second = await startTestGateway(pipeline(`${upstream.url}/up`, "", qdir));
  try {
    await waitFor(() => Promise.resolve(received.length === 5), {
      timeoutMs: 10_000,
      description: "the waiting messages delivered after the restart",
    });
    assertEquals(received, [0, 1, 2, 3, 4].map((i) => `message ${i}`));
  } finally {
    await second.stop();
    await upstream.stop();
    await Deno.remove(qdir, { recursive: true });
  }
});

Deno.test({
  name:
    "delivery: storescu through the gateway to an Orthanc that is down, then up: every instance once, the same bytes",
  ignore: !requirePeer("Orthanc", "Orthanc", "orthanc") ||
    !requirePeer("storescu", "storescu", "dcmtk"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-queue-dicom-" });
    const instances = await generateInstances(`${dir}/in`, {
      patientPrefix: "QUEUED",
      instancesPerSeries: 3,
    });
    const orthancPort = freePort();
    const orthancHttp = freePort();
    const scpPort = freePort();
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GATEWAY"
bind_addr = "127.0.0.1"
port = ${scpPort}
enable_store = true

[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "ORTHANC"
host = "127.0.0.1"
port = ${orthancPort}
association_idle_secs = 0
[backends.pacs.queue]
dir = "${dir}/queue"
initial_backoff_ms = 200
max_backoff_ms = 1000

[pipelines.dimse]
endpoints = ["scp"]
backends = ["pacs"]
`);
    let orthanc: Awaited<ReturnType<typeof startOrthanc>> | undefined;
    try {
      const sent = await runCommand(
        "storescu",
        [
          "-aet",
          "MODALITY",
          "-aec",
          "GATEWAY",
          "127.0.0.1",
          String(scpPort),
          ...instances.map((i) => i.path),
        ],
        { timeoutMs: 30_000, env: DCMTK_ENV },
      );
      assertEquals(sent.code, 0, sent.stderr);
      const [waiting] = await queues(gw);
      assertEquals(waiting.depth, instances.length, "accepted while the PACS is down");

      orthanc = await startOrthanc({ port: orthancPort, httpPort: orthancHttp });
      await waitFor(async () => (await queues(gw))[0].depth === 0, {
        timeoutMs: 30_000,
        description: "the queue delivered to Orthanc",
      });
      const ids = await (await fetch(`${orthanc.url}/instances`)).json() as string[];
      assertEquals(ids.length, instances.length, "none twice");
      for (const instance of instances) {
        const found = await (await fetch(`${orthanc.url}/tools/lookup`, {
          method: "POST",
          body: instance.sopInstanceUid,
        })).json() as { ID: string; Type: string }[];
        const id = found.find((f) => f.Type === "Instance")!.ID;
        const stored = new Uint8Array(
          await (await fetch(`${orthanc.url}/instances/${id}/file`)).arrayBuffer(),
        );
        const original = await Deno.readFile(instance.path);
        // The dataset is byte for byte the one sent (each file meta group is its writer's own).
        assertEquals(parseP10(stored).dataset, parseP10(original).dataset, instance.sopInstanceUid);
      }
    } finally {
      await gw.stop();
      await orthanc?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("delivery: an attempt cut off by a stop is sent again after the restart, not dead", async () => {
  const arrived = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const upstream = startUpstream(async (req) => {
    if (new URL(req.url).pathname.startsWith("/up")) return new Response("ok");
    arrived.resolve();
    // No answer until the gateway has stopped with this attempt running.
    await release.promise;
    return new Response("too late", { status: 503 });
  });
  const qdir = await Deno.makeTempDir({ prefix: "gw-queue-" });
  const first = await startTestGateway(pipeline(`${upstream.url}/hang`, "", qdir));
  try {
    const res = await fetch(`${first.url}/in/x`, { method: "POST", body: "cut off" });
    assertEquals(res.status, 202);
    await res.body?.cancel();
    await arrived.promise;
  } finally {
    await first.stop();
    release.resolve();
  }
  const second = await startTestGateway(pipeline(`${upstream.url}/up`, "", qdir));
  try {
    await waitFor(async () => (await queues(second))[0].depth === 0, {
      timeoutMs: 10_000,
      description: "delivered after the restart",
    });
    assertEquals((await queues(second))[0].dead, 0, "aborting the attempt is no refusal");
    const delivered = upstream.received.filter((r) => new URL(r.url).pathname.startsWith("/up"));
    assertEquals(delivered.map((r) => new TextDecoder().decode(r.body)), ["cut off"]);
  } finally {
    await second.stop();
    await upstream.stop();
    await Deno.remove(qdir, { recursive: true });
  }
});

Deno.test("delivery: fhir_conditional_create sends If-None-Exist, so a repeated create finds the resource", async () => {
  const stored = new Map<string, unknown>();
  const conditions: (string | null)[] = [];
  // A FHIR server's conditional create (R4 §3.1.0.8.1): If-None-Exist that matches is a 200.
  const fhir = startUpstream((req, body) => {
    const condition = req.headers.get("if-none-exist");
    conditions.push(condition);
    const key = condition ? new URLSearchParams(condition).get("identifier")! : crypto.randomUUID();
    if (stored.has(key)) {
      return Response.json(stored.get(key), {
        headers: { "content-type": "application/fhir+json" },
      });
    }
    const resource = { ...JSON.parse(new TextDecoder().decode(body)), id: String(stored.size + 1) };
    stored.set(key, resource);
    return Response.json(resource, {
      status: 201,
      headers: { "content-type": "application/fhir+json" },
    });
  });
  const qdir = await Deno.makeTempDir({ prefix: "gw-queue-" });
  const gw = await startTestGateway(`
[endpoints.in]
service = "fhir"
[endpoints.in.options]
path_prefix = "/fhir"
[backends.out]
service = "fhir"
[backends.out.options]
base_url = "${fhir.url}/r4"
[backends.out.queue]
dir = "${qdir}"
fhir_conditional_create = true
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`);
  try {
    const patient = {
      resourceType: "Patient",
      identifier: [{ system: "urn:oid:1.2.36.146.595.217.0.1", value: "12345|6" }],
    };
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gw.url}/fhir/Patient`, {
        method: "POST",
        headers: { "content-type": "application/fhir+json" },
        body: JSON.stringify(patient),
      });
      assertEquals(res.status, 202);
      await res.body?.cancel();
    }
    await waitFor(async () => (await queues(gw))[0].delivered_total === 2, {
      timeoutMs: 5000,
      description: "both delivered",
    });
    assertEquals(stored.size, 1, "one Patient, not two");
    assertEquals(conditions, [
      "identifier=urn%3Aoid%3A1.2.36.146.595.217.0.1%7C12345%5C%7C6",
      "identifier=urn%3Aoid%3A1.2.36.146.595.217.0.1%7C12345%5C%7C6",
    ]);
  } finally {
    await gw.stop();
    await fhir.stop();
    await Deno.remove(qdir, { recursive: true });
  }
});
