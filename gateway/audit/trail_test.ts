/**
 * The audit trail's parts: query redaction, the record of a request, AuditEvents valid against
 * HL7's R4 JSON schema, a full queue that loses records loudly (counted, logged, noted in the
 * chain), and the FHIR sink's retries and refusals.
 */
import { assert, assertEquals, assertMatch } from "../../tests/assert.ts";
import { fhirR4Validator } from "../../tests/support/fhir_r4.ts";
import { Logger } from "../../shared/mod.ts";
import type { AuditConfig } from "../../shared/gateway_config/mod.ts";
import { RequestEnvelope } from "../envelope.ts";
import { createMetrics } from "../observability/mod.ts";
import { RequestRecord } from "../pipeline/mod.ts";
import { verifyAuditFiles } from "./chain.ts";
import { type AuditEntry, BUILT_IN_REDACTED_QUERY, entryOf, redactQuery } from "./entry.ts";
import { auditEventOf, batchBundle } from "./fhir_event.ts";
import { AuditTrail } from "./trail.ts";
import { ManualClock } from "../../shared/clock.ts";

const REDACTED = new Set([...BUILT_IN_REDACTED_QUERY, "ssn"]);

Deno.test("audit redactQuery: listed parameters lose their values, the rest stays byte for byte", () => {
  assertEquals(
    redactQuery("?name:exact=Doe%20J&SSN=123&access_token=abc&_count=10&flag", REDACTED),
    "?name:exact=Doe%20J&SSN=[redacted]&access_token=[redacted]&_count=10&flag",
  );
  assertEquals(
    redactQuery("?token:exact=x&api%5Fkey=y", REDACTED),
    "?token:exact=[redacted]&api%5Fkey=[redacted]",
  );
  assertEquals(redactQuery("", REDACTED), "");
  assertEquals(redactQuery("?", REDACTED), "");
  assertEquals(redactQuery("?%E0%A4%A=1", REDACTED), "?%E0%A4%A=1");
});

function fhirRecord(path: string, query: string, metadata: Record<string, string>) {
  const metrics = createMetrics();
  const record = new RequestRecord(
    { metrics, logger: new Logger({ level: "error", format: "json" }) },
    "fhir",
    "req-1",
  );
  record.origin = {
    endpoint: "fhir",
    protocol: "http",
    method: "GET",
    path: `/fhir${path}`,
    query,
    remoteAddr: "10.1.2.3",
  };
  record.envelope = new RequestEnvelope({
    id: "req-1",
    protocol: "http",
    method: "GET",
    path,
    originalPath: `/fhir${path}`,
    rawQuery: query,
    metadata: { endpoint: "fhir", service: "fhir", ...metadata },
    endpoint: "fhir",
    remoteAddr: "10.1.2.3",
  });
  return record;
}

Deno.test("audit entryOf: who, what (FHIR type, id, interaction) and how it ended; nothing secret", () => {
  const read = entryOf(
    fhirRecord("/Patient/p-17", "?_elements=name&access_token=s3cret", {
      "auth.subject": "dr.jones",
      "auth.client_id": "ehr-app",
      "auth.method": "jwt_auth",
      "client.ip": "192.0.2.9",
    }),
    200,
    0.0123,
    REDACTED,
  );
  assertEquals(read, {
    event: "request",
    time: read.time,
    request_id: "req-1",
    pipeline: "fhir",
    endpoint: "fhir",
    protocol: "http",
    client_address: "10.1.2.3",
    client_ip: "192.0.2.9",
    subject: "dr.jones",
    client_id: "ehr-app",
    auth_method: "jwt_auth",
    method: "GET",
    path: "/fhir/Patient/p-17",
    query: "?_elements=name&access_token=[redacted]",
    fhir_interaction: "read",
    fhir_resource_type: "Patient",
    fhir_id: "p-17",
    status: 200,
    outcome: "success",
    duration_ms: 12.3,
  });
  const record = fhirRecord("/Observation", "?patient=p-17", {});
  record.errorCode = "missing_credentials";
  const refused = entryOf(record, 401, 0.001, REDACTED);
  assertEquals(
    [refused.fhir_interaction, refused.fhir_resource_type, refused.fhir_id, refused.subject],
    ["search", "Observation", undefined, undefined],
  );
  assertEquals([refused.outcome, refused.error_code], ["failure", "missing_credentials"]);
});

