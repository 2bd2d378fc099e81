/**
 * The audit trail end to end: curl through a FHIR pipeline behind `api_key`; one record per
 * request in the chained JSON Lines file (rotated), nothing secret in it; the same records as
 * FHIR R4 AuditEvents in batch Bundles to a FHIR backend (valid against HL7's R4 JSON schema,
 * retried while it answers 503); `gateway audit verify` passes the trail and finds tampering.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { fhirR4Validator } from "./support/fhir_r4.ts";
import { curl, REPO_ROOT, requirePeer, runCommand, waitFor } from "./support/mod.ts";

const KEY = "lab-key-" + crypto.randomUUID();

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The trail's files: the active one and its rotated siblings (not the run marker `.open`). */
async function auditFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".open")) files.push(`${dir}/${e.name}`);
  }
  return files.sort();
}

async function records(files: string[]) {
  const all = [];
  for (const f of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(f);
    } catch (err) {
      // Rotated between the directory listing and this read: the next poll sees its new name.
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    all.push(...text.trimEnd().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)));
  }
  return all.sort((a, b) => a.seq - b.seq);
}

function verify(files: string[]) {
  return runCommand(Deno.execPath(), [
    "run",
    "--node-modules-dir=manual",
    "--allow-read",
    "gateway/main.ts",
    "audit",
    "verify",
    ...files,
  ], {
    cwd: REPO_ROOT,
    timeoutMs: 60_000,
  });
}

