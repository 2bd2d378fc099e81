/**
 * Message tracking of FHIR requests and of delivery queues' dead letters:
 *
 * - a FHIR create through a `fhir` endpoint and backend to a FHIR server stand-in is recorded with
 *   its FHIR type (found by `fhir_type`), replayed (the server gets a second Patient) and resent
 *   edited (the server gets the edited name);
 * - a queued backend's dead letter is viewed with its content (operators only, audited) and
 *   retried once the upstream is fixed.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { startFhirStandIn } from "./support/fhir_standin.ts";
import { waitFor } from "./support/mod.ts";
import { trackingTable, waitForTracked, writeTrackingIdentity } from "./support/tracking.ts";

Deno.test("tracking over FHIR: a create recorded, found by type, replayed and resent edited", async () => {
  const server = startFhirStandIn([]);
  const dir = await Deno.makeTempDir({ prefix: "tracking-fhir-" });
  const identity = await writeTrackingIdentity(dir);
  const gw = await startTestGateway(`
[endpoints.fhir]
service = "fhir"
[endpoints.fhir.options]
path_prefix = "/fhir"

[backends.server]
service = "fhir"
[backends.server.options]
base_url = "${server.url}"

[pipelines.fhir]
endpoints = ["fhir"]
backends = ["server"]
[pipelines.fhir.tracking]
content = ["received", "backend_response"]
${trackingTable(dir, identity)}
`);
  try {
    const patient = { resourceType: "Patient", name: [{ family: "Tracked" }] };
    const res = await fetch(`${gw.url}/fhir/Patient`, {
      method: "POST",
      headers: { "content-type": "application/fhir+json" },
      body: JSON.stringify(patient),
    });
    assertEquals(res.status, 201, await res.clone().text());
    await res.body?.cancel();

    type Msg = { id: string; status: number; metadata: Record<string, string> };
    const search = async (q: string) =>
      (await (await gw.mgmtFetch(`/admin/tracking/messages?${q}`)).json()).messages as Msg[];
    const [msg] = await waitForTracked(() => search("fhir_type=Patient"));
    assertEquals(msg.status, 201);
    assertEquals(msg.metadata["fhir.resource_type"], "Patient");

    const detail = await (await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}?content=1`))
      .json();
    const answer = detail.content.find((s: { stage: string }) => s.stage === "backend_response");
    assertEquals(answer.status, 201);
    assertEquals(answer.view.kind, "json");
    assertMatch(answer.view.text, /"id":"new-1"/);

    const replay = await (await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}/replay`, {
      method: "POST",
      body: "{}",
    })).json();
    assertEquals(replay.status, 201, JSON.stringify(replay));
    assertEquals(server.current("Patient/new-2")?.name, patient.name);

    const edited = { resourceType: "Patient", name: [{ family: "Corrected" }] };
    const resend = await (await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}/resend`, {
      method: "POST",
      body: JSON.stringify({ body: JSON.stringify(edited), content_type: "application/fhir+json" }),
    })).json();
    assertEquals(resend.status, 201, JSON.stringify(resend));
    assertEquals(server.current("Patient/new-3")?.name, edited.name);
  } finally {
    await gw.stop();
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dead letters: content shown to operators (audited), retried once the upstream is fixed", async () => {
  let status = 400;
  const upstream = startUpstream(() => new Response("refused", { status }));
  const dir = await Deno.makeTempDir({ prefix: "tracking-dead-" });
  await Deno.writeTextFile(`${dir}/viewer`, "viewer-token-0123456789abcdef0123456789");
  const gw = await startTestGateway(`
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${upstream.url}"
[backends.lab.queue]
dir = "${dir}/queue"
initial_backoff_ms = 50
[pipelines.p]
endpoints = ["in"]
backends = ["lab"]
[pipelines.p.tracking]
[tracking]
path = "${dir}/tracking-store"
flush_interval_ms = 20
[management.tokens.look]
role = "viewer"
token_file = "${dir}/viewer"
[audit]
file = "${dir}/audit.jsonl"
`);
  try {
    const res = await fetch(`${gw.url}/in/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"order":"DL-1"}',
    });
    assertEquals(res.status, 202);
    const { delivery_id } = await res.json();
    // The tracked request names its delivery: found by it.
    const [tracked] = await waitForTracked(async () =>
      (await (await gw.mgmtFetch(`/admin/tracking/messages?delivery_id=${delivery_id}`)).json())
        .messages as { status: number }[]
    );
    assertEquals(tracked.status, 202);
    await waitFor(async () => {
      const r = await gw.mgmtFetch("/admin/queues/lab/messages?state=dead");
      return (await r.json()).messages.length === 1;
    }, { timeoutMs: 10_000, description: "the dead letter" });

    const path = `/admin/queues/lab/messages/${delivery_id}/content`;
    const viewer = await fetch(`${gw.mgmt}${path}`, {
      headers: { authorization: "Bearer viewer-token-0123456789abcdef0123456789" },
    });
    assertEquals(viewer.status, 403);
    await viewer.body?.cancel();
    const letter = await (await gw.mgmtFetch(path)).json();
    assertEquals(letter.state, "dead");
    assertEquals(letter.view.kind, "json");
    assertEquals(letter.view.text, '{"order":"DL-1"}');

    status = 200;
    const retried = await (await gw.mgmtFetch("/admin/queues/lab/retry", {
      method: "POST",
      body: JSON.stringify({ id: delivery_id }),
    })).json();
    assertEquals(retried.requeued, 1);
    await waitFor(() => Promise.resolve(upstream.received.length >= 2), {
      timeoutMs: 10_000,
      description: "the retried delivery",
    });
    let audit = "";
    await waitFor(async () => {
      audit = await Deno.readTextFile(`${dir}/audit.jsonl`).catch(() => "");
      return audit.includes("queue.dead_letter_viewed");
    }, { timeoutMs: 5000, description: "the view in the audit trail" });
    const view = audit.trim().split("\n").map((l) => JSON.parse(l))
      .find((e) => e.event === "queue.dead_letter_viewed");
    assertEquals(view.message_id, delivery_id);
    assertEquals(view.backend, "lab");
    assertEquals(audit.includes("DL-1"), false);
  } finally {
    await gw.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
