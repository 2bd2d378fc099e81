/**
 * SMART `patient/` scopes end to end, as an attacker holding patient p1's token would try them:
 * oidc-provider issues the token (with the `patient` launch claim), a FHIR server stand-in holds
 * two patients' data and answers whatever it is asked (tests/support/fhir_standin.ts), and the
 * SMART JS client (npm `fhirclient`, its browser build, installed under tests/peers by npm)
 * makes the requests an app makes. Every request form of the security review is refused before
 * the server sees it, or its answer is withheld; what an app legitimately does still works.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { isCi, REPO_ROOT, waitFor } from "./support/mod.ts";
import { type FhirResource, startFhirStandIn } from "./support/fhir_standin.ts";
// Not through support/mod.ts: only these tests load the provider (and its dependencies).
import { startOidcProvider } from "./support/oidc.ts";

const AUDIENCE = "https://gateway.example/fhir";
const FHIRCLIENT = `${REPO_ROOT}/tests/peers/node_modules/fhirclient/build/fhir-client.pure.js`;

/** The SMART client's browser build (it needs `window` and fetch, which Deno has). */
async function loadFhirClient(): Promise<FhirClientApi | null> {
  try {
    await Deno.stat(FHIRCLIENT);
  } catch {
    const message =
      "fhirclient is not installed: run `npm ci --omit=optional --prefix tests/peers`";
    if (isCi()) throw new Error(message);
    console.warn(`skipping the fhirclient part: ${message}`);
    return null;
  }
  (globalThis as Record<string, unknown>).window ??= globalThis;
  await import(FHIRCLIENT);
  return (globalThis as unknown as { FHIR: FhirClientApi }).FHIR;
}

/** The parts of fhirclient's API used here. */
interface FhirClientApi {
  client(state: { serverUrl: string; tokenResponse: Record<string, unknown> }): SmartClient;
}
interface SmartClient {
  patient: {
    read(): Promise<FhirResource>;
    request(url: string): Promise<FhirResource>;
  };
  request(url: string): Promise<FhirResource>;
  create(resource: FhirResource): Promise<FhirResource>;
  update(resource: FhirResource): Promise<FhirResource>;
  delete(url: string): Promise<unknown>;
}

const obs = (id: string, patient: string, extra: Record<string, unknown> = {}): FhirResource => ({
  resourceType: "Observation",
  id,
  status: "final",
  code: { text: "heart rate" },
  subject: { reference: `Patient/${patient}` },
  ...extra,
});