const SAMPLES: AuditEntry[] = [
  {
    event: "request",
    time: "2026-11-25T12:00:00.000Z",
    request_id: "r1",
    pipeline: "fhir",
    endpoint: "fhir",
    protocol: "http",
    client_address: "10.1.2.3",
    subject: "dr.jones",
    client_id: "ehr-app",
    method: "GET",
    path: "/fhir/Patient/p-17",
    fhir_interaction: "read",
    fhir_resource_type: "Patient",
    fhir_id: "p-17",
    status: 200,
    outcome: "success",
    duration_ms: 3.2,
  },
  {
    event: "request",
    time: "2026-11-25T12:00:01.000Z",
    request_id: "r2",
    pipeline: "fhir",
    protocol: "h2",
    client_address: "2001:db8::7",
    method: "GET",
    path: "/fhir/Observation",
    query: "?patient=p-17&code=http://loinc.org|1234-5",
    fhir_interaction: "search",
    fhir_resource_type: "Observation",
    status: 401,
    outcome: "failure",
    error_code: "missing_credentials",
  },
  {
    event: "request",
    time: "2026-11-25T12:00:02.000Z",
    request_id: "r3",
    pipeline: "dimse",
    endpoint: "scp",
    protocol: "dimse",
    client_address: "127.0.0.1",
    method: "C-STORE",
    dicom_calling_aet: "MODALITY1",
    dicom_called_aet: "GWSCP",
    dicom_sop_class: "1.2.840.10008.5.1.4.1.1.2",
    dicom_sop_instance: "1.2.826.0.1.3680043.2.1125.1.1",
    dicom_study_uid: "1.2.826.0.1.3680043.2.1125.1",
    status: 502,
    dicom_status: "0xa700",
    outcome: "error",
    error_code: "backend_unavailable",
  },
  {
    event: "request",
    time: "2026-11-25T12:00:03.000Z",
    method: "PATCH",
    status: 204,
    outcome: "success",
  },
  { event: "audit.dropped", time: "2026-11-25T12:00:04.000Z", dropped: 12, reason: "queue_full" },
];

Deno.test("audit AuditEvent: every kind of record is a valid FHIR R4 AuditEvent (HL7's JSON schema)", async () => {
  const validate = await fhirR4Validator();
  for (const entry of SAMPLES) {
    const event = auditEventOf(entry, "edge-gateway-1");
    assertEquals(validate(event), [], JSON.stringify(event, null, 1));
  }
  const [read, search, store] = SAMPLES.map((e) => auditEventOf(e, "gw"));
  assertEquals((read.entity as { what: unknown }[])[0].what, { reference: "Patient/p-17" });
  assertEquals((read.agent as { who: unknown }[])[0].who, {
    identifier: { value: "dr.jones" },
    display: "dr.jones",
  });
  assertEquals([read.action, read.outcome], ["R", "0"]);
  assertEquals([search.action, search.outcome], ["E", "4"]);
  assertEquals(
    atob((search.entity as { query: string }[])[0].query),
    "patient=p-17&code=http://loinc.org|1234-5",
  );
  assertEquals(store.type, {
    system: "http://dicom.nema.org/resources/ontology/DCM",
    code: "110104",
    display: "DICOM Instances Transferred",
  });
  assertEquals([store.action, store.outcome], ["C", "8"]);
  const bundle = batchBundle(SAMPLES.map((e) => auditEventOf(e, "gw")));
  assertEquals(validate(bundle), []);
  // The validator is not a rubber stamp.
  assert(validate({ ...read, recorded: "yesterday" }).length > 0);
  assert(validate({ ...read, source: {} }).length > 0);
  assert(validate({ ...read, action: "X" }).length > 0);
});

function auditConfig(over: Partial<AuditConfig>): AuditConfig {
  return {
    max_file_bytes: 1 << 20,
    keep_files: 0,
    durability: "batched",
    group_commit_ms: 1,
    queue_size: 10_000,
    flush_interval_ms: 60_000,
    redact_query: [],
    fhir_batch_size: 100,
    ...over,
  };
}

