/**
 * Message tracking over HTTP, end to end in a gateway: a request through an api_key middleware to
 * a real HTTP upstream is recorded with its stages (content encrypted at rest), found by search,
 * shown to viewers without content and to operators with it (audited), replayed (to the
 * upstream, without the client's key) and resent with an edited body (audited with who and the
 * edit's hash, never the content). Roles: viewer tokens cannot see content or replay.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { trackingTable, waitForTracked, writeTrackingIdentity } from "./support/tracking.ts";
import { dicomwebPipelineToml, waitFor } from "./support/mod.ts";

const API_KEY = "lab-key-0123456789";
const VIEWER = "viewer-token-0123456789abcdef0123456789";
const OPERATOR = "operator-token-0123456789abcdef012345678";
const MARKER = "PATIENT-MARKER-7731";

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("tracking over HTTP: record, search, roles, content view, replay, edit and resend", async () => {
  const upstream = startUpstream();
  const dir = await Deno.makeTempDir({ prefix: "tracking-http-" });
  const identity = await writeTrackingIdentity(dir);
  await Deno.writeTextFile(`${dir}/viewer-token`, VIEWER);
  await Deno.writeTextFile(`${dir}/operator-token`, OPERATOR);
  const gw = await startTestGateway(
    `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"

[middleware.key]
type = "api_key"
[middleware.key.options]
keys = { lab = "sha256:${await sha256Hex(API_KEY)}" }
query_param = "key"

[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${upstream.url}"

[pipelines.p]
endpoints = ["in"]
middleware = ["key"]
backends = ["lab"]
[pipelines.p.tracking]
content = ["received", "after_middleware", "backend_request", "backend_response"]

[management.tokens.look]
role = "viewer"
token_file = "${dir}/viewer-token"
[management.tokens.ops]
role = "operator"
token_file = "${dir}/operator-token"

[audit]
file = "${dir}/audit.jsonl"
${trackingTable(dir, identity)}
`,
    { workers: 1 },
  );
  const as = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${gw.mgmt}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body ? { "content-type": "application/json" } : {}),
      },
    });
  try {
    const sent = JSON.stringify({ resourceType: "Observation", marker: MARKER });
    const res = await fetch(`${gw.url}/in/orders?x=1&key=${API_KEY}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: sent,
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();

    type Msg = { id: string; status: number; stages: string[]; backends: { name: string }[] };
    const search = async (token: string, q: string) => {
      const r = await as(token, `/admin/tracking/messages?${q}`);
      assertEquals(r.status, 200, await r.clone().text());
      return (await r.json()).messages as Msg[];
    };
    const [msg] = await waitForTracked(() => search(VIEWER, "pipeline=p"));
    assertEquals(msg.status, 200);
    assertEquals(msg.backends.map((b) => b.name), ["lab"]);
    assertEquals(msg.stages, [
      "received",
      "after_middleware",
      "backend_request:lab",
      "backend_response:lab",
    ]);
    // A search alias over the middleware's identity; a status class; nothing for another subject.
    assertEquals((await search(VIEWER, "subject=lab&status=2xx")).length, 1);
    assertEquals((await search(VIEWER, "subject=nobody")).length, 0);

    // Content is encrypted at rest: the database and its WAL never hold the body in the clear.
    for (const name of ["messages.db", "messages.db-wal"]) {
      const bytes = await Deno.readFile(`${dir}/tracking-store/${name}`).catch(() => null);
      if (bytes) assert(!new TextDecoder("latin1").decode(bytes).includes(MARKER), name);
    }

    // Viewers see metadata, not content; they cannot replay.
    const meta = await (await as(VIEWER, `/admin/tracking/messages/${msg.id}`)).json();
    assertEquals(meta.content, undefined);
    assertEquals((await as(VIEWER, `/admin/tracking/messages/${msg.id}?content=1`)).status, 403);
    const refused = await as(VIEWER, `/admin/tracking/messages/${msg.id}/replay`, {
      method: "POST",
      body: "{}",
    });
    assertEquals(refused.status, 403);
    assertEquals((await refused.json()).error.code, "forbidden");

    // Operators see each stage, credentials left out.
    const detail = await (await as(OPERATOR, `/admin/tracking/messages/${msg.id}?content=1`))
      .json();
    const received = detail.content.find((s: { stage: string }) => s.stage === "received");
    assertEquals(received.view.kind, "json");
    assertEquals(received.view.text, sent);
    assertEquals(received.query, `?x=1&key=${API_KEY}`);
    assertEquals(received.headers["x-api-key"], undefined);
    const answer = detail.content.find((s: { stage: string }) => s.stage === "backend_response");
    assertEquals(answer.status, 200);
    assertMatch(answer.view.text, /"path":"\/orders"/);

    // Replay: through the pipeline again (its api_key skipped), to the upstream.
    const replay = await as(OPERATOR, `/admin/tracking/messages/${msg.id}/replay`, {
      method: "POST",
      body: "{}",
    });
    assertEquals(replay.status, 200, await replay.clone().text());
    const outcome = await replay.json();
    assertEquals(outcome.status, 200);
    assertEquals(outcome.replay_of, msg.id);
    assertEquals(upstream.received.length, 2);
    assertEquals(new TextDecoder().decode(upstream.received[1].body), sent);
    // The key the skipped api_key middleware would have taken off is not sent on.
    assertEquals(new URL(upstream.received[0].url).search, "?x=1");
    assertEquals(new URL(upstream.received[1].url).search, "?x=1");

    // Edit and resend: the upstream gets the edited body.
    const edited = JSON.stringify({ resourceType: "Observation", marker: "EDITED" });
    const resend = await as(OPERATOR, `/admin/tracking/messages/${msg.id}/resend`, {
      method: "POST",
      body: JSON.stringify({ body: edited, backend: "lab" }),
    });
    assertEquals(resend.status, 200, await resend.clone().text());
    assertEquals(new TextDecoder().decode(upstream.received[2].body), edited);

    // The replays are tracked too, marked with what they replay and who asked.
    const all = await waitForTracked(() => search(VIEWER, "pipeline=p"), 3);
    const replays = all.filter((m) =>
      (m as unknown as { replay_of?: string }).replay_of === msg.id
    );
    assertEquals(replays.length, 2);
    assertEquals(
      replays.map((m) => (m as unknown as { actor: string }).actor),
      ["ops", "ops"],
    );

    // The audit trail has each act, who did it and the edit's hash; never the content.
    let audit = "";
    await waitFor(async () => {
      audit = await Deno.readTextFile(`${dir}/audit.jsonl`).catch(() => "");
      return audit.includes("tracking.resent");
    }, { timeoutMs: 5000, description: "the resend in the audit trail" });
    const acts = audit.trim().split("\n").map((l) => JSON.parse(l)).filter((e) =>
      String(e.event).startsWith("tracking.")
    );
    assertEquals(acts.map((e) => e.event), [
      "tracking.content_viewed",
      "tracking.replayed",
      "tracking.resent",
    ]);
    for (const e of acts) {
      assertEquals(e.actor, "ops");
      assertEquals(e.actor_role, "operator");
      assertEquals(e.message_id, msg.id);
    }
    assertEquals(acts[2].edited_sha256, await sha256Hex(edited));
    // The viewer's two refused asks (content, replay) are there too, with who asked.
    const refusals = audit.trim().split("\n").map((l) => JSON.parse(l)).filter((e) =>
      e.event === "management.refused"
    );
    assertEquals(
      refusals.map((e) => [e.actor, e.actor_role, e.method, e.path, e.status]),
      [
        ["look", "viewer", "GET", `/admin/tracking/messages/${msg.id}`, 403],
        ["look", "viewer", "POST", `/admin/tracking/messages/${msg.id}/replay`, 403],
      ],
    );
    assert(!audit.includes(MARKER) && !audit.includes("EDITED"), "content in the audit trail");
  } finally {
    await gw.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tracking over DICOMweb: a QIDO search recorded with the study UID of its path", async () => {
  const upstream = startUpstream(() =>
    new Response("[]", { headers: { "content-type": "application/dicom+json" } })
  );
  const dir = await Deno.makeTempDir({ prefix: "tracking-dicomweb-" });
  const identity = await writeTrackingIdentity(dir);
  const gw = await startTestGateway(`${dicomwebPipelineToml("dw", upstream.url)}
[pipelines.dw.tracking]
content = ["backend_response"]
${trackingTable(dir, identity)}
`);
  try {
    const study = "1.2.826.0.1.3680043.8.498.1";
    const res = await fetch(`${gw.url}/dw/studies/${study}/series`, {
      headers: { accept: "application/dicom+json" },
    });
    assertEquals(res.status, 200, await res.clone().text());
    await res.body?.cancel();
    const [msg] = await waitForTracked(async () =>
      (await (await gw.mgmtFetch(`/admin/tracking/messages?study_uid=${study}`)).json()).messages
    );
    assertEquals((msg as { method: string }).method, "GET");
    assertEquals(upstream.received.length, 1);
  } finally {
    await gw.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