Deno.test("smart compartment: patient p1's token reaches p1's data only, whatever the request form", async () => {
  const op = await startOidcProvider({
    audience: AUDIENCE,
    scopes: [
      "patient/Observation.cruds",
      "patient/Patient.rs",
      "patient/Encounter.rs",
      "patient/Medication.rs",
      "patient/Provenance.rs",
      "patient/*.rs",
    ],
    claims: { patient: "p1" },
  });
  const server = startFhirStandIn([
    { resourceType: "Patient", id: "p1", name: [{ family: "One" }] },
    { resourceType: "Patient", id: "p2", name: [{ family: "Two" }] },
    obs("o1", "p1"),
    obs("o2", "p2"),
    obs("o3", "p2"), // moved to p1 below: its history holds p2's version
    obs("o4", "p1", { performer: [{ reference: "Practitioner/dr1" }] }),
    {
      resourceType: "Encounter",
      id: "e1",
      status: "finished",
      subject: { reference: "Patient/p1" },
    },
    {
      resourceType: "Encounter",
      id: "e2",
      status: "finished",
      subject: { reference: "Patient/p2" },
    },
    { resourceType: "Practitioner", id: "dr1", name: [{ family: "Who" }] },
    { resourceType: "Medication", id: "m1", code: { text: "aspirin" } },
    {
      resourceType: "Provenance",
      id: "pv1",
      target: [{ reference: "Observation/o1" }],
      recorded: "2026-01-01T00:00:00Z",
      agent: [{ who: { reference: "Practitioner/dr1" } }],
    },
  ]);
  server.versions.get("Observation/o3")!.push({ ...obs("o3", "p1"), meta: { versionId: "2" } });
  const gw = await startTestGateway(`
[endpoints.fhir]
service = "fhir"
[endpoints.fhir.options]
path_prefix = "/fhir"

[middleware.smart]
type = "jwt_auth"
[middleware.smart.options]
jwks_url = "${op.jwksUrl}"
issuer = "${op.issuer}"
audience = ["${AUDIENCE}"]
smart = true
smart_shared_types = ["Medication"]

[backends.server]
service = "fhir"
[backends.server.options]
base_url = "${server.url}"

[pipelines.fhir]
endpoints = ["fhir"]
middleware = ["smart"]
backends = ["server"]

[audit]
file = "audit/audit.jsonl"
flush_interval_ms = 20
`);
  try {
    const base = `${gw.url}/fhir`;
    const token = await op.token(
      "patient/Observation.cruds patient/Patient.rs patient/Encounter.rs patient/Medication.rs patient/Provenance.rs",
    );
    const call = async (
      method: string,
      path: string,
      init: { body?: string; headers?: Record<string, string> } = {},
    ) => {
      const res = await fetch(`${base}${path}`, {
        method,
        body: init.body,
        headers: {
          authorization: `Bearer ${token}`,
          ...(init.body ? { "content-type": "application/fhir+json" } : {}),
          ...init.headers,
        },
      });
      const text = await res.text();
      const body = text ? JSON.parse(text) : null;
      return { status: res.status, body, why: body?.issue?.[0]?.diagnostics ?? "" };
    };
    const seen = () => server.received.map((r) => `${r.method} ${r.path}${r.search}`);

    // 1. Refused before the server sees them (the review's request forms, and more).
    const before = server.received.length;
    const refusedUpfront: [string, string, RegExp, Record<string, string>?, string?][] = [
      ["GET", "/Observation/_history?patient=p1", /history of a whole type/],
      // No scope grants the whole server (patient/*.rs would, and the rules then refuse them).
      ["GET", "/_history?patient=p1", /no scope grants history on the whole server/],
      ["GET", "/?patient=p1", /no scope grants search on the whole server/],
      ["GET", "/Observation?code=x", /must name the patient/],
      ["GET", "/Observation?patient=p2", /patient=p2 is not the token's patient/],
      ["GET", "/Observation?patient=p1&_filter=subject%20eq%20Patient/p2", /_filter/],
      ["GET", "/Observation?patient=p1&_query=all", /_query/],
      ["GET", "/Patient?_id=p1&_has:Observation:patient:status=final", /_has/],
      ["GET", "/Observation?patient=p1&subject.name=Two", /chained parameter/],
      ["GET", "/Patient/p2", /not Patient\/p2/],
      ["GET", "/Patient/p1/$everything", /operation needs user\/\*\.\* or system\/\*\.\*/],
      ["GET", "/Observation/%24everything", /operation needs/],
      ["GET", "/Observation/_history/%2e%2e", /./], // normalized by URL parsing: not a read
      ["PUT", "/Observation?patient=p2", /conditional update/, {}, JSON.stringify(obs("x", "p1"))],
      ["DELETE", "/Observation?patient=p2", /conditional delete/],
      [
        "PATCH",
        "/Observation/o1",
        /PATCH/,
        { "content-type": "application/json-patch+json" },
        "[]",
      ],
      [
        "POST",
        "/Observation",
        /If-None-Exist: patient=p2 is not/,
        { "if-none-exist": "patient=p2" },
        JSON.stringify(obs("x", "p1")),
      ],
      ["POST", "/Observation", /does not belong|other than/, {}, JSON.stringify(obs("x", "p2"))],
    ];
    for (const [method, path, why, headers, body] of refusedUpfront) {
      const r = await call(method, path, { headers, body });
      assert(r.status === 403 || r.status === 404, `${method} ${path}: ${r.status} ${r.why}`);
      if (r.status === 403) assertMatch(r.why, why, `${method} ${path}`);
    }
    // With patient/*.rs, whole-server and non-compartment requests pass the scopes: the
    // compartment rules refuse them.
    const wide = await op.token("patient/*.rs");
    for (
      const [path, why] of [
        ["/_history?patient=p1", /history of a whole type or server/],
        ["/?patient=p1", /system-level search/],
        ["/Practitioner/dr1", /Practitioner is outside the patient compartment/],
        ["/Practitioner?name=Who", /outside the patient compartment/],
      ] as const
    ) {
      const r = await call("GET", path, { headers: { authorization: `Bearer ${wide}` } });
      assertEquals(r.status, 403, path);
      assertMatch(r.why, why, path);
    }
    // A path a server would read two ways, and a method override, are 400s.
    const slash = await call("GET", "/Observation/o1%2F..%2F..%2FPatient%2Fp2");
    assertEquals([slash.status, slash.body.issue[0].details.text], [400, "ambiguous_path"]);
    const override = await call("GET", "/Observation/o1", {
      headers: { "x-http-method-override": "DELETE" },
    });
    assertEquals([override.status, override.body.issue[0].details.text], [
      400,
      "method_override_refused",
    ]);
    // A POSTed search is checked on its form parameters too.
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const posted = await call("POST", "/Observation/_search", {
      headers: form,
      body: "patient=p2",
    });
    assertEquals(posted.status, 403);
    assertMatch(posted.why, /patient=p2 is not the token's patient/);
    // Two `subject` keys: checked on one, sent raw, the server could read the other.
    const twice = await call("POST", "/Observation", {
      body: '{"resourceType":"Observation","status":"final","code":{"text":"x"},' +
        '"subject":{"reference":"Patient/p1"},"subject":{"reference":"Patient/p2"}}',
    });
    assertEquals([twice.status, twice.body.issue[0].details.text], [400, "duplicate_json_key"]);
    assertEquals(seen().slice(before), [], "the server saw none of the refused requests");

    // 2. Forwarded, but the answer holds another patient's data: withheld, whole.
    for (
      const [path, why] of [
        ["/Observation/o2", /Observation\/o2 refers to a patient other than Patient\/p1/],
        ["/Observation/o3/_history", /Observation\/o3 refers to a patient other/],
        ["/Observation/o3/_history/1", /Observation\/o3 refers/],
        ["/Observation?patient=p1&_include=Observation:performer", /Practitioner\/dr1/],
        ["/Observation?patient=p1&_revinclude=Provenance:target", /Provenance\/pv1/],
      ] as const
    ) {
      const r = await call("GET", path);
      assertEquals(r.status, 403, path);
      assertMatch(r.why, why, path);
      assert(!JSON.stringify(r.body).includes('"Two"'), "no trace of p2's data");
    }

    const postedMine = await call("POST", "/Observation/_search", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "patient=p1",
    });
    assertEquals(postedMine.status, 200);
    assertEquals(postedMine.body.entry.length, 3);

    // 3. Writes by id read the target first; the write is bound to the version read.
    const beforeWrites = server.received.length;
    const hijack = await call("PUT", "/Observation/o2", { body: JSON.stringify(obs("o2", "p1")) });
    assertEquals(hijack.status, 403);
    assertMatch(hijack.why, /Observation\/o2 refers to a patient other/);
    const erase = await call("DELETE", "/Observation/o2");
    assertEquals(erase.status, 403);
    assertEquals(seen().slice(beforeWrites), ["GET /Observation/o2", "GET /Observation/o2"]);
    assertEquals(
      (server.current("Observation/o2")!.subject as { reference: string }).reference,
      "Patient/p2",
    );
    const move = await call("PUT", "/Observation/o1", { body: JSON.stringify(obs("o1", "p2")) });
    assertEquals(move.status, 403, "an update may not move a resource to another patient");
    const update = await call("PUT", "/Observation/o1", {
      body: JSON.stringify({ ...obs("o1", "p1"), status: "amended" }),
    });
    assertEquals(update.status, 200);
    const put = server.received.findLast((r) => r.method === "PUT")!;
    assertEquals(put.headers.get("if-match"), 'W/"1"', "bound to the version that was checked");

    // 4. What a SMART app does, through fhirclient: confined, and it works.
    const FHIR = await loadFhirClient();
    if (FHIR) {
      const app = FHIR.client({
        serverUrl: base,
        tokenResponse: { access_token: token, patient: "p1" },
      });
      assertEquals((await app.patient.read()).id, "p1");
      const mine = await app.patient.request("Observation");
      const ids = (mine.entry as { resource: FhirResource }[]).map((e) => e.resource.id).sort();
      assertEquals(ids, ["o1", "o3", "o4"]);
      const encounters = await app.patient.request("Encounter");
      assertEquals((encounters.entry as unknown[]).length, 1);
      assertEquals((await app.request("Medication/m1")).id, "m1");
      const created = await app.create(obs("ignored", "p1"));
      assert(typeof created.id === "string" && created.id.startsWith("new-"));
      const updated = await app.update({ ...created, status: "amended" });
      assertEquals(updated.status, "amended");
      await app.delete(`Observation/${created.id}`);
      assertEquals(server.current(`Observation/${created.id}`), undefined);
      // The app cannot read p2's observation, nor search another patient's.
      for (const url of ["Observation/o2", "Observation?patient=p2", "Patient/p2"]) {
        const err = await app.request(url).then(() => null, (e: { status?: number }) => e);
        assertEquals(err?.status, 403, url);
      }
    }

    // 5. Refusals after authentication are logged and audited with who asked.
    const auditFile = `${gw.dir}/audit/audit.jsonl`;
    type AuditRecord = {
      status: number;
      error_code?: string;
      subject?: string;
      client_id?: string;
    };
    const trail = async () =>
      (await Deno.readTextFile(auditFile).catch(() => "")).split("\n").filter(Boolean)
        .map((l) => JSON.parse(l) as AuditRecord);
    await waitFor(async () => (await trail()).some((r) => r.status === 403), {
      timeoutMs: 5_000,
      description: "403 records in the audit trail",
    });
    const refusals = (await trail()).filter((r) => r.error_code === "insufficient_scope");
    assert(refusals.length >= refusedUpfront.length, `${refusals.length} refusals audited`);
    for (const r of refusals) assertEquals([r.subject, r.client_id], ["lab", "lab"]);
  } finally {
    await gw.stop();
    await server.stop();
    await op.stop();
  }
});