Deno.test("audit trail: a full queue loses records loudly: counted, logged once, noted in the chain", async () => {
  const dir = await Deno.makeTempDir();
  const logs: string[] = [];
  const metrics = createMetrics();
  const trail = new AuditTrail({
    logger: new Logger({ level: "info", format: "json", sink: (l) => logs.push(l) }),
    metrics: metrics.audit,
  });
  try {
    const file = `${dir}/audit.jsonl`;
    await trail.configure(auditConfig({ file, queue_size: 2 }));
    assert(trail.enabled);
    for (const e of [...SAMPLES.slice(0, 4), SAMPLES[0]]) trail.add(e);
    await trail.flush();
    const text = metrics.render();
    assertMatch(text, /gateway_audit_dropped_total\{sink="file",reason="queue_full"\} 3/);
    assertMatch(text, /gateway_audit_records_total\{sink="file"\} 2/);
    assertEquals(logs.filter((l) => l.includes("audit: records were lost")).length, 1);
    const records = (await Deno.readTextFile(file)).trimEnd().split("\n").map((l) => JSON.parse(l));
    assertEquals(records.map((r) => r.event), ["audit.dropped", "request", "request"]);
    assertEquals([records[0].dropped, records[0].reason], [3, "queue_full"]);
    await trail.close();
    assertEquals(trail.enabled, false);
    assert((await verifyAuditFiles([file])).ok);
  } finally {
    await trail.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit trail: the FHIR sink retries an unavailable server and counts what it refuses", async () => {
  const metrics = createMetrics();
  const sent: { entry: { resource: { resourceType: string } }[] }[] = [];
  const answers: (() => { status: number; body: string })[] = [
    () => {
      throw new Error("connection refused");
    },
    () => ({ status: 503, body: "" }),
    () => ({
      status: 200,
      body: JSON.stringify({
        resourceType: "Bundle",
        type: "batch-response",
        entry: [{ response: { status: "201 Created" } }, { response: { status: "201 Created" } }],
      }),
    }),
    () => ({ status: 400, body: '{"resourceType":"OperationOutcome"}' }),
    () => ({
      status: 200,
      body: JSON.stringify({
        resourceType: "Bundle",
        type: "batch-response",
        entry: [{ response: { status: "400 Bad Request" } }],
      }),
    }),
  ];
  // The back-off runs on a manual clock: advanced, not waited for.
  const clock = new ManualClock();
  const trail = new AuditTrail({
    logger: new Logger({ level: "error", format: "json" }),
    metrics: metrics.audit,
    clock,
  });
  const drained = Promise.withResolvers<void>();
  const sentCount = new Map<number, PromiseWithResolvers<void>>();
  const hasSent = (n: number) => {
    if (!sentCount.has(n)) sentCount.set(n, Promise.withResolvers<void>());
    if (sent.length >= n) sentCount.get(n)!.resolve();
    return sentCount.get(n)!.promise;
  };
  await trail.configure(auditConfig({ fhir_backend: "audit", fhir_batch_size: 2 }), (bundle) => {
    sent.push(JSON.parse(new TextDecoder().decode(bundle)));
    for (const [n, w] of sentCount) if (sent.length >= n) w.resolve();
    const answer = answers.shift()!;
    const answered = Promise.resolve().then(answer);
    if (answers.length === 0) answered.then(() => drained.resolve(), () => drained.resolve());
    return answered;
  });
  try {
    trail.add(SAMPLES[0]);
    trail.add(SAMPLES[1]);
    // Two failures, two back-offs (1 s, 2 s), then taken; the next ones as they come. The clock
    // moves once the sink has set its back-off's timer.
    await hasSent(1);
    await clock.waitForTimer(1000);
    await clock.advance(999);
    assertEquals(sent.length, 1, "not before the back-off of 1 s");
    await clock.advance(1);
    await hasSent(2);
    await clock.waitForTimer(2000);
    await clock.advance(1999);
    assertEquals(sent.length, 2, "not before the back-off of 2 s");
    await clock.advance(1);
    await hasSent(3);
    trail.add(SAMPLES[2]);
    await hasSent(4);
    trail.add(SAMPLES[3]);
    await drained.promise;
    await trail.close(); // waits for the last answer to be counted
    assertEquals(sent.length, 5);
    assertEquals(sent[0], sent[2], "the same batch is sent again");
    assertEquals(sent[2].entry.length, 2);
    const text = metrics.render();
    assertMatch(text, /gateway_audit_records_total\{sink="fhir"\} 2/);
    assertMatch(text, /gateway_audit_dropped_total\{sink="fhir",reason="rejected"\} 2/);
  } finally {
    await trail.close();
  }
});