Deno.test({
  name:
    "audit: curl through a FHIR pipeline; chained, rotated file; AuditEvents to a FHIR server; verify",
  ignore: !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const fhir = startUpstream((req) =>
      Response.json(
        { resourceType: req.method === "POST" ? "Observation" : "Patient", id: "x" },
        {
          status: req.method === "POST" ? 201 : 200,
          headers: { "content-type": "application/fhir+json" },
        },
      )
    );
    let unavailable = 1;
    const bundles: { entry: { resource: Record<string, unknown> }[] }[] = [];
    const auditServer = startUpstream((_req, body) => {
      if (unavailable-- > 0) return new Response("maintenance", { status: 503 });
      const bundle = JSON.parse(new TextDecoder().decode(body));
      bundles.push(bundle);
      return Response.json({
        resourceType: "Bundle",
        type: "batch-response",
        entry: bundle.entry.map(() => ({ response: { status: "201 Created" } })),
      }, { headers: { "content-type": "application/fhir+json" } });
    });
    const gw = await startTestGateway(`
[endpoints.fhir]
service = "fhir"
[endpoints.fhir.options]
path_prefix = "/fhir"

[middleware.key]
type = "api_key"
[middleware.key.options]
query_param = "k"
[middleware.key.options.keys]
lab_system = "sha256:${await sha256(KEY)}"

[backends.server]
service = "fhir"
retries = 0
[backends.server.options]
base_url = "${fhir.url}/r4"

[backends.audit-repository]
service = "fhir"
[backends.audit-repository.options]
base_url = "${auditServer.url}/audit"

[pipelines.fhir]
endpoints = ["fhir"]
middleware = ["key"]
backends = ["server"]

[audit]
file = "audit/audit.jsonl"
max_file_bytes = 4096
flush_interval_ms = 20
redact_query = ["ssn"]
fhir_backend = "audit-repository"
fhir_batch_size = 10
source_name = "edge-1"
`);
    const auditDir = `${gw.dir}/audit`;
    try {
      const base = `${gw.url}/fhir`;
      const call = async (args: string[]) => {
        const r = await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", ...args]);
        return Number(r.stdout);
      };
      assertEquals(await call(["-H", `X-API-Key: ${KEY}`, `${base}/Patient/p-17`]), 200);
      assertEquals(
        await call([`${base}/Patient?name=Doe&ssn=123-45-6789&k=${KEY}&_count=5`]),
        200,
      );
      assertEquals(await call([`${base}/Patient/p-18`]), 401);
      assertEquals(
        await call([
          "-H",
          `X-API-Key: ${KEY}`,
          "-H",
          "content-type: application/fhir+json",
          "--data",
          '{"resourceType":"Observation","status":"final","subject":{"reference":"Patient/p-17"}}',
          `${base}/Observation`,
        ]),
        201,
      );
      // Enough more to rotate the 4 KiB file a few times.
      for (let i = 0; i < 30; i++) {
        const res = await fetch(`${base}/Encounter/e-${i}`, { headers: { "x-api-key": KEY } });
        await res.body?.cancel();
      }
      await waitFor(async () => (await records(await auditFiles(auditDir))).length >= 34, {
        timeoutMs: 10_000,
        description: "34 records in the audit file",
      });
      await waitFor(() => Promise.resolve(bundles.reduce((n, b) => n + b.entry.length, 0) >= 34), {
        timeoutMs: 15_000,
        description: "34 AuditEvents at the FHIR server",
      });

      const files = await auditFiles(auditDir);
      assert(files.length >= 3, `rotated: ${files.join(", ")}`);
      const trail = await records(files);
      assertEquals(trail.length, 34);
      assertEquals(trail.map((r) => r.seq), Array.from({ length: 34 }, (_, i) => i + 1));
      const [read, search, refused, create] = trail;
      assertEquals(
        [read.subject, read.auth_method, read.method, read.path, read.fhir_interaction],
        ["lab_system", "api_key", "GET", "/fhir/Patient/p-17", "read"],
      );
      assertEquals([read.fhir_resource_type, read.fhir_id, read.status], ["Patient", "p-17", 200]);
      assertEquals(read.client_address, "127.0.0.1");
      assertEquals(search.query, "?name=Doe&ssn=[redacted]&k=[redacted]&_count=5");
      assertEquals(search.fhir_interaction, "search");
      assertEquals([refused.outcome, refused.status, refused.subject], ["failure", 401, undefined]);
      assertEquals(refused.error_code, "missing_credentials");
      assertEquals([create.fhir_interaction, create.status], ["create", 201]);
      const raw = (await Promise.all(files.map((f) => Deno.readTextFile(f)))).join("");
      assert(!raw.includes(KEY), "the API key is not in the trail");
      assert(!raw.includes("123-45-6789"), "a redacted query value is not in the trail");
      assert(!raw.includes('"status":"final"'), "bodies are not in the trail");

      // The FHIR server got every record once, as valid R4 AuditEvents (after one 503).
      const validate = await fhirR4Validator();
      const events = bundles.flatMap((b) => b.entry.map((e) => e.resource));
      assertEquals(events.length, 34);
      for (const b of bundles) assertEquals(validate(b), []);
      for (const e of events) assertEquals(validate(e), [], JSON.stringify(e));
      const readEvent = events.find((e) =>
        JSON.stringify(e.entity).includes('"reference":"Patient/p-17"')
      )!;
      assertEquals(readEvent.action, "R");
      assertEquals((readEvent.source as { observer: unknown }).observer, { display: "edge-1" });
      assert(!JSON.stringify(bundles).includes(KEY));
      assertEquals(auditServer.received[0].headers.get("content-type"), "application/fhir+json");
      assertEquals(new URL(auditServer.received[0].url).pathname, "/audit/");

      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      assertMatch(metrics, /gateway_audit_records_total\{sink="file"\} 34/);
      assertMatch(metrics, /gateway_audit_records_total\{sink="fhir"\} 34/);

      // `gateway audit verify`, then a changed line in a rotated file. A clean stop removes the
      // run marker the gateway kept beside the file while it ran.
      assert(await Deno.stat(`${auditDir}/audit.jsonl.open`).then(() => true));
      await gw.gateway.shutdown();
      assert(await Deno.stat(`${auditDir}/audit.jsonl.open`).then(() => false, () => true));
      const ok = await verify(files);
      assertEquals(ok.code, 0, ok.stdout + ok.stderr);
      assertMatch(ok.stdout, /audit trail intact/);
      const oldest = files.find((f) => !f.endsWith(".jsonl"))!;
      const lines = (await Deno.readTextFile(oldest)).split("\n");
      lines[1] = lines[1].replace('"status":200', '"status":404');
      await Deno.writeTextFile(oldest, lines.join("\n"));
      const broken = await verify(files);
      assertEquals(broken.code, 1, broken.stdout);
      assertMatch(broken.stdout, /BROKEN at line 3 \(seq 3\): prev is not the SHA-256/);
      assertMatch(broken.stdout, /audit trail BROKEN/);
    } finally {
      await gw.stop();
      await fhir.stop();
      await auditServer.stop();
    }
  },
});

Deno.test("audit: an [audit] table without a sink, or with a backend that is not FHIR, is refused", async () => {
  const { validateConfigText } = await import("../shared/gateway_config/mod.ts");
  const none = validateConfigText("[audit]\nmax_file_bytes = 10000\n", "gw.toml");
  assertMatch(
    none.problems.map((p) => `${p.path}: ${p.message}`).join("\n"),
    /audit: the audit trail needs somewhere to go/,
  );
  const echo = validateConfigText(
    '[backends.e]\nservice = "echo"\n[audit]\nfhir_backend = "e"\n',
    "gw.toml",
  );
  assertMatch(
    echo.problems.map((p) => p.message).join("\n"),
    /has service echo; AuditEvents go to a fhir or http backend/,
  );
  const unknown = validateConfigText('[audit]\nfhir_backend = "nowhere"\n', "gw.toml");
  assertMatch(unknown.problems.map((p) => p.message).join("\n"), /unknown backend `nowhere`/);
});
